import AssetStore
import Essentials
import Foundation
import Images
import S3Transfer

#if canImport(Glibc)
    import Glibc
#endif

extension EditEngine {
    /// ``AssetLibrary/contentRevisions(of:)``.
    func contentRevisions(of assetID: Int64) throws -> [ContentRevision] {
        let current = try catalog.store.record(id: assetID)?.editRevision
        return try catalog.store.editRevisions(of: assetID).compactMap { stored in
            guard let manifest = EditManifest.decode(stored.manifest) else { return nil }
            return ContentRevision(
                identifier: stored.revision,
                date: Date(timeIntervalSince1970: Double(EditRevisionID.time(of: stored.revision) ?? 0) / 1000),
                isRevert: manifest.reverted, adjustmentData: manifest.adjustmentData,
                isCurrent: stored.revision == current, isShared: stored.isShared)
        }
    }

    /// The manifest of the asset's current edit, or nil when it shows its original.
    func currentEditManifest(of record: AssetRecord) throws -> EditManifest? {
        guard let id = record.id, let revision = record.editRevision else { return nil }
        return try catalog.store.editRevisions(of: id).first { $0.revision == revision }.flatMap {
            EditManifest.decode($0.manifest)
        }
    }

    // MARK: Committing (inside performChanges)

    /// An editor's output checked and hashed before the transaction, with its thumbnail made.
    struct StagedEdit: Sendable {
        var assetID: Int64
        var output: URL
        var size: Int64
        var sha256: String
        var pixelWidth: Int
        var pixelHeight: Int
        var thumbnail: [UInt8]
        var adjustment: AdjustmentData
        var basedOn: String?
    }

    /// Checks outputs off the caller's thread: adjustment data present and small enough, a regular JPEG file
    /// (never a link) in the library's edits folder; hashes it and makes its thumbnail.
    static func stageEdits(_ changes: [(id: Int64, change: AssetChangeRequests.ContentChange)], files: LocalFiles)
        async throws -> [StagedEdit]
    {
        let outputs = changes.compactMap { item -> (Int64, ContentEditingOutput)? in
            if case .output(let output) = item.change { return (item.id, output) }
            return nil
        }
        guard !outputs.isEmpty else { return [] }
        return try await offCooperativePool {
            try outputs.map { id, output in
                let name = String(id)
                guard output.assetID == id else {
                    throw AssetLibraryError.cannotEdit(
                        localIdentifier: name, reason: "the output was made for another asset")
                }
                guard let adjustment = output.adjustmentData else {
                    throw AssetLibraryError.cannotEdit(
                        localIdentifier: name, reason: "the output has no adjustment data (an edit must be resumable)")
                }
                guard adjustment.data.count <= AdjustmentData.maximumSize, !adjustment.formatIdentifier.isEmpty else {
                    throw AssetLibraryError.cannotEdit(
                        localIdentifier: name,
                        reason:
                            "adjustment data must name a format and hold at most \(AdjustmentData.maximumSize) bytes")
                }
                let url = output.renderedContentURL
                guard
                    url.deletingLastPathComponent().standardizedFileURL.path
                        == files.editsFolder.standardizedFileURL.path,
                    LocalFiles.isEditOutputName(url.lastPathComponent), OriginalsCache.isRegularFile(url.path)
                else {
                    throw AssetLibraryError.cannotEdit(
                        localIdentifier: name, reason: "no rendered JPEG was written at \(url.path)")
                }
                let read = try ImportedFile.read(url, copyingTo: nil)
                let (sha256, head) = (read.sha256, read.head)
                let size = Int64(
                    // try?: no size: the parse below refuses the file
                    (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)??.int64Value ?? 0)
                // try?: unparsable is refused by the else branch
                guard case .parsed(let metadata)? = try? ImageMetadata.parse(head: head, fileLength: Int(size)),
                    metadata.format == .jpeg
                else {
                    throw AssetLibraryError.cannotEdit(
                        localIdentifier: name, reason: "the rendered file is not a readable JPEG")
                }
                let thumbnail = try ImageEncoder.jpeg(
                    ImageDecoder.decode(fileAt: url.path, request: DecodeRequest(targetWidth: 256, targetHeight: 256))
                        .image, quality: 80)
                return StagedEdit(
                    assetID: id, output: url, size: size, sha256: sha256, pixelWidth: metadata.displayWidth,
                    pixelHeight: metadata.displayHeight, thumbnail: thumbnail, adjustment: adjustment,
                    basedOn: output.baseRevision)
            }
        }
    }

