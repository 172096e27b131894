import AssetStore
import Essentials
import Foundation
import Logging
import S3Transfer

extension UploadEngine {

    /// ``AssetLibrary/uploads``.
    func status() throws -> UploadStatus {
        let counts = try catalog.store.uploadStateCounts()
        var status = UploadStatus()
        status.pending = counts[.pendingUpload] ?? 0
        status.uploading = counts[.uploading] ?? 0
        status.failed = counts[.uploadFailed] ?? 0
        status.unsharedEdits = try catalog.store.idsWithUnsharedMetadata().count
        status.unsharedContentEdits = try catalog.store.unsharedEditRevisionCount()
        status.unsharedCollections = try catalog.store.collectionsToShare().dirty.count
        status.inFlight = queue.inFlight
        status.isActive = queue.isActive
        if status.failed > 0 {
            let ids = try catalog.store.ids(inUploadStates: [.uploadFailed], limit: UploadStatus.failureLimit)
            status.failures = try catalog.store.records(ids: ids).compactMap { record in
                record.id.map {
                    UploadFailure(
                        localIdentifier: String($0), key: record.key, reason: record.uploadError ?? "unknown error")
                }
            }
        }
        return status
    }

    /// One round of sending what is local and not in the bucket, in the order another library needs it: the
    /// originals, then the shared properties, albums and folders, and edits that name them. `explicitly`: a caller
    /// asked (the background worker does not, and leaves what the network policy keeps for user requests).
    func sendPending(explicitly: Bool) async {
        await uploadPendingOriginals(explicitly: explicitly)
        await shareEditedMetadata()
        await shareCollections()
        await edits.shareEditRevisions()
    }

    /// ``sendPending(explicitly:)`` asked for, then waits until the worker is idle and the journal holds every
    /// change sent (what a sync does first and ``AssetLibrary/waitForUploads()`` does).
    func sendEverythingPending() async {
        await sendPending(explicitly: true)
        await queue.waitUntilIdle()
        // The commits above started flushes of their own; this one runs after them and sends what they left.
        await journal.flush()
    }

    /// ``AssetLibrary/waitForUploads()``.
    func waitForUploads() async -> UploadStatus {
        await sendEverythingPending()
        // try?: a closed library has nothing in flight to report
        return (try? status()) ?? UploadStatus()
    }

    /// Marks every failed upload pending again and wakes the queue (``AssetLibrary/retryFailedUploads()``).
    func retryFailedUploads() throws {
        let failed = try catalog.store.ids(inUploadStates: [.uploadFailed])
        guard !failed.isEmpty else { return }
        try catalog.performWrite { tx in
            for id in failed {
                try tx.update(id) { r in
                    r.uploadState = .pendingUpload
                    r.uploadError = nil
                }
                telemetry.transition("upload state", asset: id, key: nil, ["to": "pendingUpload", "retry": "true"])
            }
        }
        queue.wake(self)
    }

    /// Uploads every import that is pending (or was interrupted while uploading), at most
    /// ``UploadSettings/concurrentUploads`` at a time, committing outcomes in batches. `explicitly`: for a sync (any
    /// policy but `.offline`), else as background work.
    ///
    /// The waiting uploads are read (and marked `uploading`) 512 at a time, each batch as the one before runs out:
    /// the uploads in flight never drain at a batch's end, so a few thousand small files keep every connection busy
    /// to the last. Whether uploads may go on (closed, offline, cancelled) is asked before each batch. One pass
    /// runs at a time in this library (a second caller waits for the first, then uploads what is left). An error
    /// of the bucket, the credentials or the connection (``stopsEveryUpload(_:)``) ends the pass: no upload is
    /// started after it, and the imports not tried fail with it, untried (``failUntried(attempted:reason:queue:)``).
    func uploadPendingOriginals(explicitly: Bool) async {
        // try?: unbound: nothing may be sent; the open reported why
        guard let remote, (try? remote.checkBinding()) != nil else { return }
        // (The gate's body does not throw.)
        try? await queue.passGate.run { await uploadPass(remote: remote, queue: queue, explicitly: explicitly) }
    }

