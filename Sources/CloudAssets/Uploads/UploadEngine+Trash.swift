import AssetStore
import Foundation
import S3Transfer

extension UploadEngine {
    /// ``AssetLibrary/emptyTrash()``.
    func emptyTrash() async throws -> Int {
        return try await purge(try catalog.store.idsTrashed(before: nil))
    }

    /// Purges the assets in the trash for longer than ``Configuration/trashRetention``. Part of every sync.
    func purgeExpiredTrash() async throws -> Int {
        try await purge(try catalog.store.idsTrashed(before: Date().addingTimeInterval(-configuration.trashRetention)))
    }

    private func purge(_ ids: [Int64]) async throws -> Int {
        guard !ids.isEmpty else { return 0 }
        let records = try catalog.store.records(ids: ids)
        let inBucket = records.filter { $0.uploadState == .uploaded }
        if !inBucket.isEmpty {
            guard network.policy != .offline else { throw AssetLibraryError.offline }
        }
        var purged: [Int64] = []
        var deletedObjects: [AssetRecord] = []
        var failure: (any Error)?
        for record in records {
            guard let id = record.id else { continue }
            do {
                switch try await deleteRemoteObjects(of: record) {
                case .deleted:
                    purged.append(id)
                    deletedObjects.append(record)
                case .notInBucket: purged.append(id)
                case .kept: continue
                }
            } catch {
                failure = failure ?? error
            }
        }
        let files = self.files
        try await catalog.performWrite { tx in
            // The bucket changed whatever happens to the rows: the journal says so.
            for record in deletedObjects {
                try tx.appendJournalChange(JournalChange.delete(key: record.key, etag: record.etag).encoded)
            }
            for id in purged {
                // Restored meanwhile (here, or by a merge from another library): it stays.
                guard let record = try tx.record(id), record.isTrashed else { continue }
                try tx.delete(id)
                let editFiles = record.editRevision.map { files.editPaths(id: id, revision: $0) } ?? []
                for path in files.allPaths(id: id, key: record.key) + editFiles {
                    // try?: the asset is deleted; a file left only takes room (no row names it)
                    try? FileManager.default.removeItem(atPath: path)
                }
            }
        }
        if !deletedObjects.isEmpty { await journal.flush() }
        if let failure { throw failure }
        return purged.count
    }

    /// What a purge did in the bucket for one asset.
    enum RemotePurge: Equatable {
        /// The asset's objects were deleted (the version it decided on, and nothing else).
        case deleted
        /// Nothing of it was in the bucket (an import that never went up; an upload in progress was aborted).
        case notInBucket
        /// Nothing was deleted: another library restored it (its sidecar says so, and the catalog took that
        /// state), or another writer replaced its original (the catalog took the new version, out of the trash).
        case kept
    }

