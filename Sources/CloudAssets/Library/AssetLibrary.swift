public import AssetStore
public import Dispatch
import Essentials
import Foundation

/// A photo library whose originals live in an S3 bucket (PhotoKit's `PHPhotoLibrary`).
///
/// Every asset is known locally (its metadata and availability) whether or not its bytes are; fetches run against
/// the local store and never touch the network. Every change — a sync, a finished download, an eviction — is one
/// transaction and is announced to observers as one ``LibraryChange``.
///
/// Several libraries may have one folder open — in several processes (a `watch` beside `get` and `ls`), or in
/// one: they share the catalog through SQLite's own locking, one downloads an original while the others wait
/// for it, one syncs at a time, and each delivers every commit to its observers in commit order, the others'
/// included (read from the history when the catalog changes on disk). Only the first to open a folder repairs
/// it after a crash. All methods may be called from any thread.
public final class AssetLibrary: Sendable {
    /// The configuration the library was opened with.
    public let configuration: Configuration
    /// The local store (for the sync, download and cache layers).
    let store: AssetStore
    let lock: LibraryLock
    let observers = ObserverRegistry()
    /// Files, network side and requests in flight.
    let services: LibraryServices
    /// What opening the library repaired after a crash (see ``RecoveryReport``): empty unless this library was
    /// the first to open the folder and found something to repair.
    public var recovery: RecoveryReport { recoveryReport.withLock { $0 } }
    private let recoveryReport = LockedBox(RecoveryReport())
    /// Serialises commit + enqueue so observers get changes in commit order; holds whether the library is
    /// closed and the last change token delivered (commits of other libraries on this folder included).
    private let writeOrder: LockedBox<(closed: Bool, delivered: Int64)>
    /// Wakes the library when another library (in any process) commits to the same catalog (set once `init` has
    /// repaired the folder).
    private let catalogWatcher = LockedBox<CatalogWatcher?>(nil)
    /// Whether the open finished (its repair included): only such a library may mark the folder closed cleanly.
    private let opened = LockedBox(false)

    /// Opens (or creates) the library in `configuration.storeURL`.
    ///
    /// - Throws: ``CloudAssetsError`` with code ``CloudAssetsError/Code/notALibrary`` for a folder that holds
    ///   other files and no catalog (nothing is written in it); ``CloudAssetsError/Code/libraryBusy`` when another
    ///   library (in this process or another) is still repairing the folder after a crash, 5 s after this open
    ///   began — several libraries may share one folder, in one process or several; ``CloudAssetsError/Code/localFileFailed`` (read-only folder),
    ///   ``CloudAssetsError/Code/catalogUnusable`` or ``CloudAssetsError/Code/catalogFailed`` when the folder or
    ///   database cannot be used — the existing file is left untouched.
    public convenience init(configuration: Configuration) async throws {
        do {
            try await self.init(opening: configuration)
        } catch {
            throw CloudAssetsError.mapping(error)
        }
    }

    private init(opening configuration: Configuration) async throws {
        let local = try await Self.openLocalStore(configuration)
        self.configuration = configuration
        self.lock = local.lock
        self.store = local.store
        self.writeOrder = LockedBox((false, local.store.currentToken.rawValue))
        do {
            self.services = try LibraryServices(configuration: configuration)
        } catch {
            local.lock.release()
            throw error
        }
        do {
            // Every open removes the clean-close marker (a library that opened while the last one closed, or one
            // that is not the first, must not leave it in place for a crash of its own).
            let closedCleanly = CleanClose.take(folder: configuration.storeURL)
            // Only the first library to open the folder repairs it: another one's files may be in use.
            if lock.isFirstOpen {
                let report = try recoverLocalState(afterCleanClose: closedCleanly)
                recoveryReport.withLock { $0 = report }
                services.telemetry.recovered(report)
            }
            lock.share()
            let watcher = CatalogWatcher(folder: configuration.storeURL) { [weak self] in
                self?.deliverCommitsOfOtherLibraries()
            }
            catalogWatcher.withLock { $0 = watcher }
            resumePinnedDownloads()
            if configuration.startsBackgroundTransfers { uploadQueue.wake(self) }
            opened.withLock { $0 = true }
        } catch {
            close()
            throw error
        }
    }

