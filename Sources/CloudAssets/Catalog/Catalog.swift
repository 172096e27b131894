import AssetStore
import Essentials
import Foundation

/// The catalog engine: the local store, the order of its commits, and their delivery to observers — this
/// library's own commits and those of other libraries on the same folder (in this process or another), read from
/// the store's history when the catalog changes on disk.
///
/// Owns: the store, the observer registry, the delivery position and the closed flag (one lock box, so that a
/// commit and its delivery happen in one critical section), the catalog watcher, and the cached device
/// identifier. Every other engine writes through ``performWrite(_:)``; none delivers changes itself.
final class Catalog: Sendable {
    let store: AssetStore
    let observers = ObserverRegistry()
    /// Whether assets handed out carry their location (``AssetLibrary/Configuration/locationAccess``).
    let revealsLocation: Bool
    /// The originals' prefix when folders of keys show as albums (``AssetLibrary/Configuration/keyFoldersAsAlbums``),
    /// else `nil`.
    let keyFolderRoot: String?
    /// The folders of keys as albums, built once per commit.
    let keyFolderCache = CollectionCatalog.KeyFolderCache()
    private let maxIncrementalChangeCount: Int
    /// Serialises commit + delivery so observers get changes in commit order; holds whether the library is
    /// closed and the last change token delivered (commits of other libraries on this folder included).
    private let writeOrder: LockedBox<(closed: Bool, delivered: Int64)>
    /// Wakes the catalog when another library (in any process) commits to the same folder.
    private let watcher = LockedBox<CatalogWatcher?>(nil)
    /// This library's device identifier, read from (or made in) the catalog once.
    private let deviceID = LockedBox<String?>(nil)
    /// Where async code's writes run.
    let writer = CatalogWriter()

    init(store: AssetStore, configuration: AssetLibrary.Configuration) {
        self.store = store
        self.revealsLocation = configuration.locationAccess == .granted
        self.keyFolderRoot = configuration.keyFoldersAsAlbums ? configuration.layout.originalsPrefix : nil
        self.maxIncrementalChangeCount = configuration.maxIncrementalChangeCount
        self.writeOrder = LockedBox((false, store.currentToken.rawValue))
    }

    /// Starts delivering the commits other libraries make to the catalog in `folder`.
    func startWatching(folder: URL) {
        let watcher = CatalogWatcher(folder: folder) { [weak self] in self?.deliverCommitsOfOtherLibraries() }
        self.watcher.withLock { $0 = watcher }
    }

    var isClosed: Bool { writeOrder.withLock { $0.closed } }

    /// Marks the catalog closed (no write is taken afterwards), stops the watcher and finishes every stream.
    /// Returns whether it was open. Idempotent.
    @discardableResult
    func close() -> Bool {
        let wasOpen = writeOrder.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard wasOpen else { return false }
        watcher.withLock { $0 }?.stop()
        observers.close()
        return true
    }

    deinit { watcher.withLock { $0 }?.stop() }

