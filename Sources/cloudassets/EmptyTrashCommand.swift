import ArgumentParser

/// `cloudassets empty-trash`: deletes the trashed assets' objects from the bucket.
struct EmptyTrash: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "empty-trash", abstract: "Purge the trash: delete its assets' objects from the bucket.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(runsDownloads: false)
            defer { library.close() }
            let purged = try await withInterrupt { try await library.emptyTrash() }
            if !global.quiet { Terminal.shared.out("purged \(purged) asset(s)") }
        }
    }
}
