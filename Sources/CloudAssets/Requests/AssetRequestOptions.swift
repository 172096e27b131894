public import Foundation
import S3Transfer

/// Identifies one data request, for ``AssetLibrary/cancelRequest(_:)``.
public typealias AssetRequestID = Int

/// A request's progress: the fraction done (0…1), an error being retried, a flag to set to stop the request, and
/// the byte counts. Called on a private serial queue, at most every ``AssetLibrary/Configuration/progressInterval``.
public typealias AssetProgressHandler =
    @Sendable (
        _ fraction: Double, _ error: CloudAssetsError?, _ stop: inout Bool, _ progress: AssetRequestProgress
    ) -> Void

/// How a data request delivers, like `PHImageRequestOptionsDeliveryMode`.
public enum AssetDeliveryMode: Sendable, Hashable {
    /// The local thumbnail first (marked degraded) when there is one, then the original. Two answers at most.
    case opportunistic
    /// The original only: one answer.
    case highQualityFormat
    /// Whatever is local now — the original, else the thumbnail (degraded) — in one answer, never the network.
    case fastFormat
}

/// Progress of a request's download, passed to ``AssetRequestOptions/progressHandler``.
public struct AssetRequestProgress: Sendable, Hashable {
    /// The request this is for.
    public var requestID: AssetRequestID
    /// Bytes of the original received so far (including bytes resumed from an earlier attempt).
    public var bytesReceived: Int64
    /// The original's size, once known.
    public var totalBytes: Int64?
    /// The recent transfer rate.
    public var bytesPerSecond: Double
}

/// Options for ``AssetLibrary/requestData(for:options:resultHandler:)`` and its relatives, like
/// `PHImageRequestOptions`.
public struct AssetRequestOptions: Sendable {
    /// Whether the original may be downloaded when it is not local. `false` (the default) makes a request for a
    /// cloud-only original answer at once, without data, with ``AssetRequestInfo/isInCloud`` set. The
    /// library-wide ``NetworkPolicy`` applies on top.
    public var isNetworkAccessAllowed = false
    /// How many answers, and which. Defaults to ``AssetDeliveryMode/opportunistic``.
    public var deliveryMode: AssetDeliveryMode = .opportunistic
    /// Which version to deliver.
    public var version: AssetVersion = .current
    /// Called while the original downloads: `(fraction 0…1, error, stop, progress)`. Set `stop` to `true` to
    /// cancel the request (it then ends with ``AssetRequestInfo/isCancelled``). Called serially, in order, on
    /// the library's progress queue, at most every ``AssetLibrary/Configuration/progressInterval`` seconds; the
    /// last call before a successful result reports 1.0.
    public var progressHandler: AssetProgressHandler?
    /// The queue result handlers are called on; `nil` uses the library's serial delivery queue.
    public var resultQueue: DispatchQueue?

    /// Options with the defaults: no network, opportunistic delivery, current version.
    public init() {}
}

/// What accompanies a request's answer, like the info dictionary of `PHImageManager`.
public struct AssetRequestInfo: Sendable {
    /// The request this answer belongs to.
    public var requestID: AssetRequestID
    /// The original is not on this computer and the network was not allowed: the answer carries no data.
    public var isInCloud = false
    /// The data is the thumbnail, a stand-in; a better answer may follow.
    public var isDegraded = false
    /// The request was cancelled (``AssetLibrary/cancelRequest(_:)`` or the progress handler's stop flag).
    public var isCancelled = false
    /// Why the request failed, if it did.
    public var error: CloudAssetsError?
    /// True for the last answer this request will get.
    public var isFinal = true
}

/// What kept a request for bytes that are not local off the network.
enum NetworkRefusal: Sendable {
    /// The request's own `isNetworkAccessAllowed` was false (or its delivery mode asks for no download).
    case request
    /// The request allowed the network; the library-wide ``AssetLibrary/networkPolicy`` did not.
    case libraryPolicy

    /// Why a request that found its bytes in the cloud got no download: the request's option when it refused, else
    /// the library's policy (the only other gate).
    init(requestAllowed: Bool) { self = requestAllowed ? .libraryPolicy : .request }
}

/// Errors of the request API (reported as ``CloudAssetsError``).
enum AssetRequestError: Error, Sendable, CustomStringConvertible {
    /// The original is in the cloud and the request (or the library's network policy) does not allow a download.
    case inCloud(key: String, localIdentifier: Int64?, refusedBy: NetworkRefusal)
    /// The request was cancelled.
    case cancelled
    /// The asset no longer exists (deleted locally or remotely).
    case assetDeleted(localIdentifier: Int64)
    /// The object changed on the server while it was being fetched; sync and request it again.
    case objectChanged(key: String)
    /// The range starts at or past the end of the asset's original (HTTP's "range not satisfiable").
    case invalidRange(Range<Int64>, size: Int64)
    /// A pinned asset cannot be evicted; unpin it first.
    case pinned(localIdentifier: Int64)
    /// The library has no endpoint configured, so it cannot reach a bucket.
    case noRemote
    /// A local file could not be read or written.
    case localFile(path: String, reason: String)

    var description: String {
        switch self {
        case .inCloud(let key, _, .request):
            return "\(key) is in the cloud and network access is not allowed for this request"
        case .inCloud(let key, _, .libraryPolicy):
            return "\(key) is in the cloud and the library-wide network policy (AssetLibrary.networkPolicy) does "
                + "not allow network access"
        case .cancelled: return "the request was cancelled"
        case .assetDeleted(let id): return "asset \(id) no longer exists"
        case .objectChanged(let key): return "\(key) changed on the server during the transfer; sync and retry"
        case .invalidRange(let range, let size):
            return "range not satisfiable: bytes \(range.lowerBound)-\(range.upperBound - 1) start past the end of "
                + "the original (\(size) bytes, last byte \(size - 1))"
        case .pinned(let id): return "asset \(id) is pinned; unpin it before evicting"
        case .noRemote: return "the library has no endpoint configured"
        case .localFile(let path, let reason): return "\(path): \(reason)"
        }
    }
}

extension AssetRequestOptions {
    /// The downloader's progress callback that reports to ``progressHandler`` for request `requestID` (nil
    /// without a handler).
    func downloadProgress(requestID: AssetRequestID) -> (@Sendable (DownloadProgress, inout Bool) -> Void)? {
        progressHandler.map { handler in
            { @Sendable progress, stop in
                handler(
                    progress.fractionCompleted, nil, &stop,
                    AssetRequestProgress(
                        requestID: requestID, bytesReceived: progress.bytesReceived,
                        totalBytes: progress.totalBytes, bytesPerSecond: progress.bytesPerSecond))
            }
        }
    }
}
