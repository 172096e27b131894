public import AssetStore
public import Dispatch
import Essentials
import Foundation
import Logging

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
    let lock: LibraryLock
    /// The store, the commit order and the delivery of changes (the closed state is its).
    let catalog: Catalog
    /// The bucket side, when an endpoint is configured.
    let remote: LibraryRemote?
    let telemetry: LibraryTelemetry
    /// The library-wide network policy, as the engines read it.
    let network: NetworkPermission
    let cache: OriginalsCache
    let edits: EditEngine
    let requests: RequestBroker
    /// The loopback server of ``requestPlaybackURL(for:options:)`` (listening from its first URL).
    let playback: PlaybackServer
    let journal: JournalOutbox
    let uploadEngine: UploadEngine
    let syncEngine: SyncEngine
    /// What opening the library repaired after a crash (see ``RecoveryReport``): empty unless this library was
    /// the first to open the folder and found something to repair.
    public var recovery: RecoveryReport { recoveryReport.withLock { $0 } }
    private let recoveryReport = LockedBox(RecoveryReport())
    /// Whether the open finished (its repair included): only such a library may mark the folder closed cleanly.
    private let opened = LockedBox(false)
    /// Its entry in the ledger of open resources (``OpenResources``), from a finished open to `close()` or release.
    private let ledgerEntry = LockedBox<OpenResources.Token?>(nil)

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
        // The engines, wired once, in the order of the architecture diagram (docs/layout.md): each gets what it
        // uses and nothing else, and none calls one wired after it.
        let catalog = Catalog(store: local.store, configuration: configuration)
        let telemetry = LibraryTelemetry(logger: configuration.logger, factory: configuration.metricsFactory)
        let files = LocalFiles(root: configuration.storeURL)
        let network = NetworkPermission(configuration.networkPolicy)
        let remote: LibraryRemote?
        do {
            remote = try LibraryRemote.make(configuration, catalog: catalog, observer: telemetry.transferObserver)
        } catch {
            local.lock.release()
            throw error
        }
        self.catalog = catalog
        self.telemetry = telemetry
        self.remote = remote
        self.network = network
        journal = JournalOutbox(configuration: configuration, catalog: catalog, remote: remote, network: network)
        cache = OriginalsCache(
            configuration: configuration, catalog: catalog, files: files, lock: lock, remote: remote,
            telemetry: telemetry, network: network)
        edits = EditEngine(
            configuration: configuration, catalog: catalog, files: files, lock: lock, remote: remote,
            telemetry: telemetry, network: network, cache: cache, journal: journal)
        requests = RequestBroker(
            configuration: configuration, catalog: catalog, files: files, lock: lock, network: network,
            cache: cache, edits: edits)
        playback = PlaybackServer(requests: requests, catalog: catalog)
        uploadEngine = UploadEngine(
            configuration: configuration, catalog: catalog, files: files, lock: lock, remote: remote,
            telemetry: telemetry, network: network, edits: edits, journal: journal)
        syncEngine = SyncEngine(
            configuration: configuration, catalog: catalog, files: files, lock: lock, remote: remote,
            telemetry: telemetry, network: network, cache: cache, edits: edits, uploads: uploadEngine,
            journal: journal)
        if remote != nil, !configuration.verifyTLS, configuration.endpoint?.scheme?.lowercased() == "https" {
            telemetry.logger.warning(
                "TLS verification is off (Configuration.verifyTLS = false): any server can pose as the endpoint",
                metadata: ["endpoint": .string(configuration.endpoint?.absoluteString ?? "")])
        }
        do {
            // Every open removes the clean-close marker (a library that opened while the last one closed, or one
            // that is not the first, must not leave it in place for a crash of its own).
            let closedCleanly = CleanClose.take(folder: configuration.storeURL)
            // Only the first library to open the folder repairs it: another one's files may be in use.
            if lock.isFirstOpen {
                let report = try await cache.recoverLocalState(afterCleanClose: closedCleanly)
                recoveryReport.withLock { $0 = report }
                telemetry.recovered(report)
            }
            lock.share()
            catalog.startWatching(folder: configuration.storeURL)
            cache.resumePinnedDownloads()
            uploadEngine.wakeIfBackground()
            opened.withLock { $0 = true }
            ledgerEntry.withLock { $0 = OpenResources.opened("library \(configuration.storeURL.lastPathComponent)") }
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
        let entry = ledgerEntry.withLock { entry in
            defer { entry = nil }
            return entry
        }
        if let entry { OpenResources.closed(entry) }
        // The catalog takes no write from now on, its watcher stops and every change stream finishes.
        guard catalog.close() else { return }
        // Idle as it closes (no new work can start: the catalog is closed): nothing it cancels below can still
        // write a file after the marker.
        let idle =
            opened.withLock { $0 } && cache.isIdle && !syncEngine.isBusy && !uploadEngine.isActive
        playback.close()
        uploadEngine.close()
        cache.close()
        if idle, lock.takeExclusivelyIfAlone() { CleanClose.mark(folder: configuration.storeURL) }
        lock.release()
    }

    deinit {
        lock.release()
        if let entry = ledgerEntry.withLock({ $0 }) { OpenResources.closed(entry) }
    }

    var isClosed: Bool { catalog.isClosed }

    /// The one door of every public throwing method: on a closed library it throws
    /// ``CloudAssetsError/Code/libraryClosed`` at once, before any work; every error `body` throws reaches the
    /// caller as a ``CloudAssetsError``.
    @discardableResult
    func entry<T>(_ body: () throws -> T) throws -> T {
        try CloudAssetsError.boundary {
            if isClosed { throw AssetLibraryError.closed }
            return try body()
        }
    }

    /// The async form of the synchronous `entry`.
    @discardableResult
    func entry<T>(_ body: () async throws -> T) async throws -> T {
        try await CloudAssetsError.boundary {
            if isClosed { throw AssetLibraryError.closed }
            return try await body()
        }
    }

    // MARK: Fetching

    /// The assets matching `options`, in their order: an immutable snapshot (see ``FetchResult``). Local only.
    public func fetchAssets(_ options: FetchOptions = FetchOptions()) throws -> FetchResult {
        return try entry {
            try catalog.fetch(options)
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
            return try catalog.asset(id: id)
        }
    }

    // MARK: Observing

    /// Registers `observer` for every later change, delivered on `queue` (which should be serial, to keep the
    /// commit order) or, when `nil`, on the library's own serial delivery queue. The observer is held weakly.
    /// Registering again replaces the queue.
    public func register(_ observer: any LibraryChangeObserver, queue: DispatchQueue? = nil) {
        catalog.observers.register(observer, queue: queue)
    }

    /// Stops deliveries to `observer`: no call starts after this returns (one already running may finish).
    public func unregister(_ observer: any LibraryChangeObserver) {
        catalog.observers.unregister(observer)
    }

    /// A new stream of every change committed after this call, in commit order. It finishes when the library
    /// closes; it buffers without limit, so iterate it or drop it.
    public var changes: AsyncStream<LibraryChange> { catalog.observers.makeStream() }

    /// The token of the last committed change.
    public var currentChangeToken: ChangeToken { catalog.currentToken }

    /// Every change after `token`, in commit order, from the persistent history (works across restarts).
    ///
    /// These changes carry identifiers only; their ``LibraryChange/details(for:)-(FetchResult)`` read the assets'
    /// current state from the library.
    /// - Throws: ``CloudAssetsError/Code/historyUnavailable`` when the history no longer reaches back to `token`
    ///   (refetch instead) or for a token this library never issued.
    public func changes(since token: ChangeToken) throws -> [LibraryChange] {
        return try entry {
            try catalog.changes(since: token)
        }
    }
}

