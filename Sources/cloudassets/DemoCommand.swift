import ArgumentParser
import CloudAssets
import FakeS3
import Foundation

/// `cloudassets demo`: the whole engine against the bundled fake S3 server (see ``DemoRun``).
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the engine against the bundled fake S3 server.")
    @Option(help: "Library folder (default: a temporary folder, removed at the end).") var store: String?
    @Option(help: "Number of sample assets.") var assets = 300
    @Flag(name: .shortAndLong, help: "Less output.") var quiet = false

    func validate() throws {
        if store == "" { throw ValidationError("--store is empty: give a folder, or leave it out for a temporary one") }
    }

    func run() async throws {
        try await runReportingErrors {
            try await DemoRun(storePath: store, assetCount: assets, quiet: quiet).run()
        }
    }
}
