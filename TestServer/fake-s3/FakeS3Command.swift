import ArgumentParser

/// `fake-s3`: run the bundled S3-compatible server, or seed a sample photo library for it.
@main
struct FakeS3Command: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-s3",
        abstract: "An S3-compatible server for tests and demos.",
        subcommands: [ServeCommand.self, SeedCommand.self])
}
