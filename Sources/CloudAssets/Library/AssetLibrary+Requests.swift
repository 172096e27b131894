import AssetStore
public import Foundation

extension AssetLibrary {
    /// Passed as a target size: the full-size image (like `PHImageManagerMaximumSize`).
    public static let maximumImageSize = CGSize(width: -1, height: -1)

    /// Reads a byte range of the asset's original, downloading only the parts not yet on this computer — like
    /// `ALAssetRepresentation`'s `getBytes(_:fromOffset:length:)`.
    ///
    /// Bytes fetched are written into the asset's sparse range file, verified against the ETag they were
    /// fetched under, and recorded in one transaction: the asset becomes `partial` (observers see it) unless it
    /// already was `full`. Ranges already present are served from disk without a request. Fetched ranges count
    /// against ``Configuration/cacheSizeLimit`` like originals (other assets may be evicted to make room).
    ///
    /// The bytes returned are always of one version: the range file is read through the descriptor the read
    /// opened, and ranges are recorded only while that file is still the asset's range file, so an eviction or a
    /// sync that removes the file during the read (and another read that creates a new one) cannot mix files.
    /// Such a race makes the read start again (at most twice) rather than fail.
    ///
    /// With ``Configuration/locationAccess`` `.denied`, a range that overlaps the first MiB of a JPEG, PNG or HEIF
    /// (by its key's extension or content type) comes back with the GPS tags blanked as
    /// ``requestFile(for:options:)`` does: the headers are read to find them, fetched when missing (so such a read
    /// needs the network, or the headers local, to answer).
    /// - Parameters:
    ///   - asset: The asset.
    ///   - range: Bytes of the original; its end is clamped to the size (as HTTP does), but it must start
    ///     before the end. Empty ranges return empty data.
    ///   - isNetworkAccessAllowed: Whether missing bytes may be downloaded (the library's policy applies too).
    /// - Returns: The bytes.
    /// - Throws: ``CloudAssetsError/Code/networkNotAllowed`` when bytes are missing and the network is not allowed;
    ///   ``CloudAssetsError/Code/invalidRange``; ``CloudAssetsError/Code/objectChanged`` when the object
    ///   changed on the server (sync, then read again); transfer errors.
    public func read(_ asset: Asset, range: Range<Int64>, isNetworkAccessAllowed: Bool = true) async throws -> Data {
        try await entry { try await requests.read(asset, range: range, isNetworkAccessAllowed: isNetworkAccessAllowed) }
    }

    /// Requests the asset's data, like `PHImageManager.requestImageDataAndOrientation`.
    ///
    /// Answers come on `options.resultQueue` (or the library's serial delivery queue), in order:
    /// - the original is local (`full`): one answer with its bytes;
    /// - `.opportunistic` with a local thumbnail: the thumbnail at once (``AssetRequestInfo/isDegraded``,
    ///   `isFinal == false`), then the final answer: the original, or — the network not allowed — `nil` with
    ///   ``AssetRequestInfo/isInCloud``, at once (PhotoKit's order: the degraded result first, then the final one);
    /// - `.fastFormat`: one answer with whatever is local (thumbnail marked degraded), never the network;
    /// - not local and the network not allowed (by `options` or the library's policy): the final answer at once,
    ///   without data, with `isInCloud` (after the degraded thumbnail of an `.opportunistic` request) — no
    ///   connection is made.
    ///
    /// A completed download is committed to the store (the asset becomes `full`, observers get the change)
    /// *before* the final answer is delivered.
    ///
    /// Location: with ``Configuration/locationAccess`` `.denied` (the default) an image's bytes (original and
    /// thumbnail) come without GPS tags — the EXIF GPS block unlinked and zeroed, XMP GPS fields blanked, same
    /// length, the rest of the file untouched and still valid; an image whose EXIF cannot be read is not handed
    /// out (the answer carries ``CloudAssetsError/Code/imageUnreadable``). `.granted` hands out the bytes as stored.
    /// - Parameters:
    ///   - asset: The asset.
    ///   - options: Network, delivery mode, progress.
    ///   - resultHandler: Called with the data (or `nil`) and the answer's info.
    /// - Returns: An identifier for ``cancelRequest(_:)``.
    @discardableResult
    public func requestData(
        for asset: Asset, options: AssetRequestOptions = AssetRequestOptions(),
        resultHandler: @escaping @Sendable (Data?, AssetRequestInfo) -> Void
    ) -> AssetRequestID {
        requests.requestData(for: asset, options: options, resultHandler: resultHandler)
    }