    private func uploadPass(remote: LibraryRemote, queue: UploadQueue, explicitly: Bool) async {
        await abortAbandonedUploads(remote: remote, queue: queue)
        var attempted = Set<Int64>()
        var checkpoints: [Int64: String] = [:]
        /// The next waiting uploads not tried yet in this call, marked `uploading`; none when uploads must stop.
        func nextBatch() async -> ArraySlice<AssetRecord> {
            guard !Task.isCancelled,
                explicitly ? network.policy != .offline && !catalog.isClosed : mayUploadInBackground
            else { return [] }
            // try?: unreadable now: the imports stay pending for the next pass
            let candidates = (try? catalog.store.ids(inUploadStates: [.pendingUpload, .uploading], limit: 512)) ?? []
            let batch = candidates.filter { !attempted.contains($0) }
            // try?: a gauge only
            if let counts = try? catalog.store.uploadStateCounts() {
                telemetry.uploadQueueDepth((counts[.pendingUpload] ?? 0) + (counts[.uploading] ?? 0))
            }
            guard !batch.isEmpty else { return [] }
            attempted.formUnion(batch)
            do {
                try await catalog.performWrite { tx in
                    for id in batch where try tx.record(id)?.uploadState == .pendingUpload {
                        try tx.update(id) { $0.uploadState = .uploading }
                        telemetry.transition("upload state", asset: id, key: nil, ["to": "uploading"])
                    }
                }
            } catch {
                return []
            }
            // One read for the whole batch, not two per upload.
            // try?: no checkpoints: uploads start over, which is only slower
            checkpoints = (try? catalog.store.allUploadCheckpoints()) ?? [:]
            // try?: unreadable now: the batch stays pending for the next pass
            return ((try? catalog.store.records(ids: batch)) ?? [])[...]
        }
        await withTaskGroup(of: UploadOutcomeRecord?.self) { group in
            var waiting = await nextBatch()
            var done: [UploadOutcomeRecord] = []
            var lastCommit = ContinuousClock.now
            func addNext() async -> Bool {
                if waiting.isEmpty { waiting = await nextBatch() }
                guard let record = waiting.popFirst() else { return false }
                let checkpoint = record.id.flatMap { checkpoints[$0] }.flatMap(UploadCheckpoint.decode)
                group.addTask {
                    await self.uploadOriginal(record, checkpoint: checkpoint, remote: remote, queue: queue)
                }
                return true
            }
            for _ in 0..<configuration.upload.concurrentUploads where !(await addNext()) { break }
            var more = true
            var stopped: String?
            while let outcome = await group.next() {
                if let outcome { done.append(outcome) }
                if case .failed(_, let reason, stopsEveryUpload: true) = outcome, stopped == nil {
                    // The bucket, the credentials or the connection failed, not this file: no other upload can
                    // succeed now, so none more is started (the ones in flight end on their own).
                    stopped = reason
                    more = false
                }
                if more { more = await addNext() }
                // Outcomes are committed together (a few thousand small files are not a few thousand
                // transactions), but never held long: a finished upload shows within a fraction of a second.
                if done.count >= 64 || !more || ContinuousClock.now - lastCommit > .milliseconds(200) {
                    // What a commit leaves to the bucket runs beside the uploads, owned by this pass.
                    let followUp = await commitUploads(done)
                    if !followUp.isEmpty { group.addTask { await self.send(followUp, remote: remote) } }
                    done.removeAll()
                    lastCommit = ContinuousClock.now
                }
            }
            _ = await send(commitUploads(done), remote: remote)
            if let stopped { await failUntried(attempted: attempted, reason: stopped, queue: queue) }
        }
    }

    /// After an error that stops every upload (``stopsEveryUpload(_:)``): each import this pass did not try —
    /// waiting, or taken into a batch and not started — fails with that error, untried, so that the caller hears
    /// one reason once instead of waiting for every upload's retries to fail the same way. They stay local; a
    /// sync (or ``retryFailedUploads()``) tries them again. Uploads running elsewhere (another caller in this
    /// process, another process) are left alone.
    private func failUntried(attempted: Set<Int64>, reason: String, queue: UploadQueue) async {
        // try?: unreadable: they stay pending and are tried next pass
        guard let waiting = try? catalog.store.ids(inUploadStates: [.pendingUpload, .uploading]), !waiting.isEmpty
        else {
            return
        }
        // try?: the imports stay pending (not failed) and the next pass tries them; the stopping error was logged
        try? await catalog.performWrite { tx in
            for id in waiting where !queue.isClaimed(id) {
                guard let record = try tx.record(id) else { continue }
                // `uploading` and not in this pass's batches: interrupted in another process, or running there.
                if record.uploadState == .uploading, !attempted.contains(id) { continue }
                try tx.update(id) { r in
                    r.uploadState = .uploadFailed
                    r.uploadError = reason
                }
                telemetry.transition(
                    "upload state", asset: id, key: record.key, ["to": "uploadFailed", "untried": "true"])
            }
        }
    }

