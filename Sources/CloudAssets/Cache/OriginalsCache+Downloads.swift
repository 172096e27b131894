import AssetStore
import Essentials
import Foundation
import S3Transfer

extension OriginalsCache {
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
        try await downloadLocks.acquire(assetID, in: lock)
        defer { downloadLocks.release(assetID, in: lock) }
        guard let record = try catalog.store.record(id: assetID) else {
            throw AssetRequestError.assetDeleted(localIdentifier: assetID)
        }
        if unlessEdited, record.editRevision != nil { return .edited(record) }
        if let url = verifiedOriginal(of: record) {
            downloads.noteAccess(assetID)
            return .original(url, record)
        }
        guard options.isNetworkAccessAllowed, network.allows(userRequest: isUserRequest) else {
            throw AssetRequestError.inCloud(
                key: record.key, localIdentifier: record.id,
                refusedBy: NetworkRefusal(requestAllowed: options.isNetworkAccessAllowed))
        }
        let remote = try remote.checked()
        let destination = files.original(id: assetID, key: record.key)
        let request = DownloadRequest(
            bucket: configuration.bucket, key: record.key, destination: destination, expectedETag: record.etag,
            expectedSize: record.size, priority: priority, isUserRequest: isUserRequest,
            networkAccessAllowed: true, progressQueue: downloads.progressQueue,
            progress: options.downloadProgress(requestID: requestID))
        telemetry.transition("download started", asset: assetID, key: record.key)
        let handle = remote.downloader.download(request)
        downloads.track(handle, asset: assetID, request: requestID)
        defer { downloads.untrack(handle, asset: assetID, request: requestID) }
        let result: DownloadResult
        do {
            result = try await withTaskCancellationHandler {
                try await handle.result()
            } onCancel: {
                handle.cancel()
            }
        } catch let error as S3Error {
            await discardLeftoverPart(assetID: assetID, destination: destination)
            throw await downloadFailure(error, of: record)
        }
        try await commitDownloaded(assetID: assetID, result: result)
        telemetry.transition("availability", asset: assetID, key: record.key, ["to": "full"])
        telemetry.downloadEnded(
            localIdentifier: assetID, key: record.key, bytesTransferred: result.bytesTransferred,
            attempts: result.attempts, failure: nil)
        downloads.noteAccess(assetID)
        try await enforceCacheLimit(keeping: assetID)
        var committed = record
        committed.availability = .full
        committed.localFilePath = files.storedPath(ofOriginal: result.url)
        committed.verifiedSize = result.size
        committed.verifiedETag = committed.etag
        committed.partialRanges = ByteRangeSet()
        committed.partialETag = nil
        return .original(result.url, committed)
    }

    /// What a failed download of `record`'s original means to the caller (reported to telemetry): a vanished
    /// object removes the asset, as a sync would; a changed one, a cancellation, the network policy have their own
    /// errors.
    func downloadFailure(_ error: S3Error, of record: AssetRecord) async -> any Error {
        let assetID = record.id ?? 0
        if error != .cancelled {
            telemetry.downloadEnded(
                localIdentifier: assetID, key: record.key, bytesTransferred: 0, attempts: 0,
                failure: error.description)
        }
        switch error {
        case .noSuchKey:
            // Deleted remotely while we fetched it: the asset goes, as a sync would remove it.
            // try?: the asset is gone from the bucket; a sync removes it otherwise
            try? await removeAssets([assetID])
            return AssetRequestError.assetDeleted(localIdentifier: assetID)
        case .preconditionFailed, .objectChanged:
            return AssetRequestError.objectChanged(key: record.key)
        case .cancelled:
            // Not cancelled by the caller: a sync found the object gone and stopped the download (before it commits
            // the removal, so that no file appears after it).
            let vanished = downloads.takeVanished(assetID)
            // try?: a catalog that cannot be read here answers "cancelled", which the caller may simply ask again.
            if !Task.isCancelled, vanished || (try? catalog.store.record(id: assetID)) == nil {
                return AssetRequestError.assetDeleted(localIdentifier: assetID)
            }
            return AssetRequestError.cancelled
        case .networkAccessNotAllowed:
            // The download allowed the network: the library's policy closed it.
            return AssetRequestError.inCloud(key: record.key, localIdentifier: record.id, refusedBy: .libraryPolicy)
        default:
            return error
        }
    }

    /// Downloads `record`'s original straight to `destination` (a path that does not exist), verified like any
    /// download, without keeping it in the library and without syncing it to the disk before it is named
    /// (``DownloadRequest/durable``): a copy for a caller, written once. Nothing of a failed copy stays (its
    /// `.part` and sidecar are removed). Does not take the asset's download lock: a download into the library
    /// may run beside it.
    func downloadCopy(
        of record: AssetRecord, to destination: URL, options: AssetRequestOptions, requestID: AssetRequestID
    ) async throws {
        guard let assetID = record.id else { throw AssetRequestError.assetDeleted(localIdentifier: 0) }
        guard options.isNetworkAccessAllowed, network.allows(userRequest: true) else {
            throw AssetRequestError.inCloud(
                key: record.key, localIdentifier: record.id,
                refusedBy: NetworkRefusal(requestAllowed: options.isNetworkAccessAllowed))
        }
        let remote = try remote.checked()
        var request = DownloadRequest(
            bucket: configuration.bucket, key: record.key, destination: destination, expectedETag: record.etag,
            expectedSize: record.size, priority: .userInitiated, isUserRequest: true, networkAccessAllowed: true,
            progressQueue: downloads.progressQueue, progress: options.downloadProgress(requestID: requestID))
        request.durable = false
        telemetry.transition("download started", asset: assetID, key: record.key, ["copy": "true"])
        let handle = remote.downloader.download(request)
        downloads.track(handle, asset: assetID, request: requestID)
        defer { downloads.untrack(handle, asset: assetID, request: requestID) }
        do {
            let result = try await withTaskCancellationHandler {
                try await handle.result()
            } onCancel: {
                handle.cancel()
            }
            telemetry.downloadEnded(
                localIdentifier: assetID, key: record.key, bytesTransferred: result.bytesTransferred,
                attempts: result.attempts, failure: nil)
        } catch let error as S3Error {
            for path in [destination.path + ".part", destination.path + ".part.json"] { Self.removeIfPresent(path) }
            throw await downloadFailure(error, of: record)
        }
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
        try await downloadCommits.commit(in: catalog) { tx in
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
    func discardLeftoverPart(assetID: Int64, destination: URL) async {
        // try?: frees a leftover part only; the next download resumes or replaces it
        try? await catalog.performWrite { tx in
            guard try tx.record(assetID)?.availability == .full else { return }
            removeLeftoverPart(assetID: assetID, destinationPath: destination.path)
        }
    }

    /// Removes the `.part` (and sidecar) a failed download of this now `full` asset kept to resume from —
    /// unless another download (beside the calling request's own) still runs and will finish with it. Under
    /// the write lock.
    private func removeLeftoverPart(assetID: Int64, destinationPath: String) {
        guard downloads.downloadCount(of: assetID) <= 1 else { return }
        for path in [destinationPath + ".part", destinationPath + ".part.json"] { Self.removeIfPresent(path) }
    }

    /// Deletes assets (and their files) in one transaction, cancelling their downloads first (a cancelled
    /// download writes no more files, so none appears after the removal).
    func removeAssets(_ ids: [Int64]) async throws {
        downloads.cancelDownloads(forAssets: ids)
        var paths: [String] = []
        try await catalog.performWrite { tx in
            for id in ids {
                guard let record = try tx.record(id) else { continue }
                paths += files.allPaths(id: id, key: record.key)
                _ = try tx.delete(id)
            }
            // try?: the asset is deleted; a file left only takes room (no row names it)
            for path in paths { try? FileManager.default.removeItem(atPath: path) }
        }
    }

}