    /// Cancels a request made with ``requestData(for:options:resultHandler:)``. Its download stops unless
    /// another request shares it; the request's final answer has ``AssetRequestInfo/isCancelled`` set. Unknown or
    /// finished identifiers are ignored.
    /// - Parameter requestID: The identifier the request returned.
    public func cancelRequest(_ requestID: AssetRequestID) {
        requests.cancelRequest(requestID)
    }

    /// The asset's original bytes (never a degraded stand-in).
    ///
    /// - Parameters:
    ///   - asset: The asset.
    ///   - options: Network and progress; the delivery mode is ignored (the original only).
    /// - Returns: The verified original.
    /// - Throws: ``CloudAssetsError/Code/networkNotAllowed`` when it is not local and the network is not allowed,
    ///   ``CloudAssetsError/Code/cancelled``, or the download's error.
    public func data(for asset: Asset, options: AssetRequestOptions = AssetRequestOptions()) async throws -> Data {
        try await entry { try await requests.data(for: asset, options: options) }
    }

    /// The URL of the asset's verified local original, downloading it first when allowed.
    ///
    /// The file lives in the library's folder and may be evicted later (not while pinned); copy it to keep it.
    /// With ``Configuration/locationAccess`` `.denied`, an image that carries a location is handed out as a copy
    /// without its GPS tags (in the library's `stripped/` folder, removed with the original); the original file
    /// is never modified.
    /// - Parameters:
    ///   - asset: The asset.
    ///   - options: Network and progress.
    /// - Returns: The file URL of the verified original.
    /// - Throws: ``CloudAssetsError/Code/networkNotAllowed``, ``CloudAssetsError/Code/cancelled``, the download's error.
    public func requestFile(for asset: Asset, options: AssetRequestOptions = AssetRequestOptions()) async throws
        -> URL
    {
        try await entry { try await requests.requestFile(for: asset, options: options) }
    }

    /// Writes the asset's data — its original, or with ``AssetRequestOptions/version`` `.current` an edited asset's
    /// rendered version — to a new file at `fileURL` (PhotoKit's
    /// `PHAssetResourceManager.writeData(for:toFile:options:completionHandler:)`).
    ///
    /// An original that is not local is downloaded straight to the file, verified like any download (size, ETag,
    /// checksums), and **not kept in the library**: the asset's availability does not change. It is written once
    /// and named as soon as it is verified, without a sync to the disk first (as `curl -o` writes), so a copy out
    /// costs what a download costs. A local original (or rendered version) is copied from the library. With
    /// ``Configuration/locationAccess`` `.denied`, an image's GPS tags are removed from the file before it gets
    /// its name. The file is written under a temporary name beside `fileURL` and named only when complete,
    /// without replacing anything: a failed, cancelled or interrupted request leaves no file at `fileURL` and
    /// removes its temporary files (a process killed meanwhile can leave one, named `.<name>.cloudassets-….tmp`).
    /// Memory stays bounded whatever the original's size. Safe from any task; cancellation stops the download.
    /// - Parameters:
    ///   - asset: The asset.
    ///   - fileURL: Where to write: nothing may be there yet, and it may not lie in the library's folder.
    ///   - options: Network access, progress and the version, as for ``requestFile(for:options:)``.
    /// - Throws: ``CloudAssetsError/Code/localFileFailed`` when something is at `fileURL`, it is inside the
    ///   library's folder or cannot be written; ``CloudAssetsError/Code/networkNotAllowed`` when the original is
    ///   in the cloud and the network may not be used; the download's errors.
    public func writeData(
        for asset: Asset, toFile fileURL: URL, options: AssetRequestOptions = AssetRequestOptions()
    ) async throws {
        try await entry { try await requests.writeData(for: asset, toFile: fileURL, options: options) }
    }