    /// Applies content changes under the write transaction: each makes a new revision (later than every one known
    /// for the asset), recorded unshared, and sets the asset's current revision. Returns the files of revisions
    /// no longer current, to remove once the transaction committed.
    func applyContentChanges(
        _ changes: [(id: Int64, change: AssetChangeRequests.ContentChange)], staged: [StagedEdit], device: String,
        now: Date, in tx: StoreTransaction
    ) throws -> [String] {
        var stagedByOutput: [URL: StagedEdit] = [:]
        for edit in staged { stagedByOutput[edit.output] = edit }
        var stale: [String] = []
        for (id, change) in changes {
            guard let record = try tx.record(id) else {
                throw AssetLibraryError.noSuchAsset(localIdentifier: String(id))
            }
            let known = try tx.editRevisions(of: id)
            let revision = EditRevisionID.next(device: device, now: now, after: known.map(\.revision))
            var manifest = EditManifest(original: record.key, revision: revision)
            var rendered = false
            switch change {
            case .output(let output):
                guard let edit = stagedByOutput[output.renderedContentURL] else { continue }
                manifest.adjustment = EditManifest.Adjustment(
                    formatIdentifier: edit.adjustment.formatIdentifier, formatVersion: edit.adjustment.formatVersion,
                    data: edit.adjustment.data)
                manifest.basedOn = edit.basedOn
                // The bucket key is set when it goes up (an import's key may still change).
                manifest.rendered = EditManifest.Rendered(
                    key: "", size: edit.size, etag: nil, sha256: edit.sha256, pixelWidth: edit.pixelWidth,
                    pixelHeight: edit.pixelHeight)
                try LocalFile.write(edit.thumbnail, to: files.renderedThumbnail(id: id, revision: revision))
                guard rename(edit.output.path, files.rendered(id: id, revision: revision).path) == 0 else {
                    throw AssetLibraryError.cannotEdit(
                        localIdentifier: String(id),
                        reason: "cannot move the rendered file into place: \(String(cString: strerror(errno)))")
                }
                rendered = true
            case .revert:
                guard record.editRevision != nil else { continue }
                manifest.reverted = true
            case .restore(let old):
                guard let stored = known.first(where: { $0.revision == old }),
                    let previous = EditManifest.decode(stored.manifest), !previous.reverted,
                    let previousRendered = previous.rendered, !previousRendered.key.isEmpty
                else {
                    throw AssetLibraryError.cannotEdit(
                        localIdentifier: String(id), reason: "revision \(old) is not a shared edit of this asset")
                }
                manifest.adjustment = previous.adjustment
                manifest.basedOn = previous.basedOn
                manifest.rendered = previousRendered  // the same immutable object in the bucket
                manifest.thumbnailKey = previous.thumbnailKey
                let previousFile = files.rendered(id: id, revision: old)
                if record.editRevision == old, record.renderedPresent {
                    rendered = rename(previousFile.path, files.rendered(id: id, revision: revision).path) == 0
                }
                let previousThumbnail = files.renderedThumbnail(id: id, revision: old)
                _ = Glibc.link(previousThumbnail.path, files.renderedThumbnail(id: id, revision: revision).path)
            }
            try tx.insertEditRevision(
                StoredEditRevision(assetID: id, revision: revision, manifest: manifest.encoded, isShared: false))
            if let previous = record.editRevision { stale += files.editPaths(id: id, revision: previous) }
            _ = try tx.update(id) { r in
                r.editRevision = manifest.reverted ? nil : revision
                r.editAvailability = files.editAvailability(id: id, revision: revision, rendered: rendered)
                r.modificationDate = now
            }
        }
        return stale
    }

    // MARK: The rendered version

