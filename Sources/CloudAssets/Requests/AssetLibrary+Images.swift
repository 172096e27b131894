import AssetStore
public import Foundation
import Images
import S3Transfer

extension AssetLibrary {
    /// Passed as a target size: the full-size image (like `PHImageManagerMaximumSize`).
    public static let maximumImageSize = CGSize(width: -1, height: -1)

    /// Requests an image of the asset at the size it will be drawn, like
    /// `PHImageManager.requestImage(for:targetSize:contentMode:options:resultHandler:)`.
    ///
    /// `targetSize` is in pixels of the *displayed* image: EXIF orientation 1–8 (and HEIF's own transforms) are
    /// applied, so the result is upright. Decoding holds bounded memory: a JPEG is decoded at the smallest of its
    /// 1/1, 1/2, 1/4, 1/8 scales that is not smaller than the target and streamed row by row through an area
    /// resampler, so a 48-megapixel original asked at 512 px never has its full-size pixels in memory; PNG rows are
    /// streamed the same way; HEIF goes through libheif. Images declaring more than
    /// ``ImageRequestOptions/maximumPixelCount`` pixels are refused before any pixel memory is allocated.
    ///
    /// Answers come on `options.resultQueue` (or the library's serial delivery queue), in order:
    /// - an image prepared by ``startCachingImages(for:targetSize:contentMode:options:)``: one answer, at once;
    /// - the original is local: one answer decoded from it;
    /// - `.opportunistic` with a local thumbnail: the thumbnail decoded at the target size first
    ///   (``ImageRequestInfo/isDegraded``, `isFinal == false`), then the original's image — or, when the network
    ///   may not be used, the thumbnail's image as the final answer with ``ImageRequestInfo/isInCloud``;
    /// - `.fastFormat`: one answer from what is local (the thumbnail, degraded), never the network;
    /// - otherwise the original is downloaded when allowed (progress, cancel and the network policy as for
    ///   ``requestData(for:options:resultHandler:)``; the download is committed, the asset becomes `full`), then
    ///   decoded; when not allowed, one answer without an image and with `isInCloud`.
    ///
    /// Pixels carry no metadata, so no location; encoded results (``AssetImage/jpegData(quality:)``) carry none
    /// either.
    /// - Parameters:
    ///   - asset: The asset.
    ///   - targetSize: Width and height in displayed pixels, or ``maximumImageSize``.
    ///   - contentMode: Fit inside or cover the target.
    ///   - options: Delivery, resize, network, progress, queue.
    ///   - resultHandler: Called with the image (or `nil`) and the answer's info.
    /// - Returns: An identifier for ``cancelRequest(_:)``: the decode stops at its next row, the download unless
    ///   another request shares it; the final answer has ``ImageRequestInfo/isCancelled`` set.
    @discardableResult
    public func requestImage(
        for asset: Asset, targetSize: CGSize, contentMode: ImageContentMode = .aspectFit,
        options: ImageRequestOptions = ImageRequestOptions(),
        resultHandler: @escaping @Sendable (AssetImage?, ImageRequestInfo) -> Void
    ) -> AssetRequestID {
        let id = runtime.nextRequestID()
        let queue = options.resultQueue ?? runtime.deliveryQueue
        let runtime = self.runtime
        let deliver: @Sendable (AssetImage?, ImageRequestInfo) -> Void = { image, info in
            if info.isFinal { runtime.finishRequest(id) }
            queue.async { resultHandler(image, info) }
        }
        if isClosed {
            var closed = ImageRequestInfo(requestID: id)
            closed.error = CloudAssetsError(AssetLibraryError.closed)
            deliver(nil, closed)
            return id
        }
        let task = Task { [self] in
            await self.serveImage(
                asset: asset, targetSize: targetSize, contentMode: contentMode, options: options, requestID: id,
                deliver: deliver)
        }
        runtime.registerRequest(id, task: task)
        return id
    }

