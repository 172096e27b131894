import AssetStore
import Foundation

/// The edit engine: non-destructive content edits (PhotoKit's content editing) — staging an editor's output,
/// committing it as a new revision, serving rendered versions, sharing revisions through the bucket and adopting
/// those of other libraries.
///
/// Owns: the gate that keeps one sharing pass at a time (a revert's pass must see every revision an earlier pass
/// is still sending as shared, or it would leave that revision's objects in the bucket). Rendered files are read
/// and written under the originals cache's download locks.
final class EditEngine: Sendable {
    let configuration: AssetLibrary.Configuration
    let catalog: Catalog
    let files: LocalFiles
    let lock: LibraryLock
    let remote: LibraryRemote?
    let telemetry: LibraryTelemetry
    let network: NetworkPermission
    let cache: OriginalsCache
    let journal: JournalOutbox
    /// One pass of ``shareEditRevisions()`` at a time.
    let shareGate = SerialGate()

    init(
        configuration: AssetLibrary.Configuration, catalog: Catalog, files: LocalFiles, lock: LibraryLock,
        remote: LibraryRemote?, telemetry: LibraryTelemetry, network: NetworkPermission, cache: OriginalsCache,
        journal: JournalOutbox
    ) {
        self.configuration = configuration
        self.catalog = catalog
        self.files = files
        self.lock = lock
        self.remote = remote
        self.telemetry = telemetry
        self.network = network
        self.cache = cache
        self.journal = journal
    }
}
