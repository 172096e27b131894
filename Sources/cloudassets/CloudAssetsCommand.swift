import ArgumentParser
import CommandLineSupport
import Foundation

/// `cloudassets`: the root command, which only names the subcommands (one file each, `<Name>Command.swift`).
@main
struct CloudAssetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloudassets",
        abstract: "Work with a photo library whose originals live in an S3 bucket.",
        subcommands: [
            Demo.self, Sync.self, List.self, Get.self, Add.self, Remove.self, Restore.self, EmptyTrash.self,
            Favorite.self, Unfavorite.self, Hide.self, Unhide.self, ContentEdit.self, Revert.self, Pin.self, Unpin.self,
            Evict.self, Watch.self,
            Image.self, Thumbnail.self, Serve.self, Status.self, Doctor.self, ExitCodes.self,
        ])

    // Not `CommandConfiguration(version:)`: that would add a second `--version` to every subcommand's help, and
    // `get --version original` is `get`'s own option.
    @Flag(help: "Print the package version (\(PackageVersion.current)) and exit.") var version = false

    /// `cloudassets --version` prints the version; `cloudassets` alone prints the help.
    func run() throws {
        guard version else { throw CleanExit.helpRequest(self) }
        print(PackageVersion.current)
    }

    /// Parses and runs the command, ending with a status of ``ExitStatus``: help exits 0; a command line that does
    /// not parse or validate (an unknown flag or subcommand, a missing argument or value, a bad value) exits
    /// ``ExitStatus/usage`` (2) with one `error:` line, not ArgumentParser's own 64 (EX_USAGE); an error a command
    /// throws exits ``ExitStatus/of(_:)``.
    static func main() async {
        await main(arguments: Array(CommandLine.arguments.dropFirst()))
    }

    static func main(arguments: [String]) async {
        await runReportingOneLine(
            arguments: arguments,
            usageLine: { message in
                let lowered = message.prefix(1).lowercased() + message.dropFirst()
                let subcommand = configuration.subcommands.map { $0._commandName }.first { arguments.first == $0 }
                return "\(lowered) (see 'cloudassets \(subcommand.map { $0 + " " } ?? "")--help')"
            },
            usageStatus: ExitStatus.usage.rawValue,
            failure: { error in
                Terminal.shared.endLive()
                return (UserMessage.describe(error), ExitStatus.of(error).rawValue)
            })
    }
}
