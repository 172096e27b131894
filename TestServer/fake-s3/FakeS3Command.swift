import ArgumentParser
import CommandLineSupport
import Foundation

/// `fake-s3`: run the bundled S3-compatible server, or seed a sample photo library for it.
@main
struct FakeS3Command: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-s3",
        abstract: "An S3-compatible server for tests and demos.",
        version: PackageVersion.current,
        subcommands: [ServeCommand.self, SeedCommand.self])

    /// Parses and runs; a command line that does not parse or validate exits 2 with one `error:` line on
    /// stderr (help exits 0), a failure while running exits 1 with one `error:` line.
    static func main() async {
        await runReportingOneLine(
            arguments: Array(CommandLine.arguments.dropFirst()), failure: { error in ("\(error)", 1) })
    }
}
