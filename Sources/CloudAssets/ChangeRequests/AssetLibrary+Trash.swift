import AssetStore
import Foundation
import S3Transfer

extension AssetLibrary {
    /// Purges every asset in the trash now: its objects (original, thumbnail, metadata sidecar, and the edits of an
    /// asset with edit revisions) are deleted from the bucket, then the asset leaves the catalog (one change) and its local files are removed. Other libraries on
    /// the bucket remove it at their next sync. An import that never went up is only removed locally (an upload of
    /// it in progress is aborted).
    /// - Returns: How many assets were purged.
    /// - Throws: ``CloudAssetsError/Code/networkNotAllowed`` under the offline policy when an asset is in the bucket (nothing is
    ///   purged then); S3 errors (the assets whose objects were deleted before the error are purged, the others stay
    ///   in the trash).
    @discardableResult
    public func emptyTrash() async throws -> Int {
        return try await CloudAssetsError.boundary {
            try ensureOpen()
            return try await purge(try store.idsTrashed(before: nil))
        }
    }

    /// Purges the assets in the trash for longer than ``Configuration/trashRetention``. Part of every sync.
    func purgeExpiredTrash() async throws -> Int {
        try await purge(try store.idsTrashed(before: Date().addingTimeInterval(-configuration.trashRetention)))
    }

    private func purge(_ ids: [Int64]) async throws -> Int {
        guard !ids.isEmpty else { return 0 }
        let records = try store.records(ids: ids)
        let inBucket = records.filter { $0.uploadState == .uploaded }
        if !inBucket.isEmpty {
            guard networkPolicy != .offline else { throw AssetLibraryError.offline }
        }
        var purged: [Int64] = []
        var failure: (any Error)?
        for record in records {
            guard let id = record.id else { continue }
            do {
                try await deleteRemoteObjects(of: record)
                purged.append(id)
            } catch {
                failure = failure ?? error
            }
        }
        let files = self.files
        let deletedObjects = records.filter { $0.uploadState == .uploaded && purged.contains($0.id ?? -1) }
        try performWrite { tx in
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
                    try? FileManager.default.removeItem(atPath: path)
                }
            }
        }
        if !deletedObjects.isEmpty { await flushJournal() }
        if let failure { throw failure }
        return purged.count
    }

    /// Deletes what the bucket holds for an asset: an unfinished multipart upload, the original, its thumbnail, its
    /// sidecar and its `edits/` folder (deleting what is already gone succeeds).
    private func deleteRemoteObjects(of record: AssetRecord) async throws {
        guard let id = record.id else { return }
        let checkpoint = try store.uploadCheckpoint(for: id).flatMap(UploadCheckpoint.decode)
        guard record.uploadState == .uploaded || checkpoint != nil else { return }
        let remote = try requireRemote()
        let bucket = configuration.bucket
        if let checkpoint {
            try await remote.uploader.abort(checkpoint, bucket: bucket)
            try store.setUploadCheckpoint(nil, for: id)
        }
        guard record.uploadState == .uploaded else { return }
        let layout = configuration.layout
        try await remote.client.deleteObject(bucket: bucket, key: record.key)
        if let thumbnail = record.thumbnailKey ?? layout.thumbnailKey(forOriginalKey: record.key) {
            try await remote.client.deleteObject(bucket: bucket, key: thumbnail)
        }
        if let sidecar = layout.sidecarKey(forOriginalKey: record.key) {
            try await remote.client.deleteObject(bucket: bucket, key: sidecar)
        }
        // The edits' renderings, thumbnails and manifests, when the asset has revisions this library knows of.
        if try !store.editRevisions(of: id).isEmpty, let folder = layout.editsFolder(forOriginalKey: record.key) {
            for try await page in remote.client.listAllObjects(bucket: bucket, prefix: folder) {
                for object in page.objects { try await remote.client.deleteObject(bucket: bucket, key: object.key) }
            }
        }
    }
}