    /// The asset's final image at the target size (never a degraded stand-in): the async form of
    /// ``requestImage(for:targetSize:contentMode:options:resultHandler:)`` with `.highQualityFormat`.
    /// Cancelling the task stops the decode and the download.
    /// - Throws: ``CloudAssetsError/Code/networkNotAllowed`` when the original is not local and the network is not
    ///   allowed, ``CloudAssetsError/Code/imageUnreadable``, ``CloudAssetsError/Code/imageTooLarge``,
    ///   ``CloudAssetsError/Code/cancelled``, the download's errors.
    public func image(
        for asset: Asset, targetSize: CGSize, contentMode: ImageContentMode = .aspectFit,
        options: ImageRequestOptions = ImageRequestOptions()
    ) async throws -> AssetImage {
        try await entry {
            let request = ImageBridge.request(
                targetSize: Self.pixelTarget(targetSize), contentMode: contentMode, resizeMode: options.resizeMode,
                maximumPixelCount: options.maximumPixelCount,
                allowsUpscaling: options.allowsUpscaling)
            guard let record = try store.record(id: asset.rowID) else {
                throw AssetRequestError.assetDeleted(localIdentifier: asset.rowID)
            }
            if let key = Self.cacheKey(record, request, contentMode, options),
                let image = runtime.images.image(for: key)
            {
                return image
            }
            let url = try await requestOriginalForImage(record: record, options: options, requestID: nil)
            return try await ImageBridge.decode(.file(url), request: request).0
        }
    }

    // MARK: - Caching, like PHCachingImageManager

    /// Prepares images of these assets at this size ahead of time (a scroll window), so that requests with the
    /// same size, content mode and resize mode answer at once from memory. Only local originals are decoded unless
    /// `options.isNetworkAccessAllowed`. The images kept are bounded by ``Configuration/imageCacheBudget`` (least
    /// recently used out first); preparing more than fits keeps the latest.
    public func startCachingImages(
        for assets: [Asset], targetSize: CGSize, contentMode: ImageContentMode = .aspectFit,
        options: ImageRequestOptions = ImageRequestOptions()
    ) {
        let request = ImageBridge.request(
            targetSize: Self.pixelTarget(targetSize), contentMode: contentMode, resizeMode: options.resizeMode,
            maximumPixelCount: options.maximumPixelCount,
            allowsUpscaling: options.allowsUpscaling)
        guard let records = try? store.records(ids: assets.map(\.rowID)) else { return }
        let budget = configuration.imageCacheBudget
        for record in records {
            guard let key = Self.cacheKey(record, request, contentMode, options) else { continue }
            runtime.images.prepare(key) { [self] in
                guard
                    let url = try? await requestOriginalForImage(
                        record: record, options: options, requestID: nil, priority: .prefetch),
                    let (image, _) = try? await ImageBridge.decode(.file(url), request: request)
                else { return }
                runtime.images.insert(image, for: key, budget: budget)
            }
        }
    }

    /// Stops preparing, and forgets, the images of these assets at this size (other sizes stay).
    public func stopCachingImages(
        for assets: [Asset], targetSize: CGSize, contentMode: ImageContentMode = .aspectFit,
        options: ImageRequestOptions = ImageRequestOptions()
    ) {
        let request = ImageBridge.request(
            targetSize: Self.pixelTarget(targetSize), contentMode: contentMode, resizeMode: options.resizeMode,
            maximumPixelCount: options.maximumPixelCount,
            allowsUpscaling: options.allowsUpscaling)
        let ids = Set(assets.map(\.rowID))
        runtime.images.remove { key in
            ids.contains(key.assetID) && key.width == request.targetWidth && key.height == request.targetHeight
                && key.contentMode == contentMode && key.resizeMode == options.resizeMode
        }
    }

    /// Stops every preparation and empties the image cache.
    public func stopCachingImagesForAllAssets() {
        runtime.images.remove { _ in true }
    }

    /// Bytes of decoded pixels the image cache holds now.
    public var cachedImageBytes: Int { runtime.images.byteCount }

    // MARK: - Serving a request

