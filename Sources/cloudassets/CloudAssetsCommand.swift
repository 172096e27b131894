import ArgumentParser
import Foundation

@main
struct CloudAssetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloudassets",
        abstract: "Work with a photo library whose originals live in an S3 bucket.",
        subcommands: [
            Demo.self, Sync.self, List.self, Get.self, Pin.self, Unpin.self, Evict.self, Watch.self, Status.self,
            ExitCodes.self,
        ])

    /// Parses and runs the command, ending with a status of ``ExitStatus``: help and version exit 0, a command
    /// line that does not parse exits 2 with one `error:` line (ArgumentParser's own default would be 64).
    static func main() async {
        await main(arguments: Array(CommandLine.arguments.dropFirst()))
    }

    static func main(arguments: [String]) async {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            exitForParseError(error, arguments: arguments)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            if exitCode(for: error) == .success {  // help asked for by running a command group
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            Terminal.shared.err("error: \(UserMessage.describe(error))")
            Foundation.exit(ExitStatus.of(error).rawValue)
        }
        Foundation.exit(0)
    }

    /// Help and `--version` print and exit 0; every other parse or validation error is one line, exit 2.
    private static func exitForParseError(_ error: any Error, arguments: [String]) -> Never {
        if exitCode(for: error) == .success {
            print(fullMessage(for: error))
            Foundation.exit(0)
        }
        let message = message(for: error).split(whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }.joined(separator: "; ")
        let lowered = message.prefix(1).lowercased() + message.dropFirst()
        let subcommand = configuration.subcommands.map { $0._commandName }.first { arguments.first == $0 }
        let help = "see 'cloudassets \(subcommand.map { $0 + " " } ?? "")--help'"
        Terminal.shared.err("error: \(lowered) (\(help))")
        Foundation.exit(ExitStatus.usage.rawValue)
    }
}