    /// Whether an upload's error stops every upload of its pass: an error of the connection, the credentials,
    /// the clock or the bucket (what fails a sync's HEADs too: ``CatalogSync/isFailureOfThisObject(_:)``), not
    /// one of this file or this object.
    static func stopsEveryUpload(_ error: any Error) -> Bool {
        guard let error = error as? S3Error else { return false }
        switch error {
        case .fileSystem, .checksumMismatch, .objectChanged, .noSuchKey, .cancelled, .networkAccessNotAllowed:
            return false
        case .retriesExhausted(let last, _): return stopsEveryUpload(last)
        default: return !CatalogSync.isFailureOfThisObject(error)
        }
    }

    /// Aborts the multipart uploads whose asset no longer waits for them (deleted, or uploaded another way), so no
    /// bucket accumulates parts nobody will complete.
    private func abortAbandonedUploads(remote: LibraryRemote, queue: UploadQueue) async {
        // try?: a sweep: what is not read now is swept next pass
        guard let checkpoints = try? catalog.store.allUploadCheckpoints(), !checkpoints.isEmpty else { return }
        // try?: unreadable: nothing counts as waiting; the sweep aborts nothing new
        let waiting = Set((try? catalog.store.ids(inUploadStates: [.pendingUpload, .uploading, .uploadFailed])) ?? [])
        for (id, text) in checkpoints where !waiting.contains(id) {
            guard queue.claim(id, size: 0) else { continue }
            defer { queue.release(id) }
            if let checkpoint = UploadCheckpoint.decode(text) {
                // try?: not aborted: the checkpoint is kept and tried next pass
                guard (try? await remote.uploader.abort(checkpoint, bucket: configuration.bucket)) != nil else {
                    continue
                }
            }
            // try?: a checkpoint left is aborted (a no-op) and dropped next pass
            try? await catalog.setUploadCheckpoint(nil, for: id)
        }
    }

    /// What one upload ended with.
    enum UploadOutcomeRecord: Sendable {
        /// The bucket holds the original under `key` with this ETag (ours, or an identical object adopted), and the
        /// thumbnail this upload wrote beside it, if any.
        case uploaded(id: Int64, key: String, etag: String, thumbnail: ThumbnailObject? = nil)
        /// The upload failed for good (after its retries); `stopsEveryUpload` when the error was not this
        /// object's (``stopsEveryUpload(_:)``).
        case failed(id: Int64, reason: String, stopsEveryUpload: Bool = false)

        /// The asset's row id.
        var id: Int64 {
            switch self {
            case .uploaded(let id, _, _, _), .failed(let id, _, _): id
            }
        }
    }