    private func serveImage(
        asset: Asset, targetSize: CGSize, contentMode: ImageContentMode, options: ImageRequestOptions,
        requestID: AssetRequestID, deliver: @escaping @Sendable (AssetImage?, ImageRequestInfo) -> Void
    ) async {
        let info = ImageRequestInfo(requestID: requestID)
        func fail(_ error: any Error, _ base: ImageRequestInfo) {
            var answer = base
            answer.isDegraded = false
            answer.isFinal = true
            if Task.isCancelled || Self.isCancellation(error) || (error as? ImageError) == .cancelled {
                answer.isCancelled = true
            } else {
                answer.error = CloudAssetsError.reported(error)
            }
            if case AssetRequestError.inCloud = error { answer.isInCloud = true }
            deliver(nil, answer)
        }
        let request = ImageBridge.request(
            targetSize: Self.pixelTarget(targetSize), contentMode: contentMode, resizeMode: options.resizeMode,
            maximumPixelCount: options.maximumPixelCount,
            allowsUpscaling: options.allowsUpscaling)
        guard let record = try? store.record(id: asset.rowID), let assetID = record.id else {
            fail(AssetRequestError.assetDeleted(localIdentifier: asset.rowID), info)
            return
        }
        if let key = Self.cacheKey(record, request, contentMode, options), let image = runtime.images.image(for: key) {
            deliver(image, info)
            return
        }
        // The current version of an edited asset is its rendered version, with the edit's thumbnail.
        let edited = options.version == .current && record.editRevision != nil
        do {
            if let url = edited ? localRenderedFile(of: record) : verifiedOriginal(of: record) {
                runtime.noteAccess(assetID)
                let (image, statistics) = try await ImageBridge.decode(.file(url), request: request)
                var answer = info
                answer.peakDecodeBytes = statistics.peakPixelBytes
                deliver(image, answer)
                return
            }
            let networkAllowed = options.isNetworkAccessAllowed && isNetworkAllowed(userRequest: true)
            let thumbnail = options.version == .current ? currentThumbnailFile(of: record) : originalThumbnail(record)
            if options.deliveryMode != .highQualityFormat, let thumbnail {
                let (image, statistics) = try await ImageBridge.decode(.file(thumbnail), request: request)
                var degraded = info
                degraded.isDegraded = true
                degraded.peakDecodeBytes = statistics.peakPixelBytes
                degraded.isInCloud = !networkAllowed || options.deliveryMode == .fastFormat
                degraded.isFinal = degraded.isInCloud
                deliver(image, degraded)
                if degraded.isFinal { return }
            } else if options.deliveryMode == .fastFormat || !networkAllowed {
                var answer = info
                answer.isInCloud = true
                deliver(nil, answer)
                return
            }
            let url =
                edited
                ? try await requestRenderedFile(of: record, options: options.dataOptions)
                : try await requestOriginalForImage(record: record, options: options, requestID: requestID)
            let (image, statistics) = try await ImageBridge.decode(.file(url), request: request)
            var answer = info
            answer.peakDecodeBytes = statistics.peakPixelBytes
            deliver(image, answer)
        } catch {
            fail(error, info)
        }
    }

    /// The local original an image is decoded from, downloaded first when the options and policy allow.
    private func requestOriginalForImage(
        record: AssetRecord, options: ImageRequestOptions, requestID: AssetRequestID?,
        priority: DownloadPriority = .userInitiated
    ) async throws -> URL {
        var dataOptions = AssetRequestOptions()
        dataOptions.isNetworkAccessAllowed = options.isNetworkAccessAllowed
        dataOptions.progressHandler = options.progressHandler
        let id = requestID ?? runtime.nextRequestID()
        return try await withTaskCancellationHandler {
            try await ensureOriginal(
                assetID: record.id!, options: dataOptions, requestID: id, priority: priority,
                isUserRequest: priority == .userInitiated)
        } onCancel: {
            self.runtime.cancelDownloads(forRequest: id)
        }
    }

    /// A target size in pixels, or nil for the full size (``maximumImageSize`` or any non-positive side).
    static func pixelTarget(_ size: CGSize) -> CGSize? {
        size.width > 0 && size.height > 0 ? size : nil
    }

    static func cacheKey(
        _ record: AssetRecord, _ request: DecodeRequest, _ contentMode: ImageContentMode, _ options: ImageRequestOptions
    ) -> ImageCache.Key? {
        guard let id = record.id else { return nil }
        let version = options.version == .current ? record.editRevision.map { "#" + $0 } ?? "" : ""
        return ImageCache.Key(
            assetID: id, etag: record.etag + version, width: request.targetWidth, height: request.targetHeight,
            contentMode: contentMode, resizeMode: options.resizeMode, allowsUpscaling: options.allowsUpscaling)
    }
}
