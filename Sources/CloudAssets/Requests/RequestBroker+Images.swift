import AssetStore
import Foundation
import Images
import S3Transfer

extension RequestBroker {
    /// ``AssetLibrary/requestImage(for:targetSize:contentMode:options:resultHandler:)``.
    func requestImage(
        for asset: Asset, targetSize: CGSize, contentMode: ImageContentMode, options: ImageRequestOptions,
        resultHandler: @escaping @Sendable (AssetImage?, ImageRequestInfo) -> Void
    ) -> AssetRequestID {
        submit(resultQueue: options.resultQueue, resultHandler: resultHandler) { [self] id, deliver in
            await serveImage(
                asset: asset, targetSize: targetSize, contentMode: contentMode, options: options, requestID: id,
                deliver: deliver)
        }
    }

    /// ``AssetLibrary/image(for:targetSize:contentMode:options:)``.
    func image(
        for asset: Asset, targetSize: CGSize, contentMode: ImageContentMode, options: ImageRequestOptions
    ) async throws -> AssetImage {
        var options = options
        options.deliveryMode = .highQualityFormat
        let request = Self.decodeRequest(targetSize: targetSize, contentMode: contentMode, options: options)
        guard let record = try catalog.store.record(id: asset.rowID) else {
            throw AssetRequestError.assetDeleted(localIdentifier: asset.rowID)
        }
        if let key = Self.cacheKey(record, request, contentMode, options),
            let image = images.image(for: key)
        {
            return image
        }
        switch try await finalImage(
            record: record, request: request, options: options, requestID: cache.nextRequestID())
        {
        case .decoded(let image, _): return image
        case .inCloud, .degradedWasFinal:
            // Only the network stops a high-quality request short of its final image.
            throw AssetRequestError.inCloud(
                key: record.key, localIdentifier: record.id,
                refusedBy: NetworkRefusal(requestAllowed: options.isNetworkAccessAllowed))
        }
    }

    // MARK: - Caching, like PHCachingImageManager

    /// ``AssetLibrary/startCachingImages(for:targetSize:contentMode:options:)``.
    func startCachingImages(
        for assets: [Asset], targetSize: CGSize, contentMode: ImageContentMode, options: ImageRequestOptions
    ) {
        let request = Self.decodeRequest(targetSize: targetSize, contentMode: contentMode, options: options)
        // try?: a cache warm-up: nothing is prepared, requests still work
        guard let records = try? catalog.store.records(ids: assets.map(\.rowID)) else { return }
        let budget = configuration.imageCacheBudget
        // Prepared images are final ones (what a request would answer last).
        var finalOnly = options
        finalOnly.deliveryMode = .highQualityFormat
        for record in records {
            guard let key = Self.cacheKey(record, request, contentMode, options) else { continue }
            images.prepare(key) { [self, options = finalOnly] in
                guard
                    // try?: a cache warm-up: a failed image is made when requested
                    case .decoded(let image, _)? = try? await finalImage(
                        record: record, request: request, options: options, requestID: cache.nextRequestID(),
                        priority: .prefetch)
                else { return }
                images.insert(image, for: key, budget: budget)
            }
        }
    }