    /// Takes the folder lock, then opens the store (the lock is released again if the store fails to open).
    static func openLocalStore(_ configuration: Configuration) async throws -> (lock: LibraryLock, store: AssetStore) {
        try LibraryFolder.validate(configuration.storeURL)
        let lock = try await LibraryLock.open(folder: configuration.storeURL)
        do {
            let store = try AssetStore(folder: configuration.storeURL, historyLimit: configuration.historyLimit)
            return (lock, store)
        } catch {
            lock.release()
            throw error
        }
    }

    /// Cancels the library's requests and downloads, releases the folder lock and finishes every ``changes``
    /// stream. From then on every public throwing method throws ``CloudAssetsError/Code/libraryClosed`` at once,
    /// before any work; ``requestData(for:options:resultHandler:)`` and
    /// ``requestImage(for:targetSize:contentMode:options:resultHandler:)`` answer it in their callback (one final
    /// answer); ``waitForUploads()`` returns at once. Fetch results already handed out
    /// stay readable (they read the store), so the database's connections close when the last of them and the
    /// library are released; the store takes no write after `close()` returns. The last library to close the
    /// folder (no other, in any process, has it open), when nothing of it is running (no request, download,
    /// sync or upload), marks it closed cleanly: the next open then checks only the imports not uploaded yet and
    /// the partial originals instead of every local file, as nothing can be left half-done. Idempotent; any
    /// thread.
    public func close() {
        let wasOpen = writeOrder.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard wasOpen else { return }
        // Idle as it closes (no new work can start: `closed` is set): nothing it cancels below can still write a
        // file after the marker.
        let idle =
            opened.withLock { $0 } && services.runtime.isIdle && !services.syncGate.isBusy
            && !services.uploadQueue.isActive
        catalogWatcher.withLock { $0 }?.stop()
        services.uploadQueue.close()
        services.runtime.cancelAll()
        observers.close()
        if idle, lock.takeExclusivelyIfAlone() { CleanClose.mark(folder: configuration.storeURL) }
        lock.release()
    }

    deinit {
        catalogWatcher.withLock { $0 }?.stop()
        lock.release()
    }

    var isClosed: Bool { writeOrder.withLock { $0.closed } }

    func ensureOpen() throws {
        if isClosed { throw AssetLibraryError.closed }
    }

    /// The one door of every public throwing method: on a closed library it throws
    /// ``CloudAssetsError/Code/libraryClosed`` at once, before any work; every error `body` throws reaches the
    /// caller as a ``CloudAssetsError``.
    @discardableResult
    func entry<T>(_ body: () throws -> T) throws -> T {
        try CloudAssetsError.boundary {
            try ensureOpen()
            return try body()
        }
    }

    /// The async form of the synchronous `entry`.
    @discardableResult
    func entry<T>(_ body: () async throws -> T) async throws -> T {
        try await CloudAssetsError.boundary {
            try ensureOpen()
            return try await body()
        }
    }

    // MARK: Writing

