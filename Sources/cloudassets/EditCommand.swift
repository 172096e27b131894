import ArgumentParser
import CloudAssets

/// The commands that change shared properties of assets named by id or key: one change, then the edits go to the
/// bucket (unless --no-wait), as every change of the command line does (``sendChange(_:noWait:)``). An edit that
/// cannot reach the bucket now is kept and sent by the next sync (a note says so; the command still succeeds: the
/// change is made).
protocol EditCommand: AsyncParsableCommand {
    var global: GlobalOptions { get }
    var edit: EditOptions { get }
    func record(_ assets: [Asset], in changes: AssetChangeRequests)
    /// Checks, once the change was sent, that it held for every asset; throws what did not (none by default).
    func verify(_ assets: [Asset], in library: AssetLibrary) throws
}

extension EditCommand {
    /// Records the change on the named assets (trashed ones included), then, unless `--no-wait` or offline, waits
    /// for it to reach the bucket (``openLibraryForChange(_:noWait:runsDownloads:)``, ``sendChange(_:noWait:)``).
    func runEdit() async throws {
        try await runReportingErrors {
            let library = try await openLibraryForChange(global, noWait: edit.noWait)
            defer { library.close() }
            let targets = try edit.selection.resolve(in: library, includingTrash: true)
            try await library.performChanges { record(targets, in: $0) }
            try await sendChange(library, noWait: edit.noWait)
            try verify(targets, in: library)
        }
    }

    func verify(_ assets: [Asset], in library: AssetLibrary) throws {}
}