    /// Deletes what the bucket holds for an asset — an unfinished multipart upload, the original, its thumbnail,
    /// its sidecar and its `edits/` folder — but only while that is what this library decided to purge:
    ///
    /// 1. the sidecar is read again and merged: when another library restored the asset since, nothing is deleted;
    ///    nor when the sidecar does not say it is trashed (the trash came from a journal entry no sidecar backs),
    ///    unless the trash is this library's own and has not gone up yet;
    /// 2. the original must still be the version in the catalog (a read of its ETag): when another writer replaced
    ///    it, nothing is deleted, and the asset takes the new version and leaves the trash;
    /// 3. the sidecar is deleted conditional on the ETag just read (a restore written meanwhile makes that fail:
    ///    read again from 1), then the original conditional on its ETag (`If-Match` on DeleteObject; where a service
    ///    ignores it, the read in 2 is the check and the time between the two requests the remaining race), then
    ///    the thumbnail and the edits' objects, each conditional on the ETag this library knows or just listed.
    ///
    /// Deleting what is already gone succeeds.
    private func deleteRemoteObjects(of record: AssetRecord) async throws -> RemotePurge {
        guard let id = record.id else { return .notInBucket }
        let checkpoint = try catalog.store.uploadCheckpoint(for: id).flatMap(UploadCheckpoint.decode)
        guard record.uploadState == .uploaded || checkpoint != nil else { return .notInBucket }
        let remote = try remote.checked()
        let bucket = configuration.bucket
        if let checkpoint {
            try await remote.uploader.abort(checkpoint, bucket: bucket)
            try await catalog.setUploadCheckpoint(nil, for: id)
        }
        guard record.uploadState == .uploaded else { return .notInBucket }
        let layout = configuration.layout
        let client = remote.client
        let sidecarKey = layout.sidecarKey(forOriginalKey: record.key)
        for _ in 0..<8 {
            // 1. The shared state as the bucket holds it now.
            var sidecarETag: String?
            if let sidecarKey {
                let (state, etag) = try await remote.readSidecar(sidecarKey)
                if let state { try catalog.adoptSharedMetadata([(id, state, etag)]) }
                guard let current = try catalog.store.record(id: id), current.isTrashed else { return .kept }
                // The sidecar is the bucket's word: a trash this library only heard of (a journal entry no sidecar
                // backs) deletes nothing. Its own trash that has not gone up yet is its own decision.
                let device = try catalog.deviceIdentifier()
                let ownUnsharedTrash =
                    current.metadataDirty && SharedMetadata(record: current).stamps[.trashed]?.device == device
                guard state?.trashedDate != nil || ownUnsharedTrash else { return .kept }
                sidecarETag = etag
            }
            // 2. The original, as the catalog knows it.
            let head: S3ObjectHead?
            do {
                head = try await client.headObject(bucket: bucket, key: record.key)
            } catch {
                guard error == .noSuchKey else { throw error }
                head = nil
            }
            if let head, !S3ETag.same(head.etag, record.etag) {
                try await adoptReplacedOriginal(id: id, head: head)
                return .kept
            }
            // 3. The sidecar, unless a change was written since it was read.
            if let sidecarKey, let sidecarETag {
                do {
                    try await client.deleteObject(bucket: bucket, key: sidecarKey, ifMatch: sidecarETag)
                } catch {
                    if error == .preconditionFailed { continue }
                    guard error == .noSuchKey else { throw error }
                }
            }
            if head != nil {
                do {
                    try await client.deleteObject(bucket: bucket, key: record.key, ifMatch: record.etag)
                } catch {
                    if error == .preconditionFailed,
                        // try?: a failed read cannot tell: the precondition failure stands
                        let replaced = try? await client.headObject(bucket: bucket, key: record.key)
                    {
                        try await adoptReplacedOriginal(id: id, head: replaced)
                        return .kept
                    }
                    guard error == .noSuchKey else { throw error }
                }
            }
            if let thumbnail = record.thumbnailKey ?? layout.thumbnailKey(forOriginalKey: record.key) {
                try await deleteIfStill(thumbnail, etag: record.thumbnailETag, client: client)
            }
            // The edits' renderings, thumbnails and manifests, when the asset has revisions this library knows of.
            if try !catalog.store.editRevisions(of: id).isEmpty,
                let folder = layout.editsFolder(forOriginalKey: record.key)
            {
                for try await page in client.listAllObjects(bucket: bucket, prefix: folder) {
                    for object in page.objects {
                        try await deleteIfStill(object.key, etag: object.etag, client: client)
                    }
                }
            }
            return .deleted
        }
        // Its sidecar kept changing under every attempt: it stays in the trash for the next purge.
        throw S3Error.preconditionFailed
    }

    /// Deletes a derived object (a thumbnail, an edit's object): conditional on `etag` when it is known; one
    /// that changed or is gone is left alone.
    private func deleteIfStill(_ key: String, etag: String?, client: S3Client) async throws {
        let bucket = configuration.bucket
        do {
            if let etag {
                try await client.deleteObject(bucket: bucket, key: key, ifMatch: etag)
            } else {
                try await client.deleteObject(bucket: bucket, key: key)
            }
        } catch {
            guard error == .preconditionFailed || error == .noSuchKey else { throw error }
        }
    }

    /// Another writer replaced a trashed asset's original: the asset takes the new version (its local copy goes,
    /// as after any content change) and leaves the trash — nobody trashed what the key holds now.
    private func adoptReplacedOriginal(id: Int64, head: S3ObjectHead) async throws {
        let files = self.files
        let device = try catalog.deviceIdentifier()
        try await catalog.performWrite { tx in
            guard let current = try tx.record(id) else { return }
            var removing: [String] = []
            var counts = ReconcileCounts()
            var row = RemoteMetadata.record(
                for: S3ObjectSummary(
                    key: current.key, size: head.size, etag: head.etag,
                    lastModified: head.lastModified ?? AssetRecord.notListedYet),
                metadata: head.metadata, contentType: head.contentType, thumbnail: nil)
            row.thumbnailKey = current.thumbnailKey
            row.thumbnailSize = current.thumbnailSize
            row.thumbnailETag = current.thumbnailETag
            SharedMetadata(record: current).apply(to: &row)
            row.sidecarETag = current.sidecarETag
            try counts.upsert(row, tx, files: files, removing: &removing)
            var shared = SharedMetadata(record: current)
            shared.change(.trashed, device: device, now: Date()) { $0.trashedDate = nil }
            try tx.update(id) { r in
                shared.apply(to: &r)
                r.metadataDirty = true
            }
            // try?: the asset is deleted; a file left only takes room (no row names it)
            for path in removing { try? FileManager.default.removeItem(atPath: path) }
        }
    }
}
