import AssetStore
import Dispatch
import Essentials
import Foundation
import S3Transfer

/// Book-keeping of the originals cache's downloads in flight: the downloads serving each request and each asset,
/// the prefetch tasks, access times for the cache's LRU order, the request identifiers, and the queue progress is
/// delivered on. Thread-safe.
final class DownloadRegistry: Sendable {
    /// Progress handlers, serially and in order.
    let progressQueue = DispatchQueue(label: "CloudAssets.progress")

    private struct State {
        var nextRequestID = 1
        var book = RequestBook<Task<Void, Never>, DownloadHandle>()
        var lastAccess: [Int64: Date] = [:]
        var caching: [Int64: Task<Void, Never>] = [:]
        /// Downloads stopped because their asset's object is gone (a sync found it so), by asset: each ends as
        /// "asset deleted" even when it ends before the sync commits the removal.
        var vanished: [Int64: Int] = [:]
    }

    private let state = LockedBox(State())

    func nextRequestID() -> AssetRequestID {
        state.withLock { s in
            defer { s.nextRequestID += 1 }
            return s.nextRequestID
        }
    }

    /// Registers a request's task (see ``RequestBook/register(_:_:)``).
    func registerRequest(_ id: AssetRequestID, task: Task<Void, Never>) {
        if state.withLock({ $0.book.register(id, task) }) == .cancelNow { cancelRequest(id) }
    }

    /// Forgets a request; called once, before its final answer is delivered.
    func finishRequest(_ id: AssetRequestID) { state.withLock { $0.book.finish(id) } }

    /// Requests whose task is registered and not finished.
    var pendingRequestCount: Int { state.withLock { $0.book.works.count } }

    func cancelRequest(_ id: AssetRequestID) {
        let (task, handles) = state.withLock { $0.book.cancel(id) }
        task?.cancel()
        for handle in handles { handle.cancel() }
    }

    func cancelDownloads(forRequest id: AssetRequestID) {
        for handle in state.withLock({ $0.book.downloads(forRequest: id) }) { handle.cancel() }
    }

    /// Stops the downloads of assets whose objects are gone; each ends as "asset deleted"
    /// (``takeVanished(_:)``).
    func cancelDownloads(forAssets ids: [Int64]) {
        let handles = state.withLock { s in
            ids.flatMap { id in
                let handles = s.book.downloads(forAssets: [id])
                if !handles.isEmpty { s.vanished[id, default: 0] += handles.count }
                return handles
            }
        }
        for handle in handles { handle.cancel() }
    }

    /// Whether a download of `asset` that ended cancelled was stopped because its object is gone (each such
    /// download answers once).
    func takeVanished(_ asset: Int64) -> Bool {
        state.withLock { s in
            guard let count = s.vanished[asset] else { return false }
            s.vanished[asset] = count > 1 ? count - 1 : nil
            return true
        }
    }

    func track(_ handle: DownloadHandle, asset: Int64, request: AssetRequestID) {
        if state.withLock({ $0.book.track(handle, asset: asset, request: request) }) { handle.cancel() }
    }

    func untrack(_ handle: DownloadHandle, asset: Int64, request: AssetRequestID) {
        state.withLock { $0.book.untrack(handle, asset: asset, request: request) }
    }

    func isDownloading(_ asset: Int64) -> Bool { state.withLock { $0.book.downloadsByAsset[asset] != nil } }

    /// Downloads of this asset tracked now (a request's own included until it returns).
    func downloadCount(of asset: Int64) -> Int { state.withLock { $0.book.downloadsByAsset[asset]?.count ?? 0 } }

    var activeDownloadCount: Int { state.withLock { $0.book.downloadsByAsset.count } }

    /// No request, download or prefetch is running.
    var isIdle: Bool {
        state.withLock { $0.book.works.isEmpty && $0.book.downloadsByAsset.isEmpty && $0.caching.isEmpty }
    }

    /// Access times are kept in memory (writing them would notify observers on every read) and folded
    /// into the LRU order with the persisted `lastAccessDate`.
    func noteAccess(_ asset: Int64) { state.withLock { $0.lastAccess[asset] = Date() } }

    func lastAccess(_ asset: Int64) -> Date? { state.withLock { $0.lastAccess[asset] } }

    func setCachingTask(_ task: Task<Void, Never>?, for asset: Int64) -> Task<Void, Never>? {
        state.withLock { s in
            let previous = s.caching[asset]
            s.caching[asset] = task
            return previous
        }
    }

    /// Cancels every request, download and caching task, and every request registered from now on (the library
    /// closed).
    func cancelAll() {
        let (closing, caching) = state.withLock { s in (s.book.close(), Array(s.caching.values)) }
        for task in closing.works { task.cancel() }
        for task in caching { task.cancel() }
        for handle in closing.downloads { handle.cancel() }
    }
}
