import AssetStore
import Foundation

/// The upload engine: the write side of a library — change requests (imports, shared-property edits, content
/// edits, trash) committed locally, then sent to the bucket in the background: originals (resumable multipart
/// uploads), sidecars, and the journal entries that tell other libraries; the trash emptied with deletes of the
/// exact versions the library decided on.
///
/// Owns: the background worker and what it tracks (``UploadQueue``: uploads in flight, sources noted, the pass
/// gate). Edits' revisions are shared by the edit engine; the journal is written by the ``JournalOutbox``.
final class UploadEngine: LibraryEngine {
    let context: LibraryContext
    let edits: EditEngine
    let journal: JournalOutbox
    let queue = UploadQueue()
    /// One round of sending albums and folders at a time (the worker's and a sync's would otherwise send the same
    /// change twice).
    let collectionGate = SerialGate()

    init(context: LibraryContext, edits: EditEngine, journal: JournalOutbox) {
        self.context = context
        self.edits = edits
        self.journal = journal
    }

    /// Whether the background worker may send now: an endpoint, an open library, background transfers on and
    /// the network policy `.allowed`.
    var mayUploadInBackground: Bool {
        remote != nil && !isClosed && configuration.startsBackgroundTransfers && isNetworkAllowed(userRequest: false)
    }

    /// Wakes the background worker when background transfers are on.
    func wakeIfBackground() {
        if configuration.startsBackgroundTransfers { queue.wake(self) }
    }
}