    /// Runs `body` in one store transaction, commits it, and — when it changed something — delivers one
    /// ``LibraryChange`` to every observer and stream, serially and in commit order.
    ///
    /// Must not be called from inside `body` (one writer). When `body` throws, nothing is committed or delivered.
    @discardableResult
    func performWrite<T: Sendable>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try writeOrder.withLock { state in
            if state.closed { throw AssetLibraryError.closed }
            let (value, changes) = try store.write(body)
            if !changes.isEmpty {
                Self.commitCounter?.withLock { $0 += 1 }
                // Commits of other libraries that came before this one are delivered first, in token order.
                deliverHistory(after: state.delivered, before: changes.token.rawValue)
                observers.deliver(
                    LibraryChange(
                        changes: changes, store: store,
                        maxIncrementalChangeCount: configuration.maxIncrementalChangeCount,
                        revealsLocation: revealsLocation))
                state.delivered = changes.token.rawValue
            }
            return value
        }
    }

    /// Counts the changes ``performWrite(_:)`` delivers within a task tree that sets it (a sync counts its own
    /// commits, whatever part of it makes them, and none of another task's).
    @TaskLocal static var commitCounter: LockedBox<Int>?

    /// Delivers the changes other libraries on this folder (in this process or another) committed since the
    /// last one delivered, from the persistent history, in commit order. Called when the catalog changes on
    /// disk; a change this library committed itself was delivered already and is not repeated.
    func deliverCommitsOfOtherLibraries() {
        writeOrder.withLock { state in
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
            let entries = try? store.changes(since: ChangeToken(rawValue: after))
        else { return }
        for entry in entries where entry.token.rawValue < before {
            observers.deliver(
                LibraryChange(
                    history: entry, store: store, maxIncrementalChangeCount: configuration.maxIncrementalChangeCount,
                    revealsLocation: revealsLocation))
        }
    }

    /// Whether assets handed out carry their location (``Configuration/locationAccess``).
    var revealsLocation: Bool { configuration.locationAccess == .granted }

    // MARK: Fetching

    /// The assets matching `options`, in their order: an immutable snapshot (see ``FetchResult``). Local only.
    public func fetchAssets(_ options: FetchOptions = FetchOptions()) throws -> FetchResult {
        return try entry {
            return FetchResult(
                store: store, options: options, sorted: try store.fetchSorted(options.storeQuery),
                revealsLocation: revealsLocation)
        }
    }

    /// The assets with these local identifiers, in identifier order; unknown or malformed identifiers are skipped.
    /// Hidden and trashed assets are included (they were asked for by identifier).
    public func fetchAssets(withLocalIdentifiers identifiers: [String]) throws -> FetchResult {
        return try entry {
            try fetchAssets(
                FetchOptions(
                    predicate: .identifiers(Set(identifiers)), includeHiddenAssets: true, includeTrashedAssets: true))
        }
    }

    /// The asset with this local identifier, or `nil`.
    public func asset(withLocalIdentifier identifier: String) throws -> Asset? {
        return try entry {
            guard let id = Int64(identifier) else { return nil }
            return try store.record(id: id).map { Asset($0, revealsLocation: revealsLocation, store: store) }
        }
    }

    // MARK: Observing

    /// Registers `observer` for every later change, delivered on `queue` (which should be serial, to keep the
    /// commit order) or, when `nil`, on the library's own serial delivery queue. The observer is held weakly.
    /// Registering again replaces the queue.
    public func register(_ observer: any LibraryChangeObserver, queue: DispatchQueue? = nil) {
        observers.register(observer, queue: queue)
    }

    /// Stops deliveries to `observer`: no call starts after this returns (one already running may finish).
    public func unregister(_ observer: any LibraryChangeObserver) {
        observers.unregister(observer)
    }

    /// A new stream of every change committed after this call, in commit order. It finishes when the library
    /// closes; it buffers without limit, so iterate it or drop it.
    public var changes: AsyncStream<LibraryChange> { observers.makeStream() }

    /// The token of the last committed change.
    public var currentChangeToken: ChangeToken { store.currentToken }

    /// Every change after `token`, in commit order, from the persistent history (works across restarts).
    ///
    /// These changes carry identifiers only; their ``LibraryChange/details(for:)-(FetchResult)`` read the assets'
    /// current state from the library.
    /// - Throws: ``CloudAssetsError/Code/historyUnavailable`` when the history no longer reaches back to `token`
    ///   (refetch instead) or for a token this library never issued.
    public func changes(since token: ChangeToken) throws -> [LibraryChange] {
        return try entry {
            return try store.changes(since: token).map { entry in
                LibraryChange(
                    history: entry, store: store, maxIncrementalChangeCount: configuration.maxIncrementalChangeCount,
                    revealsLocation: revealsLocation)
            }
        }
    }
}
