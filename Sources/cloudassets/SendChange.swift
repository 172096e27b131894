import CloudAssets

// The one rule for every change the command line makes (`rm`, `restore`, `favorite`, `unfavorite`, `hide`,
// `unhide`, `edit`, `revert`, `add` and every `album` change): the change is made here in one step, then sent to the
// bucket before the command exits — unless `--no-wait`, or under the offline network policy, where a note says it
// stays here until a sync. Another bucket than the library's is refused before anything is changed (exit 12, as
// `sync` refuses it); a bucket that cannot be reached keeps the change here, says so, and the command succeeds.

/// Whether a change made now goes to the bucket before the command exits: not with `--no-wait`, nor offline.
func sendsNow(_ library: AssetLibrary, noWait: Bool) -> Bool {
    !noWait && library.networkPolicy != .offline
}

/// Opens the library for a command that makes a change and sends it: when the change is to be sent now, a bucket
/// other than the library's is refused here, before anything is changed.
func openLibraryForChange(_ global: GlobalOptions, noWait: Bool, runsDownloads: Bool = false) async throws
    -> AssetLibrary
{
    let library = try await global.openLibrary(runsDownloads: runsDownloads)
    if sendsNow(library, noWait: noWait) {
        do {
            try library.checkBinding()
        } catch {
            library.close()
            throw error
        }
    }
    return library
}

/// The note of a change that stays here because the network policy is offline.
func noteOfflineChange() {
    Terminal.shared.err("note: the change is recorded here; the network policy is offline, so the next sync sends it")
}

/// After the change: sends it to the bucket (edits, albums and folders, uploads) and waits for it; says so when it
/// could not reach the bucket, or when it stays here because the policy is offline. Nothing with `--no-wait`.
func sendChange(_ library: AssetLibrary, noWait: Bool) async throws {
    guard !noWait else { return }
    guard library.networkPolicy != .offline else { return noteOfflineChange() }
    _ = try await withInterrupt { await library.waitForUploads() }
    let uploads = try library.uploads
    if uploads.unsharedEdits > 0 || uploads.unsharedContentEdits > 0 || uploads.unsharedCollections > 0 {
        Terminal.shared.err(
            "note: the change is recorded here but could not reach the bucket yet; the next sync sends it")
    }
}
