import AssetStore
import Foundation

/// The upload engine: the write side of a library — change requests (imports, shared-property edits, content
/// edits, trash) committed locally, then sent to the bucket in the background: originals (resumable multipart
/// uploads), sidecars, and the journal entries that tell other libraries; the trash emptied with deletes of the
/// exact versions the library decided on.
///
/// Owns: the background worker and what it tracks (``UploadQueue``: uploads in flight, sources noted, the pass
/// gate). Edits' revisions are shared by the edit engine; the journal is written by the ``JournalOutbox``.
final class UploadEngine: Sendable {
    let configuration: AssetLibrary.Configuration
    let catalog: Catalog
    let files: LocalFiles
    let lock: LibraryLock
    let remote: LibraryRemote?
    let telemetry: LibraryTelemetry
    let network: NetworkPermission
    let edits: EditEngine
    let journal: JournalOutbox
    let queue = UploadQueue()

    /// The upload worker is running.
    var isActive: Bool { queue.isActive }

    /// Stops the upload worker (the library closed); an upload in flight is cancelled and resumes at the next
    /// open.
    func close() { queue.close() }
    /// One round of sending albums and folders at a time (the worker's and a sync's would otherwise send the same
    /// change twice).
    let collectionGate = SerialGate()

    init(
        configuration: AssetLibrary.Configuration, catalog: Catalog, files: LocalFiles, lock: LibraryLock,
        remote: LibraryRemote?, telemetry: LibraryTelemetry, network: NetworkPermission, edits: EditEngine,
        journal: JournalOutbox
    ) {
        self.configuration = configuration
        self.catalog = catalog
        self.files = files
        self.lock = lock
        self.remote = remote
        self.telemetry = telemetry
        self.network = network
        self.edits = edits
        self.journal = journal
    }

    /// Whether the background worker may send now: an endpoint, an open library, background transfers on and
    /// the network policy `.allowed`.
    var mayUploadInBackground: Bool {
        remote != nil && !catalog.isClosed && configuration.startsBackgroundTransfers
            && network.allows(userRequest: false)
    }

    /// Wakes the background worker when background transfers are on.
    func wakeIfBackground() {
        if configuration.startsBackgroundTransfers { queue.wake(self) }
    }
}
