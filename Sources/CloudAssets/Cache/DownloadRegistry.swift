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
        var tasks: [AssetRequestID: Task<Void, Never>] = [:]
        var downloadsByRequest: [AssetRequestID: [DownloadHandle]] = [:]
        var downloadsByAsset: [Int64: [DownloadHandle]] = [:]
        var cancelledRequests: Set<AssetRequestID> = []
        /// Requests that finished before their task was registered (a fast local answer).
        var finishedEarly: Set<AssetRequestID> = []
        var lastAccess: [Int64: Date] = [:]
        var caching: [Int64: Task<Void, Never>] = [:]
        /// Set by ``cancelAll()`` (the library closed): a request registered after it is cancelled at once.
        var closed = false
    }

    private let state = LockedBox(State())

    func nextRequestID() -> AssetRequestID {
        state.withLock { s in
            defer { s.nextRequestID += 1 }
            return s.nextRequestID
        }
    }

    func registerRequest(_ id: AssetRequestID, task: Task<Void, Never>) {
        let cancelled = state.withLock { s -> Bool in
            if s.finishedEarly.remove(id) != nil {
                s.cancelledRequests.remove(id)
                return false
            }
            if s.cancelledRequests.remove(id) != nil { return true }
            s.tasks[id] = task
            return s.closed
        }
        if cancelled { cancelRequest(id) }
    }

    /// Forgets a request; called once, before its final answer is delivered.
    func finishRequest(_ id: AssetRequestID) {
        state.withLock { s in
            if s.tasks.removeValue(forKey: id) == nil { s.finishedEarly.insert(id) }
            s.cancelledRequests.remove(id)
        }
    }

    /// Requests whose task is registered and not finished.
    var pendingRequestCount: Int { state.withLock { $0.tasks.count } }

    func cancelRequest(_ id: AssetRequestID) {
        let (task, handles) = state.withLock { s -> (Task<Void, Never>?, [DownloadHandle]) in
            let task = s.tasks[id]
            if task == nil { s.cancelledRequests.insert(id) }
            return (task, s.downloadsByRequest[id] ?? [])
        }
        task?.cancel()
        for handle in handles { handle.cancel() }
    }

    func cancelDownloads(forRequest id: AssetRequestID) {
        let handles = state.withLock { $0.downloadsByRequest[id] ?? [] }
        for handle in handles { handle.cancel() }
    }

    func cancelDownloads(forAssets ids: [Int64]) {
        let handles = state.withLock { s in ids.flatMap { s.downloadsByAsset[$0] ?? [] } }
        for handle in handles { handle.cancel() }
    }

    func track(_ handle: DownloadHandle, asset: Int64, request: AssetRequestID) {
        let cancelled = state.withLock { s -> Bool in
            s.downloadsByRequest[request, default: []].append(handle)
            s.downloadsByAsset[asset, default: []].append(handle)
            return s.cancelledRequests.contains(request)
        }
        if cancelled { handle.cancel() }
    }

    func untrack(_ handle: DownloadHandle, asset: Int64, request: AssetRequestID) {
        state.withLock { s in
            s.downloadsByRequest[request]?.removeAll { $0 === handle }
            if s.downloadsByRequest[request]?.isEmpty == true { s.downloadsByRequest[request] = nil }
            s.downloadsByAsset[asset]?.removeAll { $0 === handle }
            if s.downloadsByAsset[asset]?.isEmpty == true { s.downloadsByAsset[asset] = nil }
        }
    }

    func isDownloading(_ asset: Int64) -> Bool { state.withLock { $0.downloadsByAsset[asset] != nil } }

    /// Downloads of this asset tracked now (a request's own included until it returns).
    func downloadCount(of asset: Int64) -> Int { state.withLock { $0.downloadsByAsset[asset]?.count ?? 0 } }

    var activeDownloadCount: Int { state.withLock { $0.downloadsByAsset.count } }

    /// No request, download or prefetch is running.
    var isIdle: Bool {
        state.withLock { $0.tasks.isEmpty && $0.downloadsByAsset.isEmpty && $0.caching.isEmpty }
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
        let (tasks, handles, caching) = state.withLock { s in
            s.closed = true
            return (Array(s.tasks.values), s.downloadsByAsset.values.flatMap { $0 }, Array(s.caching.values))
        }
        for task in tasks { task.cancel() }
        for task in caching { task.cancel() }
        for handle in handles { handle.cancel() }
    }
}
