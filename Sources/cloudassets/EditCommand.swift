import ArgumentParser
import CloudAssets

/// The commands that change shared properties of assets named by id or key: one change, then the edits go to the
/// bucket (unless --no-wait). An edit that cannot reach the bucket now is kept and sent by the next sync (a note
/// says so; the command still succeeds: the change is made).
protocol EditCommand: AsyncParsableCommand {
    var global: GlobalOptions { get }
    var edit: EditOptions { get }
    func record(_ assets: [Asset], in changes: AssetChangeRequests)
    /// Checks, once the change was sent, that it held for every asset; throws what did not (none by default).
    func verify(_ assets: [Asset], in library: AssetLibrary) throws
}

extension EditCommand {
    /// Records the change on the named assets (trashed ones included), then, unless `--no-wait` or offline, waits
    /// for it to reach the bucket.
    func runEdit() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(runsDownloads: false)
            defer { library.close() }
            let targets = try edit.selection.resolve(in: library, includingTrash: true)
            try await library.performChanges { record(targets, in: $0) }
            try await finishEdit(library, noWait: edit.noWait)
            try verify(targets, in: library)
        }
    }

    func verify(_ assets: [Asset], in library: AssetLibrary) throws {}
}