    /// Uploads one original; nil when it was not attempted (gone, uploaded meanwhile, held by another process, or
    /// interrupted: it stays `uploading` and resumes next time).
    private func uploadOriginal(
        _ record: AssetRecord, checkpoint: UploadCheckpoint?, remote: LibraryRemote, queue: UploadQueue
    ) async -> UploadOutcomeRecord? {
        guard let id = record.id, record.uploadState != .uploaded, let stored = record.localFilePath,
            let url = files.url(forStoredPath: stored), let hash = record.contentSHA256
        else { return nil }
        // Another process on this folder may be uploading it: one at a time.
        guard lock.tryLock(byte: id) else { return nil }
        defer { lock.unlock(byte: id) }
        let localIdentifier = String(id)
        guard queue.claim(id, size: record.size) else { return nil }
        defer { queue.release(id) }
        var saved = checkpoint
        var key = record.key
        let (stem, ext) = Self.splitExtension(key)
        // A large import's first upload reads the file it was copied from (see ``UploadSourceHint``).
        var source = queue.takeSource(for: id)
        let latest = LockedBox<UploadCheckpoint?>(nil)
        for attempt in 0..<4 {
            var request = UploadRequest(
                bucket: configuration.bucket, key: key, file: source.map { URL(fileURLWithPath: $0.path) } ?? url,
                contentType: record.contentType, metadata: Self.objectMetadata(of: record),
                fullObjectCRC32C: source?.crc32c)
            request.createOnly = true
            request.isUserRequest = false
            request.progress = { progress, stop in
                queue.report(
                    AssetUploadProgress(
                        localIdentifier: localIdentifier, bytesSent: progress.bytesSent, totalBytes: record.size),
                    for: id)
                if Task.isCancelled { stop = true }
            }
            // A finished upload's checkpoint goes in the transaction that records it; one that never had a
            // checkpoint (a single request) writes none.
            let send = { (request: UploadRequest, resuming: UploadCheckpoint?) async throws(S3Error) -> UploadOutcome in
                try await remote.uploader.upload(
                    request, resumingFrom: resuming?.key == key ? resuming : nil,
                    checkpoint: { checkpoint in
                        latest.withLock { $0 = checkpoint }
                        if let checkpoint { try self.catalog.setUploadCheckpoint(checkpoint.encoded, for: id) }
                    })
            }
            do throws(S3Error) {
                let outcome: UploadOutcome
                do throws(S3Error) {
                    outcome = try await send(request, saved)
                } catch let error where source != nil && !RequestBroker.isCancellation(error) {
                    // The source was not the file copied after all (changed, gone, other bytes): the library's
                    // copy, resuming what was sent of it.
                    source = nil
                    request.file = url
                    request.fullObjectCRC32C = nil
                    outcome = try await send(request, latest.withLock { $0 } ?? saved)
                }
                switch outcome {
                case .created(let etag, _):
                    let thumbnail = await uploadThumbnail(of: record, key: key, original: url, remote: remote)
                    return .uploaded(id: id, key: key, etag: etag, thumbnail: thumbnail)
                case .keyExists(let head):
                    if head.metadata["sha256"] == hash {
                        // Another library put these very bytes there: adopt that object.
                        return .uploaded(id: id, key: key, etag: head.etag)
                    }
                    saved = nil
                    key = stem + "-" + hash.prefix(8) + (attempt == 0 ? "" : "-\(attempt + 1)") + ext
                }
            } catch S3Error.cancelled {
                return nil
            } catch {
                return .failed(id: id, reason: error.description, stopsEveryUpload: Self.stopsEveryUpload(error))
            }
        }
        return .failed(id: id, reason: "the bucket holds other objects under every name tried for \(record.key)")
    }

    /// Writes the thumbnail of an image or a video just uploaded under `key` beside it (the layout's
    /// `thumbnails/<path>.jpg`, created only if absent), so that every library shows the new photo at its next sync
    /// instead of a blank cell: the one this library has, else one made from the local original (decoded small —
    /// a video's first frame —, no metadata: no location). Nil when it is not an image or video the decoders read, the key holds another writer's thumbnail, or the
    /// upload fails: the original's upload stands either way.
    private func uploadThumbnail(of record: AssetRecord, key: String, original: URL, remote: LibraryRemote) async
        -> ThumbnailObject?
    {
        guard record.mediaType == .image || record.mediaType == .video, let id = record.id,
            let thumbnailKey = configuration.layout.thumbnailKey(forOriginalKey: key)
        else { return nil }
        // try?: no thumbnail file: one is made from the original below
        var data = record.thumbnailPresent ? try? LocalFile.read(files.thumbnail(id: id)) : nil
        let request = configuration.thumbnailRequest
        if data == nil,
            // try?: undecodable: the asset goes without a bucket thumbnail
            let image = try? await
                (record.mediaType == .video
                ? ImageBridge.posterFrame(.file(original), request: request).image
                : ImageBridge.decode(.file(original), request: request).0),
            // try?: unencodable: the asset goes without a bucket thumbnail
            let jpeg = try? ImageBridge.encodeJPEG(image, quality: EmbeddedThumbnail.quality)
        {
            data = Data(jpeg)
        }
        guard let data, data.count <= BucketInput.maxThumbnailBytes else { return nil }
        guard
            // try?: no bucket thumbnail: other libraries make their own
            let etag = try? await remote.client.putObject(
                bucket: configuration.bucket, key: thumbnailKey, body: data, contentType: "image/jpeg",
                condition: .keyAbsent)
        else { return nil }
        return ThumbnailObject(key: thumbnailKey, size: Int64(data.count), etag: etag)
    }