    /// Runs `body` in one store transaction, commits it, and — when it changed something — delivers one
    /// ``LibraryChange`` to every observer and stream, serially and in commit order.
    ///
    /// Must not be called from inside `body` (one writer). When `body` throws, nothing is committed or delivered.
    /// Throws ``AssetLibraryError/closed`` once the catalog is closed. Blocks the calling thread on the commit lock
    /// and SQLite's write: for code that is not async (a public synchronous call, a dispatch queue); the compiler
    /// refuses it in async code, which awaits the async form.
    @available(*, noasync, message: "blocks its thread; async code awaits the async performWrite")
    @discardableResult
    func performWrite<T: Sendable>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try commit(body)
    }

    /// The commit ``performWrite(_:)`` makes, on the calling thread.
    private func commit<T: Sendable>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try writeOrder.withLock { state in
            if state.closed { throw AssetLibraryError.closed }
            let (value, changes) = try store.write(body)
            if !changes.isEmpty {
                Self.commitCounter?.withLock { $0 += 1 }
                // Commits of other libraries that came before this one are delivered first, in token order.
                deliverHistory(after: state.delivered, before: changes.token.rawValue)
                observers.deliver(
                    visible(
                        LibraryChange(
                            changes: changes, store: store, maxIncrementalChangeCount: maxIncrementalChangeCount,
                            revealsLocation: revealsLocation)))
                state.delivered = changes.token.rawValue
            }
            return value
        }
    }

    /// ``performWrite(_:)`` from async code: the commit lock and SQLite's write run on the catalog's own writer
    /// thread (``CatalogWriter``), never on a thread of the cooperative pool, while the calling task is suspended.
    @discardableResult
    func performWrite<T: Sendable>(_ body: (StoreTransaction) throws -> T) async throws -> T {
        try await withTaskExecutorPreference(writer) { try commit(body) }
    }

    /// Counts the changes ``performWrite(_:)`` delivers within a task tree that sets it (a sync counts its own
    /// commits, whatever part of it makes them, and none of another task's).
    @TaskLocal static var commitCounter: LockedBox<Int>?

    /// Delivers the changes other libraries on this folder (in this process or another) committed since the
    /// last one delivered, from the persistent history, in commit order. Called when the catalog changes on
    /// disk; a change this library committed itself was delivered already and is not repeated.
    func deliverCommitsOfOtherLibraries() {
        writeOrder.withLock { state in
            // try?: unreadable now: delivered at the next commit signal
            guard !state.closed, let latest = try? store.refreshedToken().rawValue, latest > state.delivered
            else { return }
            deliverHistory(after: state.delivered, before: latest + 1)
            state.delivered = latest
        }
    }

    /// Delivers history entries with `after < token < before`. Under `writeOrder`. Entries the history no longer
    /// holds are skipped (their observers refetch when ``changes(since:)`` reports the history expired).
    private func deliverHistory(after: Int64, before: Int64) {
        guard before > after + 1,
            // try?: unreadable: observers refetch when history reports expired
            let entries = try? store.changes(since: ChangeToken(rawValue: after))
        else { return }
        for entry in entries where entry.token.rawValue < before {
            observers.deliver(
                visible(
                    LibraryChange(
                        history: entry, store: store, maxIncrementalChangeCount: maxIncrementalChangeCount,
                        revealsLocation: revealsLocation)))
        }
    }

    /// Every change after `token`, in commit order, from the persistent history.
    func changes(since token: ChangeToken) throws -> [LibraryChange] {
        try store.changes(since: token).map { entry in
            visible(
                LibraryChange(
                    history: entry, store: store, maxIncrementalChangeCount: maxIncrementalChangeCount,
                    revealsLocation: revealsLocation))
        }
    }

    /// `change` as this library shows it: with the folders of keys when it shows them as albums.
    private func visible(_ change: LibraryChange) -> LibraryChange {
        var change = change
        change.keyFolderRoot = keyFolderRoot
        return change
    }

    /// The public value of a stored record.
    func asset(_ record: AssetRecord) -> Asset { Asset(record, revealsLocation: revealsLocation, store: store) }

    /// This library's device identifier (random, made once and kept in the catalog): it breaks ties between
    /// changes made at the same millisecond and names who made a change.
    func deviceIdentifier() throws -> String {
        try deviceID.withLock { cached in
            if let cached { return cached }
            let id: String
            if let stored = try store.setting("deviceID") {
                id = stored
            } else {
                id = UUID().uuidString.lowercased()
                try store.setSetting("deviceID", to: id)
            }
            cached = id
            return id
        }
    }

    // MARK: Writes that deliver no change

    /// Runs a write of the catalog's bookkeeping (settings, resume checkpoints, the journal outbox, indexes) that
    /// no observer sees, in the same order as every commit, and not once the catalog is closed. On the catalog's
    /// writer thread, as ``performWrite(_:)`` from async code: the caller's task waits suspended.
    private func bookkeeping<T: Sendable>(_ body: () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(writer) { try bookkeepingNow(body) }
    }

    /// ``bookkeeping(_:)`` on the calling thread, for the few callers that are not async (a transfer's progress
    /// callback on its own thread).
    private func bookkeepingNow<T>(_ body: () throws -> T) throws -> T {
        try writeOrder.withLock { state in
            if state.closed { throw AssetLibraryError.closed }
            return try body()
        }
    }

    /// Sets one of the catalog's settings (see ``AssetStore/setSetting(_:to:)``).
    func setSetting(_ name: String, to value: String) async throws {
        try await bookkeeping { try store.setSetting(name, to: value) }
    }

    /// Keeps (or, with `nil`, forgets) where a multipart upload of the asset's original can resume.
    func setUploadCheckpoint(_ checkpoint: String?, for id: Int64) async throws {
        try await bookkeeping { try store.setUploadCheckpoint(checkpoint, for: id) }
    }

    /// ``setUploadCheckpoint(_:for:)`` from a transfer's progress callback (not async; it blocks that thread).
    @available(*, noasync, message: "blocks its thread; async code awaits the async form")
    func setUploadCheckpoint(_ checkpoint: String?, for id: Int64) throws {
        try bookkeepingNow { try store.setUploadCheckpoint(checkpoint, for: id) }
    }

    /// Keeps (or forgets) where the upload of an edit revision's rendered version can resume, from a transfer's
    /// progress callback (not async; it blocks that thread).
    @available(*, noasync, message: "blocks its thread")
    func setEditUploadCheckpoint(_ checkpoint: String?, assetID: Int64, revision: String) throws {
        try bookkeepingNow { try store.setEditUploadCheckpoint(checkpoint, assetID: assetID, revision: revision) }
    }

    /// Forgets the journal outbox's entries up to `seq` (they are in the bucket now).
    func removeJournalOutbox(through seq: Int64) async throws {
        try await bookkeeping { try store.removeJournalOutbox(through: seq) }
    }

    /// Forgets which journal entries older than `time` were applied (they are past the journal's look-back).
    func forgetAppliedJournalEntries(before time: Int64) async throws {
        try await bookkeeping { try store.forgetAppliedJournalEntries(before: time) }
    }

    /// Drops the asset table's secondary indexes before a bulk load into an empty catalog; returns how many.
    func suspendIndexesForBulkLoad() async throws -> Int {
        try await bookkeeping { try store.suspendIndexesForBulkLoad() }
    }

    /// Makes again the indexes a bulk load dropped (a no-op when none were); returns how many. Seconds on a
    /// million assets: the caller's task waits suspended, off the cooperative pool.
    @discardableResult
    func restoreSuspendedIndexes() async throws -> Int {
        try await bookkeeping { try store.restoreSuspendedIndexes() }
    }
}