    /// Hands the asset's original to `dataReceivedHandler` in order, in pieces of at most `chunkSize` bytes, as
    /// its bytes arrive — PhotoKit's `PHAssetResourceManager.requestData(for:options:dataReceivedHandler:)`, named
    /// apart from ``requestData(for:options:resultHandler:)`` (whole data, in a callback).
    /// Memory stays bounded by `chunkSize` whatever the original's size.
    ///
    /// A local verified original is read from its file. Otherwise the original is downloaded into the library
    /// as ``requestFile(for:options:)`` does (resume, retries, verification, `full` committed at the end), and
    /// the bytes are passed on from the download's file as they are written, each time the download reports
    /// progress (``Configuration/progressInterval``) and once more at the end. The handler runs on the calling
    /// task, one call at a time; a slow handler slows only this request, never the download.
    ///
    /// With ``Configuration/locationAccess`` `.denied`, an image's bytes are handed on only once the whole
    /// original is local, from its copy without GPS tags (``requestFile(for:options:)``).
    ///
    /// Bytes are handed on before the whole file is verified: when the download then fails its integrity check
    /// or the object changes on the server after some bytes were handed on (a restart from zero), this throws
    /// and the caller must discard what it received. Nothing is ever handed on twice.
    /// - Parameters:
    ///   - asset: The asset.
    ///   - options: Network access and progress, as for ``requestFile(for:options:)``.
    ///   - chunkSize: The largest piece handed to the handler (default 1 MiB).
    ///   - dataReceivedHandler: Receives the bytes in order; throwing stops the request (the download is
    ///     cancelled; its bytes stay for resume).
    /// - Throws: ``CloudAssetsError/Code/networkNotAllowed``, ``CloudAssetsError/Code/objectChanged`` when bytes
    ///   already handed on no longer belong to the object, the download's errors, the handler's error.
    public func streamData(
        for asset: Asset, options: AssetRequestOptions = AssetRequestOptions(), chunkSize: Int = 1 << 20,
        dataReceivedHandler: (Data) throws -> Void
    ) async throws {
        try await entry {
            try await requests.streamData(
                for: asset, options: options, chunkSize: chunkSize, dataReceivedHandler: dataReceivedHandler)
        }
    }

    /// Requests an image of the asset at the size it will be drawn, like
    /// `PHImageManager.requestImage(for:targetSize:contentMode:options:resultHandler:)`.
    ///
    /// `targetSize` is in pixels of the *displayed* image: EXIF orientation 1–8 (and HEIF's own transforms) are
    /// applied, so the result is upright. The result's size follows ``ImageRequestOptions/resizeMode``: `.exact`
    /// is the displayed size fitted in (or covering) the target; `.fast`, the default, the cheapest decode at
    /// least that size — possibly larger than the target, but never more than twice the `.exact` size on either
    /// side; `.none` the full size. Decoding holds bounded memory: a JPEG is decoded at the smallest of its 1/1,
    /// 1/2, 1/4, 1/8 scales that is not smaller than the target and streamed row by row through an area
    /// resampler, so a 48-megapixel original asked at 512 px never has its full-size pixels in memory; PNG rows are
    /// streamed the same way; HEIF goes through libheif. Images declaring more than
    /// ``ImageRequestOptions/maximumPixelCount`` pixels are refused before any pixel memory is allocated.
    ///
    /// The version drawn is ``ImageRequestOptions/version``: for `.current` (the default) an edited asset's
    /// rendered version (its edit's thumbnail for degraded answers), else the original. The current version at
    /// ``maximumImageSize`` is ``Asset/pixelWidth`` × ``Asset/pixelHeight`` pixels.
    ///
    /// Answers come on `options.resultQueue` (or the library's serial delivery queue), in order:
    /// - an image prepared by ``startCachingImages(for:targetSize:contentMode:options:)``: one answer, at once;
    /// - the version is local: one answer decoded from it;
    /// - `.opportunistic` with a local thumbnail: the thumbnail decoded at the target size first
    ///   (``AssetRequestInfo/isDegraded``, `isFinal == false`), then the version's image — or, when the network
    ///   may not be used, the thumbnail's image as the final answer with ``AssetRequestInfo/isInCloud``;
    /// - `.fastFormat`: one answer from what is local (the thumbnail, degraded), never the network;
    /// - otherwise the version (the original, or the edit's rendered version) is downloaded when allowed
    ///   (progress, cancel and the network policy as for ``requestData(for:options:resultHandler:)``; the
    ///   download is committed, the asset becomes `full`), then decoded; when not allowed, one answer without an
    ///   image and with `isInCloud`.
    ///
    /// Pixels carry no metadata, so no location; encoded results (``AssetImage/jpegData(quality:)``) carry none
    /// either.
    /// - Parameters:
    ///   - asset: The asset.
    ///   - targetSize: Width and height in displayed pixels, or ``maximumImageSize``; how closely the result
    ///     matches it is ``ImageRequestOptions/resizeMode`` (`.fast` by default: up to twice the fitted size).
    ///   - contentMode: Fit inside or cover the target.
    ///   - options: Delivery, resize, network, progress, queue.
    ///   - resultHandler: Called with the image (or `nil`) and the answer's info.
    /// - Returns: An identifier for ``cancelRequest(_:)``: the decode stops at its next row, the download unless
    ///   another request shares it; the final answer has ``AssetRequestInfo/isCancelled`` set.
    @discardableResult
    public func requestImage(
        for asset: Asset, targetSize: CGSize, contentMode: ImageContentMode = .aspectFit,
        options: ImageRequestOptions = ImageRequestOptions(),
        resultHandler: @escaping @Sendable (AssetImage?, ImageRequestInfo) -> Void
    ) -> AssetRequestID {
        requests.requestImage(
            for: asset, targetSize: targetSize, contentMode: contentMode, options: options, resultHandler: resultHandler
        )
    }

