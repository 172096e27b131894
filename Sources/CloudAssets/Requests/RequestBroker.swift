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
final class RequestBroker: LibraryEngine {
    let context: LibraryContext
    let cache: OriginalsCache
    let edits: EditEngine
    /// Answers of requests without a `resultQueue`, serially and in order.
    let deliveryQueue = DispatchQueue(label: "CloudAssets.delivery")
    /// Images prepared by ``AssetLibrary/startCachingImages(for:targetSize:contentMode:options:)``.
    let images = ImageCache()

    init(context: LibraryContext, cache: OriginalsCache, edits: EditEngine) {
        self.context = context
        self.cache = cache
        self.edits = edits
    }

    /// Cancels a request: its task, and the downloads serving it (one that starts later is cancelled at once).
    func cancelRequest(_ id: AssetRequestID) { cache.downloads.cancelRequest(id) }
}
