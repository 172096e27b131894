import AssetStore
import Dispatch
import Foundation

/// The request broker: answers data, file, stream, ranged-read and image requests (PhotoKit's
/// `PHImageManager`, and its caching form), from the originals cache and the edits' rendered versions, with the
/// location filtered out unless it is granted.
///
/// Owns: the queue answers are delivered on and the caching image manager's images (``ImageCache``). Requests
/// are registered with the originals cache's ``DownloadRegistry`` so that a cancel reaches the downloads serving
/// them, including one that starts after the cancel.
final class RequestBroker: Sendable {
    let configuration: AssetLibrary.Configuration
    let catalog: Catalog
    let files: LocalFiles
    let lock: LibraryLock
    let network: NetworkPermission
    let cache: OriginalsCache
    let edits: EditEngine
    /// Answers of requests without a `resultQueue`, serially and in order.
    let deliveryQueue = DispatchQueue(label: "CloudAssets.delivery")
    /// Images prepared by ``AssetLibrary/startCachingImages(for:targetSize:contentMode:options:)``.
    let images = ImageCache()

    init(
        configuration: AssetLibrary.Configuration, catalog: Catalog, files: LocalFiles, lock: LibraryLock,
        network: NetworkPermission, cache: OriginalsCache, edits: EditEngine
    ) {
        self.configuration = configuration
        self.catalog = catalog
        self.files = files
        self.lock = lock
        self.network = network
        self.cache = cache
        self.edits = edits
    }

    /// Cancels a request: its task, and the downloads serving it (one that starts later is cancelled at once).
    func cancelRequest(_ id: AssetRequestID) { cache.cancelRequest(id) }

    /// The one way a request with a result handler starts: an identifier; answers handed to `resultQueue` (the
    /// library's delivery queue when nil), the book-keeping done before the final one; a closed library answered
    /// at once with ``CloudAssetsError/Code/libraryClosed``; the serving task registered so that a cancel reaches
    /// it and its downloads.
    func submit<Value: Sendable, Info: RequestAnswer>(
        resultQueue: DispatchQueue?, resultHandler: @escaping @Sendable (Value?, Info) -> Void,
        serve: @escaping @Sendable (AssetRequestID, _ deliver: @escaping @Sendable (Value?, Info) -> Void) async -> Void
    ) -> AssetRequestID {
        let id = cache.nextRequestID()
        let queue = resultQueue ?? deliveryQueue
        let cache = self.cache
        let deliver: @Sendable (Value?, Info) -> Void = { value, info in
            if info.isFinal { cache.finishRequest(id) }
            queue.async { resultHandler(value, info) }
        }
        if catalog.isClosed {
            var closed = Info(requestID: id)
            closed.error = CloudAssetsError(AssetLibraryError.closed)
            deliver(nil, closed)
            return id
        }
        cache.registerRequest(id, task: Task { await serve(id, deliver) })
        return id
    }
}

/// What ``RequestBroker/submit(resultQueue:resultHandler:serve:)`` needs of an answer's info.
protocol RequestAnswer: Sendable {
    init(requestID: AssetRequestID)
    var isFinal: Bool { get }
    var error: CloudAssetsError? { get set }
}

extension AssetRequestInfo: RequestAnswer {
    init(requestID: AssetRequestID) { self.requestID = requestID }
}

extension ImageRequestInfo: RequestAnswer {
    var isFinal: Bool {
        get { request.isFinal }
        set { request.isFinal = newValue }
    }
    var error: CloudAssetsError? {
        get { request.error }
        set { request.error = newValue }
    }
}
