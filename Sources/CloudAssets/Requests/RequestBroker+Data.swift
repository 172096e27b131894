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
        submit(resultQueue: options.resultQueue, resultHandler: resultHandler) { [self] id, deliver in
            await serve(asset: asset, options: options, requestID: id, deliver: deliver)
        }
    }

    /// ``AssetLibrary/data(for:options:)``.
    func data(for asset: Asset, options: AssetRequestOptions) async throws -> Data {
        let url = try await requestFile(for: asset, options: options)
        do {
            return try LocalFile.read(url)
        } catch {
            throw AssetRequestError.localFile(path: url.path, reason: "\(error)")
        }
    }

    /// ``AssetLibrary/requestFile(for:options:)``.
    func requestFile(for asset: Asset, options: AssetRequestOptions) async throws -> URL {
        let id = cache.nextRequestID()
        // One read of the record (under the asset's download lock) answers "edited?", "local?" and "what to
        // download".
        let local = try await withTaskCancellationHandler {
            try await cache.localOriginal(
                assetID: asset.rowID, options: options, requestID: id, unlessEdited: options.version == .current)
        } onCancel: {
            self.cache.cancelDownloads(forRequest: id)
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
        // try?: unreadable is answered as deleted in the else branch
        guard let record = try? catalog.store.record(id: asset.rowID) else {
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
        // try?: unreadable: answered from the bucket below
        if let url = cache.verifiedOriginal(of: record), let data = try? LocalFile.read(url) {
            cache.noteAccess(record.id!)
            deliverFiltered(data, of: record, info, deliver)
            return
        }
        let thumbnail = await edits.originalThumbnail(record).flatMap { url in
            // try?: a preview only: none when the thumbnail cannot be read
            (try? LocalFile.read(url)).flatMap { try? filteredImageData($0, of: record) }
        }
        await serveFromTheBucket(thumbnail: thumbnail, options: options, info: info, deliver: deliver) {
            let url = try await cache.ensureOriginal(assetID: record.id!, options: options, requestID: requestID)
            deliverFiltered(try LocalFile.read(url), of: record, info, deliver)
        }
    }

    /// Serves the rendered version of an edited asset: local, or its thumbnail (degraded) then the download, by
    /// the delivery mode and network as for originals.
    private func serveRendered(
        _ record: AssetRecord, options: AssetRequestOptions, info: AssetRequestInfo,
        deliver: @escaping @Sendable (Data?, AssetRequestInfo) -> Void
    ) async {
        // try?: unreadable: served from the bucket below
        if let url = edits.localRenderedFile(of: record), let data = try? LocalFile.read(url) {
            deliver(data, info)
            return
        }
        // try?: a preview only: none when the thumbnail cannot be read
        let thumbnail = await edits.currentThumbnailFile(of: record).flatMap { try? LocalFile.read($0) }
        await serveFromTheBucket(thumbnail: thumbnail, options: options, info: info, deliver: deliver) {
            let url = try await edits.requestRenderedFile(of: record, options: options)
            deliver(try LocalFile.read(url), info)
        }
    }

    /// Answers a request whose file is not local, by its delivery mode: `.fastFormat` — the thumbnail (degraded)
    /// or nothing, final, in the cloud; `.opportunistic` — the thumbnail first (degraded, never final), then the
    /// file; `.highQualityFormat` — the file alone. The file is fetched (`fetch` delivers it) only when the request
    /// and the library's policy allow the network; otherwise the final answer is nil with `isInCloud`.
    private func serveFromTheBucket(
        thumbnail: Data?, options: AssetRequestOptions, info: AssetRequestInfo,
        deliver: @escaping @Sendable (Data?, AssetRequestInfo) -> Void, fetch: () async throws -> Void
    ) async {
        switch options.deliveryMode {
        case .fastFormat:
            var answer = info
            answer.isDegraded = thumbnail != nil
            answer.isInCloud = true
            deliver(thumbnail, answer)
            return
        case .opportunistic:
            if let thumbnail {
                var degraded = info
                degraded.isDegraded = true
                degraded.isFinal = false
                deliver(thumbnail, degraded)
            }
        case .highQualityFormat:
            break
        }
        guard options.isNetworkAccessAllowed && network.allows(userRequest: true) else {
            var answer = info
            answer.isInCloud = true
            deliver(nil, answer)
            return
        }
        do {
            try await fetch()
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
