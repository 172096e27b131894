/// The lifecycle of requests and the downloads that serve them, as a value: no task is run, no download is
/// cancelled here — each transition returns what its caller must do (``DownloadRegistry`` does it outside its
/// lock). Generic over the request's work and the download handle so that tests drive it with plain values.
///
/// A request's answer can come before its task is registered (a local file answers at once), and a cancel can
/// come before either: both are remembered until the registration, so that no request is left registered after
/// its final answer, and none escapes a cancel. A download tracked for a request cancelled earlier is cancelled
/// as it starts. Once closed, every request registered is cancelled at once.
struct RequestBook<Work, Handle: AnyObject> {
    private(set) var works: [AssetRequestID: Work] = [:]
    private var downloadsByRequest: [AssetRequestID: [Handle]] = [:]
    private(set) var downloadsByAsset: [Int64: [Handle]] = [:]
    private var cancelled: Set<AssetRequestID> = []
    /// Requests that finished before their work was registered.
    private var finishedEarly: Set<AssetRequestID> = []
    private(set) var isClosed = false

    enum RegisterAction: Equatable {
        /// Registered: it runs until ``finish(_:)`` or a cancel.
        case registered
        /// Its answer already came: nothing is kept.
        case alreadyFinished
        /// It was cancelled before it was registered, or the book is closed: cancel its work now.
        case cancelNow
    }

    mutating func register(_ id: AssetRequestID, _ work: Work) -> RegisterAction {
        if finishedEarly.remove(id) != nil {
            cancelled.remove(id)
            return .alreadyFinished
        }
        if cancelled.remove(id) != nil { return .cancelNow }
        works[id] = work
        return isClosed ? .cancelNow : .registered
    }

    /// Its final answer is being delivered: forget it.
    mutating func finish(_ id: AssetRequestID) {
        if works.removeValue(forKey: id) == nil { finishedEarly.insert(id) }
        cancelled.remove(id)
    }

    /// Cancels a request: what to cancel now (its work, when registered, and its downloads); a request not
    /// registered yet is remembered as cancelled.
    mutating func cancel(_ id: AssetRequestID) -> (work: Work?, downloads: [Handle]) {
        let work = works[id]
        if work == nil { cancelled.insert(id) }
        return (work, downloadsByRequest[id] ?? [])
    }

    func downloads(forRequest id: AssetRequestID) -> [Handle] { downloadsByRequest[id] ?? [] }

    func downloads(forAssets ids: [Int64]) -> [Handle] { ids.flatMap { downloadsByAsset[$0] ?? [] } }

    /// Tracks a download serving `request`; returns whether to cancel it at once (its request was cancelled).
    mutating func track(_ handle: Handle, asset: Int64, request: AssetRequestID) -> Bool {
        downloadsByRequest[request, default: []].append(handle)
        downloadsByAsset[asset, default: []].append(handle)
        return cancelled.contains(request)
    }

    mutating func untrack(_ handle: Handle, asset: Int64, request: AssetRequestID) {
        downloadsByRequest[request]?.removeAll { $0 === handle }
        if downloadsByRequest[request]?.isEmpty == true { downloadsByRequest[request] = nil }
        downloadsByAsset[asset]?.removeAll { $0 === handle }
        if downloadsByAsset[asset]?.isEmpty == true { downloadsByAsset[asset] = nil }
    }

    /// Closes the book: every work and download to cancel now; later registrations are cancelled at once.
    mutating func close() -> (works: [Work], downloads: [Handle]) {
        isClosed = true
        return (Array(works.values), downloadsByAsset.values.flatMap { $0 })
    }
}
