public import Foundation

/// How a requested image fits the target size, like `PHImageContentMode`.
public enum ImageContentMode: Sendable, Hashable {
    /// The whole image inside the target: one side equals the target's, the other is at most the target's.
    case aspectFit
    /// The image covers the target: one side equals the target's, the other is at least the target's (the
    /// image is not cropped; crop it where it is drawn).
    case aspectFill
}

/// How exactly a result matches the target size, like `PHImageRequestOptionsResizeMode`.
///
/// Sizes are of the displayed (upright) image. The `.exact` size is the image's displayed size scaled to fit in
/// (`.aspectFit`) or to cover (`.aspectFill`) the target, keeping its aspect ratio: one side equals the target's.
public enum ImageResizeMode: Sendable, Hashable {
    /// The full-size image, upright (the target size selects nothing; memory is the full image's).
    case none
    /// Like PhotoKit's `.fast`: the cheapest size at least the `.exact` size — a JPEG at the decoder's 1/1, 1/2,
    /// 1/4 or 1/8 scale, another format at a whole fraction of its size — so the result may be larger than the
    /// target, but never more than twice the `.exact` size on either side (for `.aspectFit`: never more than
    /// twice the target): a cheap size larger than that is resampled to the `.exact` size. Smaller than the
    /// `.exact` size only when the image itself is (it is not upscaled). Use `.exact` for the fitted size itself.
    case fast
    /// Exactly the `.exact` size (see above), resampled with an area filter; larger than the image when the
    /// target is, unless ``ImageRequestOptions/allowsUpscaling`` is `false`.
    case exact
}

/// Options of ``AssetLibrary/requestImage(for:targetSize:contentMode:options:resultHandler:)``, like
/// `PHImageRequestOptions`.
public struct ImageRequestOptions: Sendable {
    /// Whether the original may be downloaded when it is not local (the library's ``NetworkPolicy`` applies too).
    public var isNetworkAccessAllowed = false
    /// `.opportunistic`: a degraded image from the local thumbnail first when there is one, then the final one;
    /// `.highQualityFormat`: the final image only; `.fastFormat`: one answer from what is local, never the network.
    public var deliveryMode: AssetDeliveryMode = .opportunistic
    /// Which version to draw: `.current` (default) is the rendered version of an edited asset (and its
    /// thumbnail for degraded answers); `.original` and `.unadjusted` the original. Every image request honours
    /// it: `requestImage`, `image(for:)` and `startCachingImages`.
    public var version: AssetVersion = .current
    /// How exactly the result matches the target size. Default `.fast` (as PhotoKit's): at least the fitted size
    /// and at most twice it on either side, so possibly larger than the target; `.exact` for the fitted size.
    public var resizeMode: ImageResizeMode = .fast
    /// Called on a private queue while the original downloads, as for data requests.
    public var progressHandler: AssetProgressHandler?
    /// Where answers are delivered; the library's serial delivery queue when nil.
    public var resultQueue: DispatchQueue?
    /// Images declaring more pixels than this are refused (``CloudAssetsError/Code/imageTooLarge``) before any
    /// pixel memory is allocated. Default 100 megapixels.
    public var maximumPixelCount = 100_000_000
    /// Whether the result may be larger than the original (a target larger than the image it shows). `false`:
    /// the result is at most the original's displayed size — a target it would fit inside (or have to grow to
    /// cover) gives the original's own size — so its memory is bounded by the original's, whatever the target.
    /// Default `true`.
    public var allowsUpscaling = true

    /// Local only, opportunistic, `.fast` resize, no progress handler, the library's delivery queue.
    public init() {}
}

/// Decoded pixels: 8-bit RGBA, row by row from the top, upright (EXIF orientation applied), alpha 255 where the
/// image has none.
public struct AssetImage: Sendable, Hashable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Bytes from one row's start to the next (at least `width * 4`).
    public let bytesPerRow: Int
    /// `height * bytesPerRow` bytes.
    public let pixels: [UInt8]

    /// An image of these pixels: 8-bit RGBA rows of `bytesPerRow` bytes, from the top
    /// (`pixels.count >= height * bytesPerRow`).
    public init(width: Int, height: Int, bytesPerRow: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.pixels = pixels
    }

    /// The image encoded as a baseline JPEG (no metadata: no location, no orientation tag — the pixels are upright).
    /// - Parameter quality: 1…100.
    /// - Throws: ``CloudAssetsError/Code/imageUnreadable`` when the encoder fails.
    public func jpegData(quality: Int = 85) throws -> Data {
        try CloudAssetsError.boundary { Data(try ImageBridge.encodeJPEG(self, quality: quality)) }
    }

    /// The image encoded as PNG (RGBA, no metadata).
    /// - Throws: ``CloudAssetsError/Code/imageUnreadable`` when the encoder fails.
    public func pngData() throws -> Data {
        try CloudAssetsError.boundary { Data(try ImageBridge.encodePNG(self)) }
    }
}

/// What accompanies an image request's answer: what every request's answer carries (``AssetRequestInfo``,
/// read through this value: `info.isDegraded`, `info.error`…), and the decode's memory.
@dynamicMemberLookup
public struct ImageRequestInfo: Sendable {
    /// What every request's answer carries. For an image: `isInCloud` — the original was not downloaded, the
    /// answer is the degraded image or none; `isDegraded` — decoded from the local thumbnail, the final image
    /// follows unless `isFinal`.
    public var request: AssetRequestInfo
    /// Peak bytes of pixel memory the decode held (source rows, scaled buffers and the result together).
    public var peakDecodeBytes = 0

    init(requestID: AssetRequestID) { request = AssetRequestInfo(requestID: requestID) }

    /// A field of ``request``: `requestID`, `isInCloud`, `isDegraded`, `isCancelled`, `error`, `isFinal`.
    public subscript<Value>(dynamicMember field: WritableKeyPath<AssetRequestInfo, Value>) -> Value {
        get { request[keyPath: field] }
        set { request[keyPath: field] = newValue }
    }
}

/// How ``AssetLibrary/makeThumbnail(for:isNetworkAccessAllowed:)`` got an asset's thumbnail.
public enum ThumbnailSource: Sendable, Hashable {
    /// The asset already had one.
    case alreadyLocal
    /// From the bucket's thumbnail object.
    case bucketObject
    /// From the JPEG thumbnail embedded in the original's EXIF, read with ranged requests of this many bytes in
    /// all — the original was not downloaded.
    case embeddedThumbnail(bytesFetched: Int)
    /// Decoded from the local (or downloaded) original and downscaled.
    case downscaledOriginal
    /// A video's first frame, decoded from the local original (`bytesRead` 0) or from this many bytes of it read
    /// by range — its container's boxes and the first keyframe; the rest of the video was not downloaded.
    case posterFrame(bytesRead: Int)
}

extension ImageRequestOptions {
    /// The data-request options that fetch what this image request decodes.
    var dataOptions: AssetRequestOptions {
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = isNetworkAccessAllowed
        options.progressHandler = progressHandler
        options.version = version
        return options
    }
}