    /// The local rendered version of the asset's current edit, downloaded (and checked against its SHA-256) when
    /// it is not local and the options allow. For an asset without an edit: its original.
    func requestRenderedFile(of record: AssetRecord, options: AssetRequestOptions) async throws -> URL {
        guard let id = record.id else { throw AssetRequestError.assetDeleted(localIdentifier: 0) }
        try await cache.downloadLocks.acquire(id, in: lock)
        defer { cache.downloadLocks.release(id, in: lock) }
        guard let now = try catalog.store.record(id: id) else {
            throw AssetRequestError.assetDeleted(localIdentifier: id)
        }
        guard let revision = now.editRevision, let manifest = try currentEditManifest(of: now),
            let rendered = manifest.rendered
        else {
            var original = options
            original.version = .original
            return try await cache.ensureOriginal(
                assetID: id, options: original, requestID: cache.nextRequestID())
        }
        let destination = files.rendered(id: id, revision: revision)
        if now.renderedPresent, LocalFiles.regularFileSize(destination.path) == rendered.size { return destination }
        guard options.isNetworkAccessAllowed, network.allows(userRequest: true), !rendered.key.isEmpty else {
            throw AssetRequestError.inCloud(
                key: rendered.key.isEmpty ? now.key : rendered.key, localIdentifier: now.id,
                refusedBy: NetworkRefusal(requestAllowed: options.isNetworkAccessAllowed && !rendered.key.isEmpty))
        }
        let remote = try remote.checked()
        let requestID = cache.nextRequestID()
        let request = DownloadRequest(
            bucket: configuration.bucket, key: rendered.key, destination: destination, expectedETag: rendered.etag,
            expectedSize: rendered.size, priority: .userInitiated, isUserRequest: true, networkAccessAllowed: true,
            progressQueue: cache.progressQueue,
            progress: options.downloadProgress(requestID: requestID))
        let handle = remote.downloader.download(request)
        do {
            _ = try await withTaskCancellationHandler {
                try await handle.result()
            } onCancel: {
                handle.cancel()
            }
        } catch S3Error.noSuchKey {
            throw AssetRequestError.objectChanged(key: rendered.key)
        } catch S3Error.cancelled {
            throw AssetRequestError.cancelled
        }
        // try?: unreadable counts as a mismatch and is removed below
        guard (try? ImportedFile.read(destination, copyingTo: nil))?.sha256 == rendered.sha256 else {
            unlink(destination.path)
            throw S3Error.checksumMismatch(expected: rendered.sha256, actual: "another digest", algorithm: "SHA-256")
        }
        let kept = try await catalog.performWrite { tx -> Bool in
            guard try tx.record(id)?.editRevision == revision else { return false }
            _ = try tx.update(id) { $0.editAvailability = .full }
            return true
        }
        guard kept else {
            unlink(destination.path)
            throw AssetRequestError.objectChanged(key: rendered.key)
        }
        return destination
    }

    /// The current version's local thumbnail file: the edit's for an edited asset, else the original's; nil when
    /// there is none.
    func currentThumbnailFile(of record: AssetRecord) async -> URL? {
        guard let id = record.id else { return nil }
        if let revision = record.editRevision {
            let url = files.renderedThumbnail(id: id, revision: revision)
            return LocalFiles.regularFileSize(url.path) != nil ? url : nil
        }
        return await originalThumbnail(record)
    }

    /// The original's thumbnail file, when there is one (a file found missing is forgotten:
    /// ``cache.forgetMissingThumbnail(_:)``).
    func originalThumbnail(_ record: AssetRecord) async -> URL? {
        guard let id = record.id, record.thumbnailPresent else { return nil }
        let url = files.thumbnail(id: id)
        guard LocalFiles.regularFileSize(url.path) != nil else {
            await cache.forgetMissingThumbnail(id)
            return nil
        }
        return url
    }

    /// The current edit's rendered version when it is on disk with its size.
    func localRenderedFile(of record: AssetRecord) -> URL? {
        guard let id = record.id, let revision = record.editRevision, record.renderedPresent else { return nil }
        let url = files.rendered(id: id, revision: revision)
        return LocalFiles.regularFileSize(url.path) != nil ? url : nil
    }

}