extension AssetLibrary {
    /// The library-wide network gate, applied before each request's own `isNetworkAccessAllowed`:
    /// `.offline` refuses every download and sync, `.userRequestsOnly` refuses prefetch, pinning downloads and
    /// caching, and both hold background uploads (``performChanges(_:)`` still works: its uploads wait). Changing it
    /// affects requests made afterwards; setting `.allowed` starts waiting uploads. Thread-safe.
    public var networkPolicy: NetworkPolicy {
        get { network.policy }
        set {
            network.policy = newValue
            if newValue == .allowed { uploadEngine.wakeIfBackground() }
        }
    }

    /// Downloads running for requests of this process.
    public var activeDownloadCount: Int { cache.activeDownloadCount }

    /// The asset whose original has this bucket key, if the catalog has one.
    /// - Parameter key: The full object key (with the originals prefix).
    public func asset(forKey key: String) throws -> Asset? {
        try entry { try catalog.asset(key: key) }
    }

    /// Calls `body` once every change committed so far has been handed to the observers registered without a
    /// queue (they run on the library's change queue, so they have finished too) and to the change streams.
    /// Observers registered with their own queue may still be running. For tests, demos and orderly shutdown.
    /// - Parameter body: Called on the library's change queue.
    public func notifyWhenChangesDelivered(_ body: @escaping @Sendable () -> Void) {
        catalog.observers.afterPendingDeliveries(body)
    }
}