    /// The asset's final image at the target size (never a degraded stand-in): the async form of
    /// ``requestImage(for:targetSize:contentMode:options:resultHandler:)`` with `.highQualityFormat`, whatever
    /// `options.deliveryMode` says — the same version (``ImageRequestOptions/version``: an edited asset's rendered
    /// version for `.current`), the same size (``ImageRequestOptions/resizeMode``: `.fast` is at most twice the
    /// fitted size) and the same pixels as that request's answer. Cancelling the task stops the decode and the
    /// download.
    /// - Throws: ``CloudAssetsError/Code/networkNotAllowed`` when the version is not local and the network may
    ///   not be used (the options or the library's ``NetworkPolicy``), ``CloudAssetsError/Code/imageUnreadable``,
    ///   ``CloudAssetsError/Code/imageTooLarge``, ``CloudAssetsError/Code/cancelled``, the download's errors.
    public func image(
        for asset: Asset, targetSize: CGSize, contentMode: ImageContentMode = .aspectFit,
        options: ImageRequestOptions = ImageRequestOptions()
    ) async throws -> AssetImage {
        try await entry {
            try await requests.image(for: asset, targetSize: targetSize, contentMode: contentMode, options: options)
        }
    }

    /// Prepares images of these assets at this size ahead of time (a scroll window), so that requests with the
    /// same size, content mode, resize mode and version answer at once from memory, with the image they would
    /// decode (an edited asset's rendered version for `.current`). Only what is local is decoded unless
    /// `options.isNetworkAccessAllowed` (and the library's ``NetworkPolicy`` lets background work download). The
    /// images kept are bounded by ``Configuration/imageCacheBudget`` (least recently used out first); preparing more
    /// than fits keeps the latest.
    public func startCachingImages(
        for assets: [Asset], targetSize: CGSize, contentMode: ImageContentMode = .aspectFit,
        options: ImageRequestOptions = ImageRequestOptions()
    ) {
        requests.startCachingImages(for: assets, targetSize: targetSize, contentMode: contentMode, options: options)
    }

    /// Stops preparing, and forgets, the images of these assets at this size (other sizes stay).
    public func stopCachingImages(
        for assets: [Asset], targetSize: CGSize, contentMode: ImageContentMode = .aspectFit,
        options: ImageRequestOptions = ImageRequestOptions()
    ) {
        requests.stopCachingImages(for: assets, targetSize: targetSize, contentMode: contentMode, options: options)
    }

    /// Stops every preparation and empties the image cache.
    public func stopCachingImagesForAllAssets() {
        requests.images.remove { _ in true }
    }

    /// Bytes of the images the caching image manager holds now.
    public var cachedImageBytes: Int { requests.images.byteCount }
}