    /// Records upload outcomes in one transaction. An asset deleted meanwhile has its uploaded object deleted
    /// again (nothing is left in the bucket for an asset that no longer exists).
    func commitUploads(_ outcomes: [UploadOutcomeRecord]) async -> UploadFollowUp {
        guard !outcomes.isEmpty else { return UploadFollowUp() }
        let telemetry = self.telemetry
        var orphans: [String] = []
        var journaled = false
        do {
            try await catalog.performWrite { tx in
                for outcome in outcomes {
                    switch outcome {
                    case .uploaded(let id, let key, let etag, let thumbnail):
                        guard try tx.record(id) != nil else {
                            orphans.append(key)
                            if let thumbnail { orphans.append(thumbnail.key) }
                            continue
                        }
                        if let other = try tx.record(key: key), other.id != id, let otherID = other.id {
                            // A sync listed our object before this commit and took it for a new asset.
                            try tx.delete(otherID)
                        }
                        try tx.update(id) { r in
                            r.key = key
                            r.etag = etag
                            r.verifiedETag = etag
                            r.uploadState = .uploaded
                            r.uploadError = nil
                            if let thumbnail {
                                r.thumbnailKey = thumbnail.key
                                r.thumbnailSize = thumbnail.size
                                r.thumbnailETag = thumbnail.etag
                            }
                        }
                        try tx.clearUploadCheckpoint(for: id)
                        if let record = try tx.record(id) {
                            telemetry.uploadEnded(localIdentifier: id, key: key, bytes: record.size, failure: nil)
                            // Other libraries learn of the object from the journal, with the metadata it carries.
                            try tx.appendJournalChange(
                                JournalChange.put(
                                    key: key, size: record.size, etag: etag, contentType: record.contentType,
                                    metadata: Self.objectMetadata(of: record), thumbnail: thumbnail
                                ).encoded)
                            journaled = true
                        }
                    case .failed(let id, let reason, _):
                        guard let record = try tx.record(id) else { continue }
                        telemetry.uploadEnded(localIdentifier: id, key: record.key, bytes: 0, failure: reason)
                        try tx.update(id) { r in
                            r.uploadState = .uploadFailed
                            r.uploadError = reason
                        }
                    }
                }
            }
        } catch {
            // The uploads stay `uploading` in the catalog: the next pass finds their objects and resumes or
            // adopts them.
            telemetry.logger.error(
                "upload outcomes not recorded",
                metadata: ["assets": "\(outcomes.map(\.id))", "error": "\(CloudAssetsError.mapping(error))"])
            return UploadFollowUp()
        }
        return UploadFollowUp(flushesJournal: journaled, orphans: orphans)
    }

    /// Sends what a commit of upload outcomes leaves to the bucket: the journal, and the deletion of objects
    /// uploaded for assets deleted meanwhile. Returns nil (no outcome of its own), to run in the upload pass's
    /// task group.
    private func send(_ followUp: UploadFollowUp, remote: LibraryRemote) async -> UploadOutcomeRecord? {
        if followUp.flushesJournal { await journal.flush() }
        for key in followUp.orphans {
            do {
                try await remote.client.deleteObject(bucket: configuration.bucket, key: key)
            } catch {
                // A leftover object with no asset: the next full listing shows it as a new asset again.
                telemetry.logger.warning(
                    "an object uploaded for a deleted asset was not deleted",
                    metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
        return nil
    }

    /// The `x-amz-meta-*` an uploaded original carries (the bucket layout's fields, and the content hash).
    static func objectMetadata(of record: AssetRecord) -> [String: String] {
        var metadata = [
            "creation-date": SharedMetadata.isoStyle.format(record.creationDate),
            "pixel-width": String(record.pixelWidth), "pixel-height": String(record.pixelHeight),
            "orientation": String(record.orientation),
        ]
        metadata["media-type"] = record.mediaType.metadataValue
        if let hash = record.contentSHA256 { metadata["sha256"] = hash }
        if let location = record.location { metadata["location"] = location.serialized }
        if record.mediaType == .video { metadata.merge(RemoteMetadata.videoFields(of: record)) { _, new in new } }
        return metadata
    }
}

extension UploadCheckpoint {
    // try?: encoding these string and number fields cannot fail
    var encoded: String { String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self) }

    static func decode(_ text: String) -> UploadCheckpoint? {
        // try?: a corrupt checkpoint is nil: that upload starts over
        try? JSONDecoder().decode(UploadCheckpoint.self, from: Data(text.utf8))
    }
}

/// What a commit of upload outcomes leaves to send: the journal (uploads were recorded) and orphans (objects
/// uploaded for assets deleted meanwhile).
struct UploadFollowUp: Sendable {
    var flushesJournal = false
    var orphans: [String] = []
    var isEmpty: Bool { !flushesJournal && orphans.isEmpty }
}