    /// ``AssetLibrary/stopCachingImages(for:targetSize:contentMode:options:)``.
    func stopCachingImages(
        for assets: [Asset], targetSize: CGSize, contentMode: ImageContentMode, options: ImageRequestOptions
    ) {
        let request = Self.decodeRequest(targetSize: targetSize, contentMode: contentMode, options: options)
        let ids = Set(assets.map(\.rowID))
        images.remove { key in
            ids.contains(key.assetID) && key.width == request.targetWidth && key.height == request.targetHeight
                && key.contentMode == contentMode && key.resizeMode == options.resizeMode
        }
    }

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
        let request = Self.decodeRequest(targetSize: targetSize, contentMode: contentMode, options: options)
        // try?: answered as deleted in the else branch
        guard let record = try? catalog.store.record(id: asset.rowID), record.id != nil else {
            fail(AssetRequestError.assetDeleted(localIdentifier: asset.rowID), info)
            return
        }
        if let key = Self.cacheKey(record, request, contentMode, options), let image = images.image(for: key) {
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
    /// else the original; a video's image is its poster frame (``OriginalsCache/posterFrame(of:request:isNetworkAccessAllowed:)``:
    /// by range when the original is not local, never downloaded whole). Local: decoded. Otherwise, unless `.highQualityFormat`, the version's local thumbnail is
    /// decoded and handed to `degraded` first (`isFinal` when the network may not be used or `.fastFormat`: then
    /// that is the answer); then the version is downloaded and decoded when the options and the policy (for
    /// `priority`) allow.
    private func finalImage(
        record: AssetRecord, request: DecodeRequest, options: ImageRequestOptions, requestID: AssetRequestID,
        priority: DownloadPriority = .userInitiated,
        degraded: (_ image: AssetImage, _ peakBytes: Int, _ isFinal: Bool) -> Void = { _, _, _ in }
    ) async throws -> FinalImage {
        guard let assetID = record.id else { throw AssetRequestError.assetDeleted(localIdentifier: 0) }
        // A video's image is its poster frame. The current version of an edited asset is its rendered version,
        // with the edit's thumbnail.
        let video = record.mediaType == .video
        let edited = !video && options.version == .current && record.editRevision != nil
        if let url = edited ? edits.localRenderedFile(of: record) : cache.verifiedOriginal(of: record) {
            cache.noteAccess(assetID)
            let (image, statistics) =
                video
                ? try await Self.posterOnly(ImageBridge.posterFrame(.file(url), request: request))
                : try await ImageBridge.decode(.file(url), request: request)
            return .decoded(image, peakBytes: statistics.peakPixelBytes)
        }
        if video, record.availability == .partial,
            // try?: not every byte the frame needs is cached: the paths below decide, with the network or not
            let (image, statistics, _) = try? await cache.posterFrame(
                of: record, request: request, isNetworkAccessAllowed: false)
        {
            return .decoded(image, peakBytes: statistics.peakPixelBytes)
        }
        let networkAllowed =
            options.isNetworkAccessAllowed && network.allows(userRequest: priority == .userInitiated)
        let thumbnail =
            options.version == .current
            ? await edits.currentThumbnailFile(of: record) : await edits.originalThumbnail(record)
        if options.deliveryMode != .highQualityFormat, let thumbnail {
            let (image, statistics) = try await ImageBridge.decode(.file(thumbnail), request: request)
            let isFinal = !networkAllowed || options.deliveryMode == .fastFormat
            degraded(image, statistics.peakPixelBytes, isFinal)
            if isFinal { return .degradedWasFinal }
        } else if options.deliveryMode == .fastFormat || !networkAllowed {
            return .inCloud
        }
        if video {
            // The container's boxes and the first keyframe, by range: the video is not downloaded.
            let (image, statistics, _) = try await cache.posterFrame(
                of: record, request: request, isNetworkAccessAllowed: true)
            return .decoded(image, peakBytes: statistics.peakPixelBytes)
        }
        let url =
            edited
            ? try await edits.requestRenderedFile(of: record, options: options.dataOptions)
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
            try await cache.ensureOriginal(
                assetID: record.id!, options: dataOptions, requestID: id, priority: priority,
                isUserRequest: priority == .userInitiated)
        } onCancel: {
            self.cache.cancelDownloads(forRequest: id)
        }
    }

    /// A poster frame's image and statistics, without the count of bytes read.
    private static func posterOnly(_ decoded: (image: AssetImage, statistics: DecodeStatistics, bytesRead: Int64))
        -> (AssetImage, DecodeStatistics)
    {
        (decoded.image, decoded.statistics)
    }

    /// What a request for `targetSize` decodes to, by its options.
    static func decodeRequest(targetSize: CGSize, contentMode: ImageContentMode, options: ImageRequestOptions)
        -> DecodeRequest
    {
        ImageBridge.request(
            targetSize: pixelTarget(targetSize), contentMode: contentMode, resizeMode: options.resizeMode,
            maximumPixelCount: options.maximumPixelCount, allowsUpscaling: options.allowsUpscaling)
    }

    /// A target size in pixels, or nil for the full size (``AssetLibrary/maximumImageSize`` or any non-positive side).
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
