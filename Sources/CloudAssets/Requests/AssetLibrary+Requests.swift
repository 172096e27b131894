import AssetStore
import Essentials
public import Foundation
import S3Transfer

extension AssetLibrary {
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
        let id = runtime.nextRequestID()
        let queue = options.resultQueue ?? runtime.deliveryQueue
        let runtime = self.runtime
        let deliver: @Sendable (Data?, AssetRequestInfo) -> Void = { data, info in
            // The bookkeeping is done before the final answer is handed over.
            if info.isFinal { runtime.finishRequest(id) }
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
        runtime.registerRequest(id, task: task)
        return id
    }

    /// Cancels a request made with ``requestData(for:options:resultHandler:)``. Its download stops unless
    /// another request shares it; the request's final answer has ``AssetRequestInfo/isCancelled`` set. Unknown or
    /// finished identifiers are ignored.
    /// - Parameter requestID: The identifier the request returned.
    public func cancelRequest(_ requestID: AssetRequestID) {
        runtime.cancelRequest(requestID)
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
        return try await entry {
            let url = try await requestFile(for: asset, options: options)
            do {
                return try Data(contentsOf: url, options: .mappedIfSafe)
            } catch {
                throw AssetRequestError.localFile(path: url.path, reason: "\(error)")
            }
        }
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
        return try await entry {
            let id = runtime.nextRequestID()
            // One read of the record (under the asset's download lock) answers "edited?", "local?" and "what to
            // download".
            let local = try await withTaskCancellationHandler {
                try await localOriginal(
                    assetID: asset.rowID, options: options, requestID: id, unlessEdited: options.version == .current)
            } onCancel: {
                self.runtime.cancelDownloads(forRequest: id)
            }
            switch local {
            case .edited(let record):
                // An edit's rendered version carries no location: the editor's output is written without GPS.
                return try await requestRenderedFile(of: record, options: options)
            case .original(let url, let record):
                return try filteredOriginalFile(url, of: record)
            }
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
        if let url = verifiedOriginal(of: record), let data = try? Data(contentsOf: url, options: .mappedIfSafe) {
            runtime.noteAccess(record.id!)
            deliverFiltered(data, of: record, info, deliver)
            return
        }
        let thumbnail = originalThumbnail(record).flatMap { url in
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
            let url = try await ensureOriginal(assetID: record.id!, options: options, requestID: requestID)
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
        if let url = localRenderedFile(of: record), let data = try? Data(contentsOf: url, options: .mappedIfSafe) {
            deliver(data, info)
            return
        }
        let thumbnail = currentThumbnailFile(of: record).flatMap { try? Data(contentsOf: $0) }
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
            let url = try await requestRenderedFile(of: record, options: options)
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

    /// The verified original's URL when the record says `full` and a regular file is there with the verified size.
    func verifiedOriginal(of record: AssetRecord) -> URL? {
        guard record.availability == .full, let stored = record.localFilePath,
            let url = files.url(forStoredPath: stored)
        else { return nil }
        // `lstat`: a link is no file of ours (and costs no attribute dictionary per asset).
        guard let size = LocalFiles.regularFileSize(url.path), size == record.verifiedSize else { return nil }
        return url
    }

    /// Makes the original local (downloading it when allowed) and commits `full`; returns its URL.
    func ensureOriginal(
        assetID: Int64, options: AssetRequestOptions, requestID: AssetRequestID,
        priority: DownloadPriority =
            .userInitiated, isUserRequest: Bool = true
    ) async throws -> URL {
        let local = try await localOriginal(
            assetID: assetID, options: options, requestID: requestID, priority: priority,
            isUserRequest: isUserRequest, unlessEdited: false)
        guard case .original(let url, _) = local else { throw AssetRequestError.assetDeleted(localIdentifier: assetID) }
        return url
    }

    /// What ``localOriginal(assetID:options:requestID:priority:isUserRequest:unlessEdited:)`` found or made.
    enum LocalOriginal {
        /// The verified original's file, and the asset's record as read under its download lock (with the
        /// download's commit applied, when it was downloaded).
        case original(URL, AssetRecord)
        /// The asset is edited (asked with `unlessEdited`): nothing was downloaded.
        case edited(AssetRecord)
    }

    /// ``ensureOriginal(assetID:options:requestID:priority:isUserRequest:)`` that also hands back the record it
    /// read, so that a caller needs no read of its own; with `unlessEdited`, an edited asset is answered
    /// ``LocalOriginal/edited(_:)`` at once (its rendered version is what is wanted).
    func localOriginal(
        assetID: Int64, options: AssetRequestOptions, requestID: AssetRequestID,
        priority: DownloadPriority = .userInitiated, isUserRequest: Bool = true, unlessEdited: Bool
    ) async throws -> LocalOriginal {
        // One library downloads an original at a time (another process's too): wait for it, then use its file.
        // The lock is taken first, so one read of the record answers both "is it local?" and "what to download".
        try await services.downloadLocks.acquire(assetID, in: lock)
        defer { services.downloadLocks.release(assetID, in: lock) }
        guard let record = try store.record(id: assetID) else {
            throw AssetRequestError.assetDeleted(localIdentifier: assetID)
        }
        if unlessEdited, record.editRevision != nil { return .edited(record) }
        if let url = verifiedOriginal(of: record) {
            runtime.noteAccess(assetID)
            return .original(url, record)
        }
        guard options.isNetworkAccessAllowed, isNetworkAllowed(userRequest: isUserRequest) else {
            throw AssetRequestError.inCloud(key: record.key, localIdentifier: record.id)
        }
        let remote = try requireRemote()
        let destination = files.original(id: assetID, key: record.key)
        let request = DownloadRequest(
            bucket: configuration.bucket, key: record.key, destination: destination, expectedETag: record.etag,
            expectedSize: record.size, priority: priority, isUserRequest: isUserRequest,
            networkAccessAllowed: true, progressQueue: runtime.progressQueue,
            progress: options.downloadProgress(requestID: requestID))
        let handle = remote.downloader.download(request)
        runtime.track(handle, asset: assetID, request: requestID)
        defer { runtime.untrack(handle, asset: assetID, request: requestID) }
        let result: DownloadResult
        do {
            result = try await withTaskCancellationHandler {
                try await handle.result()
            } onCancel: {
                handle.cancel()
            }
        } catch let error as S3Error {
            discardLeftoverPart(assetID: assetID, destination: destination)
            if error != .cancelled {
                services.telemetry.downloadEnded(
                    localIdentifier: assetID, key: record.key, bytesTransferred: 0, attempts: 0,
                    failure: error.description)
            }
            switch error {
            case .noSuchKey:
                // Deleted remotely while we fetched it: the asset goes, as a sync would remove it.
                try? removeAssets([assetID])
                throw AssetRequestError.assetDeleted(localIdentifier: assetID)
            case .preconditionFailed, .objectChanged:
                throw AssetRequestError.objectChanged(key: record.key)
            case .cancelled:
                // Not cancelled by the caller: a sync removed the asset (its object is gone) and stopped the download.
                if !Task.isCancelled, (try? store.record(id: assetID)) == nil {
                    throw AssetRequestError.assetDeleted(localIdentifier: assetID)
                }
                throw AssetRequestError.cancelled
            case .networkAccessNotAllowed:
                throw AssetRequestError.inCloud(key: record.key, localIdentifier: record.id)
            default:
                throw error
            }
        }
        try await commitDownloaded(assetID: assetID, result: result)
        services.telemetry.downloadEnded(
            localIdentifier: assetID, key: record.key, bytesTransferred: result.bytesTransferred,
            attempts: result.attempts, failure: nil)
        runtime.noteAccess(assetID)
        try enforceCacheLimit(keeping: assetID)
        var committed = record
        committed.availability = .full
        committed.localFilePath = files.storedPath(ofOriginal: result.url)
        committed.verifiedSize = result.size
        committed.verifiedETag = committed.etag
        committed.partialRanges = ByteRangeSet()
        committed.partialETag = nil
        return .original(result.url, committed)
    }

    /// Records a verified download as `full`; refuses (and deletes the file) when the asset changed or vanished
    /// meanwhile, so a stale file is never marked `full`. Downloads that finish while another commit is being
    /// written go into the next transaction together (``CommitGroups``): one change for the group.
    ///
    /// Files at the asset's original path are only removed under the write lock, and a stale file is left alone
    /// when the record already holds the current version's verified file at that path (another download of the
    /// same asset, of the new version, committed first: removing "our" path would remove its file). A file that
    /// is gone by the time of the commit (a stale commit removed it just before) is refused the same way.
    func commitDownloaded(assetID: Int64, result: DownloadResult) async throws {
        try await services.downloadCommits.commit(in: self) { tx in
            try self.writeDownloaded(assetID: assetID, result: result, tx)
        }
    }

    /// ``commitDownloaded(assetID:result:)``'s part of a transaction.
    ///
    /// It runs under the write lock, which every other commit waits for: its per-asset work stays small (paths
    /// built as strings once, no look-up of a file the record says cannot be there, files that are usually
    /// absent checked before they are removed — see ``removeIfPresent(_:)``).
    private func writeDownloaded(assetID: Int64, result: DownloadResult, _ tx: StoreTransaction) throws {
        let path = result.url.path
        let name = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? ""
        let stored = LocalFiles.Folder.originals.rawValue + "/" + name
        let current = try tx.record(assetID)
        let fresh = current.map { S3ETag.same($0.etag, result.etag) && $0.size == result.size } ?? false
        guard let current, fresh else {
            let committedThere = current.map { $0.availability == .full && $0.localFilePath == stored }
            if committedThere != true { unlink(path) }
            throw AssetRequestError.objectChanged(key: name)
        }
        if current.availability == .full, current.localFilePath == stored { return }
        guard access(path, F_OK) == 0 else { throw AssetRequestError.objectChanged(key: name) }
        // Recorded ranges: their file goes with them, under the write lock (it must not vanish after a later
        // commit recorded ranges in it). A range file with no ranges recorded belongs to a read still running,
        // which removes it itself when its commit finds the asset `full` (``commitRanges``), or to a crash,
        // which recovery sweeps: it is not looked for here (two lookups per download).
        let rangesRecorded = current.availability == .partial || current.partialETag != nil
        _ = try tx.update(assetID) { record in
            record.availability = .full
            record.localFilePath = stored
            record.verifiedSize = result.size
            record.verifiedETag = record.etag
            record.partialRanges = ByteRangeSet()
            record.partialETag = nil
            record.lastAccessDate = Date()
        }
        if rangesRecorded {
            let ranges = files.partial(id: assetID).path
            for obsolete in [ranges, ranges + ".json"] { Self.removeIfPresent(obsolete) }
        }
        // No `.part` is left to remove: the download committed here ran under the asset's download lock, began
        // from (or emptied) any `.part` an earlier one kept, renamed it to `path` and removed its sidecar.
    }

    /// Removes a file that is usually not there. Looking the name up takes no lock, while `unlink(2)` locks the
    /// folder even for a missing name — and `originals/` is where every running download creates and renames
    /// its files. The same as a plain `unlink` made at the moment of the look-up: a file that appears after it
    /// would have appeared after that `unlink` too.
    static func removeIfPresent(_ path: String) {
        if access(path, F_OK) == 0 || errno != ENOENT { unlink(path) }
    }

    /// After a download of this asset failed: when another download made the asset `full` meanwhile and none
    /// still runs (this request's own is counted until it returns), the bytes kept to resume from are of no use.
    func discardLeftoverPart(assetID: Int64, destination: URL) {
        try? performWrite { tx in
            guard try tx.record(assetID)?.availability == .full else { return }
            removeLeftoverPart(assetID: assetID, destinationPath: destination.path)
        }
    }

    /// Removes the `.part` (and sidecar) a failed download of this now `full` asset kept to resume from —
    /// unless another download (beside the calling request's own) still runs and will finish with it. Under
    /// the write lock.
    private func removeLeftoverPart(assetID: Int64, destinationPath: String) {
        guard runtime.downloadCount(of: assetID) <= 1 else { return }
        for path in [destinationPath + ".part", destinationPath + ".part.json"] { Self.removeIfPresent(path) }
    }

    /// Deletes assets (and their files) in one transaction, cancelling their downloads first (a cancelled
    /// download writes no more files, so none appears after the removal).
    func removeAssets(_ ids: [Int64]) throws {
        runtime.cancelDownloads(forAssets: ids)
        var paths: [String] = []
        try performWrite { tx in
            for id in ids {
                guard let record = try tx.record(id) else { continue }
                paths += files.allPaths(id: id, key: record.key)
                _ = try tx.delete(id)
            }
            for path in paths { try? FileManager.default.removeItem(atPath: path) }
        }
    }

    /// Whether the library's network policy lets a request of this kind use the network.
    func isNetworkAllowed(userRequest: Bool) -> Bool {
        switch networkPolicy {
        case .offline: return false
        case .allowed: return true
        case .userRequestsOnly: return userRequest
        }
    }
}
