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
    ///   (``ImageRequestInfo/isDegraded``, `isFinal == false`), then the version's image — or, when the network
    ///   may not be used, the thumbnail's image as the final answer with ``ImageRequestInfo/isInCloud``;
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
            var options = options
            options.deliveryMode = .highQualityFormat
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
            switch try await finalImage(
                record: record, request: request, options: options, requestID: runtime.nextRequestID())
            {
            case .decoded(let image, _): return image
            case .inCloud, .degradedWasFinal:
                throw AssetRequestError.inCloud(key: record.key, localIdentifier: record.id)
            }
        }
    }

    // MARK: - Caching, like PHCachingImageManager

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
        let request = ImageBridge.request(
            targetSize: Self.pixelTarget(targetSize), contentMode: contentMode, resizeMode: options.resizeMode,
            maximumPixelCount: options.maximumPixelCount,
            allowsUpscaling: options.allowsUpscaling)
        guard let records = try? store.records(ids: assets.map(\.rowID)) else { return }
        let budget = configuration.imageCacheBudget
        // Prepared images are final ones (what a request would answer last).
        var finalOnly = options
        finalOnly.deliveryMode = .highQualityFormat
        for record in records {
            guard let key = Self.cacheKey(record, request, contentMode, options) else { continue }
            runtime.images.prepare(key) { [self, options = finalOnly] in
                guard
                    case .decoded(let image, _)? = try? await finalImage(
                        record: record, request: request, options: options, requestID: runtime.nextRequestID(),
                        priority: .prefetch)
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
        guard let record = try? store.record(id: asset.rowID), record.id != nil else {
            fail(AssetRequestError.assetDeleted(localIdentifier: asset.rowID), info)
            return
        }
        if let key = Self.cacheKey(record, request, contentMode, options), let image = runtime.images.image(for: key) {
            deliver(image, info)
            return
        }
        do {
            let final = try await finalImage(record: record, request: request, options: options, requestID: requestID) {
                image, peakBytes, isFinal in
                var degraded = info
                degraded.isDegraded = true
                degraded.peakDecodeBytes = peakBytes
                degraded.isInCloud = isFinal
                degraded.isFinal = isFinal
                deliver(image, degraded)
            }
            switch final {
            case .decoded(let image, let peakBytes):
                var answer = info
                answer.peakDecodeBytes = peakBytes
                deliver(image, answer)
            case .inCloud:
                var answer = info
                answer.isInCloud = true
                deliver(nil, answer)
            case .degradedWasFinal:
                return
            }
        } catch {
            fail(error, info)
        }
    }

    /// How the path every image request shares ended.
    private enum FinalImage {
        /// The final image, decoded holding at most this many bytes of pixels.
        case decoded(AssetImage, peakBytes: Int)
        /// The degraded image handed out was the final answer (the version is in the cloud).
        case degradedWasFinal
        /// The version is not local and may not be downloaded (the options, the policy, or `.fastFormat`); no
        /// degraded image was handed out.
        case inCloud
    }

    /// The one path of every image request — ``requestImage(for:targetSize:contentMode:options:resultHandler:)``
    /// in each delivery mode, ``image(for:targetSize:contentMode:options:)`` and
    /// ``startCachingImages(for:targetSize:contentMode:options:)`` (both `.highQualityFormat`) — so that they serve
    /// the same version, decoded the same way, for the same options.
    ///
    /// The version is the current edit's rendered version for `options.version == .current` on an edited asset,
    /// else the original. Local: decoded. Otherwise, unless `.highQualityFormat`, the version's local thumbnail is
    /// decoded and handed to `degraded` first (`isFinal` when the network may not be used or `.fastFormat`: then
    /// that is the answer); then the version is downloaded and decoded when the options and the policy (for
    /// `priority`) allow.
    private func finalImage(
        record: AssetRecord, request: DecodeRequest, options: ImageRequestOptions, requestID: AssetRequestID,
        priority: DownloadPriority = .userInitiated,
        degraded: (_ image: AssetImage, _ peakBytes: Int, _ isFinal: Bool) -> Void = { _, _, _ in }
    ) async throws -> FinalImage {
        guard let assetID = record.id else { throw AssetRequestError.assetDeleted(localIdentifier: 0) }
        // The current version of an edited asset is its rendered version, with the edit's thumbnail.
        let edited = options.version == .current && record.editRevision != nil
        if let url = edited ? localRenderedFile(of: record) : verifiedOriginal(of: record) {
            runtime.noteAccess(assetID)
            let (image, statistics) = try await ImageBridge.decode(.file(url), request: request)
            return .decoded(image, peakBytes: statistics.peakPixelBytes)
        }
        let networkAllowed =
            options.isNetworkAccessAllowed && isNetworkAllowed(userRequest: priority == .userInitiated)
        let thumbnail = options.version == .current ? currentThumbnailFile(of: record) : originalThumbnail(record)
        if options.deliveryMode != .highQualityFormat, let thumbnail {
            let (image, statistics) = try await ImageBridge.decode(.file(thumbnail), request: request)
            let isFinal = !networkAllowed || options.deliveryMode == .fastFormat
            degraded(image, statistics.peakPixelBytes, isFinal)
            if isFinal { return .degradedWasFinal }
        } else if options.deliveryMode == .fastFormat || !networkAllowed {
            return .inCloud
        }
        let url =
            edited
            ? try await requestRenderedFile(of: record, options: options.dataOptions)
            : try await requestOriginalForImage(
                record: record, options: options, requestID: requestID, priority: priority)
        let (image, statistics) = try await ImageBridge.decode(.file(url), request: request)
        return .decoded(image, peakBytes: statistics.peakPixelBytes)
    }

    /// The local original an image is decoded from, downloaded first when the options and policy allow.
    private func requestOriginalForImage(
        record: AssetRecord, options: ImageRequestOptions, requestID id: AssetRequestID,
        priority: DownloadPriority
    ) async throws -> URL {
        var dataOptions = AssetRequestOptions()
        dataOptions.isNetworkAccessAllowed = options.isNetworkAccessAllowed
        dataOptions.progressHandler = options.progressHandler
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
