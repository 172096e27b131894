import AssetStore
import Essentials
import Foundation
import S3Transfer

extension RequestBroker {
    /// ``AssetLibrary/requestData(for:options:resultHandler:)``.
    func requestData(
        for asset: Asset, options: AssetRequestOptions,
        resultHandler: @escaping @Sendable (Data?, AssetRequestInfo) -> Void
    ) -> AssetRequestID {
        let id = cache.downloads.nextRequestID()
        let queue = options.resultQueue ?? deliveryQueue
        let registry = cache.downloads
        let deliver: @Sendable (Data?, AssetRequestInfo) -> Void = { data, info in
            // The bookkeeping is done before the final answer is handed over.
            if info.isFinal { registry.finishRequest(id) }
            queue.async { resultHandler(data, info) }
        }
        if isClosed {
            var closed = AssetRequestInfo(requestID: id)
            closed.error = CloudAssetsError(AssetLibraryError.closed)
            deliver(nil, closed)
            return id
        }
        let task = Task { [self] in
            await self.serve(asset: asset, options: options, requestID: id, deliver: deliver)
        }
        cache.downloads.registerRequest(id, task: task)
        return id
    }

    /// ``AssetLibrary/data(for:options:)``.
    func data(for asset: Asset, options: AssetRequestOptions) async throws -> Data {
        let url = try await requestFile(for: asset, options: options)
        do {
            return try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw AssetRequestError.localFile(path: url.path, reason: "\(error)")
        }
    }

    /// ``AssetLibrary/requestFile(for:options:)``.
    func requestFile(for asset: Asset, options: AssetRequestOptions) async throws -> URL {
        let id = cache.downloads.nextRequestID()
        // One read of the record (under the asset's download lock) answers "edited?", "local?" and "what to
        // download".
        let local = try await withTaskCancellationHandler {
            try await cache.localOriginal(
                assetID: asset.rowID, options: options, requestID: id, unlessEdited: options.version == .current)
        } onCancel: {
            self.cache.downloads.cancelDownloads(forRequest: id)
        }
        switch local {
        case .edited(let record):
            // An edit's rendered version carries no location: the editor's output is written without GPS.
            return try await edits.requestRenderedFile(of: record, options: options)
        case .original(let url, let record):
            return try filteredOriginalFile(url, of: record)
        }
    }

    // MARK: - Serving a request

    private func serve(
        asset: Asset, options: AssetRequestOptions, requestID: AssetRequestID,
        deliver: @escaping @Sendable (Data?, AssetRequestInfo) -> Void
    ) async {
        let info = AssetRequestInfo(requestID: requestID)
        guard let record = try? store.record(id: asset.rowID) else {
            var failed = info
            failed.error = CloudAssetsError(AssetRequestError.assetDeleted(localIdentifier: asset.rowID))
            deliver(nil, failed)
            return
        }
        if options.version == .current, record.editRevision != nil {
            await serveRendered(record, options: options, info: info, deliver: deliver)
            return
        }
        // The original is local: one answer.
        if let url = cache.verifiedOriginal(of: record), let data = try? Data(contentsOf: url, options: .mappedIfSafe) {
            cache.downloads.noteAccess(record.id!)
            deliverFiltered(data, of: record, info, deliver)
            return
        }
        let thumbnail = edits.originalThumbnail(record).flatMap { url in
            (try? Data(contentsOf: url)).flatMap { try? filteredImageData($0, of: record) }
        }
        let networkAllowed = options.isNetworkAccessAllowed && isNetworkAllowed(userRequest: true)
        switch options.deliveryMode {
        case .fastFormat:
            var answer = info
            answer.isDegraded = thumbnail != nil
            answer.isInCloud = true
            deliver(thumbnail, answer)
            return
        case .opportunistic:
            // The thumbnail first, never final: the final answer is the original, or nil with `isInCloud`.
            if let thumbnail {
                var degraded = info
                degraded.isDegraded = true
                degraded.isFinal = false
                deliver(thumbnail, degraded)
            }
        case .highQualityFormat:
            break
        }
        guard networkAllowed else {
            var answer = info
            answer.isInCloud = true
            deliver(nil, answer)
            return
        }
        do {
            let url = try await cache.ensureOriginal(assetID: record.id!, options: options, requestID: requestID)
            let data = try Data(contentsOf: url, options: .mappedIfSafe)
            deliverFiltered(data, of: record, info, deliver)
        } catch {
            deliver(nil, Self.failedAnswer(info, error))
        }
    }

    /// Serves the rendered version of an edited asset: local, or its thumbnail (degraded) then the download, by
    /// the delivery mode and network as for originals.
    private func serveRendered(
        _ record: AssetRecord, options: AssetRequestOptions, info: AssetRequestInfo,
        deliver: @escaping @Sendable (Data?, AssetRequestInfo) -> Void
    ) async {
        if let url = edits.localRenderedFile(of: record), let data = try? Data(contentsOf: url, options: .mappedIfSafe)
        {
            deliver(data, info)
            return
        }
        let thumbnail = edits.currentThumbnailFile(of: record).flatMap { try? Data(contentsOf: $0) }
        let networkAllowed = options.isNetworkAccessAllowed && isNetworkAllowed(userRequest: true)
        if options.deliveryMode == .fastFormat {
            var answer = info
            answer.isDegraded = thumbnail != nil
            answer.isInCloud = true
            deliver(thumbnail, answer)
            return
        }
        if options.deliveryMode == .opportunistic, let thumbnail {
            var degraded = info
            degraded.isDegraded = true
            degraded.isFinal = false
            deliver(thumbnail, degraded)
        }
        guard networkAllowed else {
            var answer = info
            answer.isInCloud = true
            deliver(nil, answer)
            return
        }
        do {
            let url = try await edits.requestRenderedFile(of: record, options: options)
            deliver(try Data(contentsOf: url, options: .mappedIfSafe), info)
        } catch {
            deliver(nil, Self.failedAnswer(info, error))
        }
    }

    /// Hands on an original's bytes as this library may show them (without location when denied), or the
    /// error that prevented it.
    private func deliverFiltered(
        _ data: Data, of record: AssetRecord, _ info: AssetRequestInfo,
        _ deliver: @Sendable (Data?, AssetRequestInfo) -> Void
    ) {
        do {
            deliver(try filteredImageData(data, of: record), info)
        } catch {
            var failed = info
            failed.error = CloudAssetsError.reported(error)
            deliver(nil, failed)
        }
    }

    /// The final answer of a request that failed with `error`: cancelled, in the cloud, or the error.
    static func failedAnswer(_ info: AssetRequestInfo, _ error: any Error) -> AssetRequestInfo {
        var answer = info
        if Task.isCancelled || isCancellation(error) {
            answer.isCancelled = true
        } else {
            answer.error = CloudAssetsError.reported(error)
        }
        if case AssetRequestError.inCloud = error { answer.isInCloud = true }
        return answer
    }

    static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if case AssetRequestError.cancelled = error { return true }
        if let s3 = error as? S3Error, case .cancelled = s3 { return true }
        return false
    }
}
