import AssetStore
import Essentials
import Foundation

extension AssetLibrary {
    var files: LocalFiles { services.files }
    var remote: LibraryRemote? { services.remote }
    var runtime: LibraryRuntime { services.runtime }
    var syncGate: SerialGate { services.syncGate }

    /// The library-wide network gate, applied before each request's own `isNetworkAccessAllowed`:
    /// `.offline` refuses every download and sync, `.userRequestsOnly` refuses prefetch, pinning downloads and
    /// caching, and both hold background uploads (``performChanges(_:)`` still works: its uploads wait). Changing it
    /// affects requests made afterwards; setting `.allowed` starts waiting uploads. Thread-safe.
    public var networkPolicy: NetworkPolicy {
        get { services.policy.withLock { $0 } }
        set {
            services.policy.withLock { $0 = newValue }
            if newValue == .allowed && configuration.startsBackgroundTransfers { uploadQueue.wake(self) }
        }
    }

    /// Downloads running for requests of this process.
    public var activeDownloadCount: Int { runtime.activeDownloadCount }

    /// The asset whose original has this bucket key, if the catalog has one.
    /// - Parameter key: The full object key (with the originals prefix).
    public func asset(forKey key: String) throws -> Asset? {
        try entry { try store.record(key: key).map { Asset($0, revealsLocation: revealsLocation, store: store) } }
    }
}

extension AssetLibrary {
    /// Calls `body` once every change committed so far has been handed to the observers registered without a
    /// queue (they run on the library's change queue, so they have finished too) and to the change streams.
    /// Observers registered with their own queue may still be running. For tests, demos and orderly shutdown.
    /// - Parameter body: Called on the library's change queue.
    public func notifyWhenChangesDelivered(_ body: @escaping @Sendable () -> Void) {
        observers.afterPendingDeliveries(body)
    }
}
