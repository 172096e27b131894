import ArgumentParser
import Foundation

/// `fake-s3`: run the bundled S3-compatible server, or seed a sample photo library for it.
@main
struct FakeS3Command: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-s3",
        abstract: "An S3-compatible server for tests and demos.",
        subcommands: [ServeCommand.self, SeedCommand.self])

    /// Parses and runs; a command line that does not parse or validate exits 2 with one `error:` line on
    /// stderr (help exits 0), a failure while running exits 1 with one `error:` line.
    static func main() async {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            let message = message(for: error).split(whereSeparator: \.isNewline).joined(separator: "; ")
            FileHandle.standardError.write(Data("error: \(message)\n".utf8))
            Foundation.exit(2)
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
            if exitCode(for: error) == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            Foundation.exit(1)
        }
        Foundation.exit(0)
    }
}
