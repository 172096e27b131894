import AssetStore
import Foundation
import S3Transfer

extension UploadEngine {
    /// Sends every shared-property edit made here to the bucket: for each edited asset, reads its sidecar, merges
    /// (``SharedMetadata``'s rule), writes it back conditionally (another library's write in between makes the
    /// write fail; it is read and merged again), and records the merged state. At most
    /// ``Configuration/maxConnections`` at a time. Failures leave the edit to the next round.
    func shareEditedMetadata() async {
        // try?: unbound: nothing may be sent; the open reported why
        guard let remote, network.policy != .offline, (try? remote.checkBinding()) != nil,
            // try?: unreadable now: the edits stay dirty for the next round
            let ids = try? catalog.store.idsWithUnsharedMetadata(), !ids.isEmpty
        else { return }
        await concurrentForEach(ids, limit: configuration.maxConnections) { id in
            do {
                try await self.shareMetadata(of: id, remote: remote)
            } catch {
                self.telemetry.failed(
                    "metadata edit not sent; it stays dirty for the next round", asset: id, error: error)
            }
        }
        await journal.flush()
    }

    private func shareMetadata(of id: Int64, remote: LibraryRemote) async throws {
        let bucket = configuration.bucket
        for _ in 0..<8 {
            guard let record = try catalog.store.record(id: id), record.metadataDirty, record.uploadState == .uploaded,
                let key = configuration.layout.sidecarKey(forOriginalKey: record.key)
            else { return }
            let (remoteState, remoteETag) = try await remote.readSidecar(key)
            if remoteETag == nil, try await purgedElsewhere(record, remote: remote) {
                // Writing would leave a sidecar without its original in the bucket: the asset goes here too.
                try await forgetPurged(id)
                return
            }
            let merged = SharedMetadata(record: record).merged(with: remoteState ?? SharedMetadata())
            var etag = remoteETag
            var journal: [JournalChange] = []
            if merged != remoteState || remoteETag == nil {
                let sidecar = merged.sidecar(originalKey: record.key, sha256: record.contentSHA256)
                let written = await Self.conditionalPut(
                    remote: remote, bucket: bucket, key: key, body: SharedMetadata.encode(sidecar),
                    condition: remoteETag.map(S3WriteCondition.etagMatches) ?? .keyAbsent)
                switch written {
                case .success(let newETag):
                    etag = newETag
                    journal.append(.metadata(key: record.key, sidecar: sidecar, sidecarETag: newETag))
                // Another library wrote (or deleted) it since it was read: read, merge, write again.
                case .failure(.preconditionFailed), .failure(.noSuchKey): continue
                case .failure(let error): throw error
                }
            }
            try catalog.adoptSharedMetadata([(id, merged, etag)], journal: journal)
            return
        }
    }

    /// Whether an asset whose sidecar is not in the bucket was purged by another library (or deleted by another
    /// tool), so that no sidecar may be written for it: its original is gone, or — the sidecar this library read
    /// before is gone and its last change here took it out of the trash — a purge decided on it (a purge deletes
    /// the sidecar first, conditional on the version it decided on, then the original). A new asset's first
    /// sidecar, or a sidecar deleted under an asset that is not being restored, is written as before.
    private func purgedElsewhere(_ record: AssetRecord, remote: LibraryRemote) async throws -> Bool {
        let head: S3ObjectHead
        do {
            head = try await remote.client.headObject(bucket: configuration.bucket, key: record.key)
        } catch {
            guard error == .noSuchKey else { throw error }
            return true
        }
        guard S3ETag.same(head.etag, record.etag), record.sidecarETag != nil, !record.isTrashed else { return false }
        let device = try catalog.deviceIdentifier()
        return SharedMetadata(record: record).stamps[.trashed]?.device == device
    }

    /// Removes an asset another library purged from the catalog and its local files (as the purge's own library
    /// did); the bucket's journal tells every other library.
    func forgetPurged(_ id: Int64) async throws {
        let files = self.files
        try await catalog.performWrite { tx in
            guard let record = try tx.record(id) else { return }
            try tx.delete(id)
            let editFiles = record.editRevision.map { files.editPaths(id: id, revision: $0) } ?? []
            for path in files.allPaths(id: id, key: record.key) + editFiles {
                // Every name the asset's files could have: most do not exist. One that cannot be removed only takes
                // room: its row is gone, so nothing shows or serves it.
                try? FileManager.default.removeItem(atPath: path)
            }
        }
    }

    static func conditionalPut(
        remote: LibraryRemote, bucket: String, key: String, body: Data, condition: S3WriteCondition
    ) async -> Result<String, S3Error> {
        do {
            return .success(
                try await remote.client.putObject(
                    bucket: bucket, key: key, body: body, contentType: "application/json", condition: condition))
        } catch {
            return .failure(error)
        }
    }

}

extension LibraryRemote {
    /// Reads a sidecar: its state and ETag, or (nil, nil) when there is none. A sidecar that cannot be decoded
    /// counts as holding nothing, and is replaced only by a write conditional on its ETag.
    func readSidecar(_ key: String) async throws -> (SharedMetadata?, String?) {
        let read: (Data, S3ObjectHead)
        do {
            // Read only up to the cap (BucketInput): a larger object is no sidecar, and holds nothing.
            guard
                let bounded = try await client.getObject(
                    bucket: bucket, key: key, maxBytes: BucketInput.maxDocumentBytes)
            else {
                return (
                    SharedMetadata(), try await client.headObject(bucket: bucket, key: key).etag
                )
            }
            read = bounded
        } catch {
            if error == .noSuchKey { return (nil, nil) }
            throw error
        }
        // Validated as everything read from the bucket (BucketInput): a sidecar refused there holds nothing.
        let state = configuration.layout.originalKey(forSidecarKey: key).flatMap { original in
            // try?: refused input holds nothing, as every refused bucket read
            try? BucketInput.sidecar(
                read.0, originalKey: original, now: client.correctedNow, learnedAt: Date()
            ).get()
        }
        return (state ?? SharedMetadata(), read.1.etag)
    }
}

extension Catalog {
    /// Merges states read from (or written to) the bucket into the catalog, in one transaction: each row takes the
    /// merge of its current state and the bucket's, remembers the sidecar's ETag, and stays marked as edited only
    /// if it holds a change the bucket does not have yet.
    /// `journal` is appended to the journal outbox in the same transaction (the sidecars this library wrote).
    func adoptSharedMetadata(
        _ states: [(id: Int64, state: SharedMetadata, etag: String?)], journal: [JournalChange] = []
    ) throws {
        guard !states.isEmpty else { return }
        try performWrite { tx in
            for (id, state, etag) in states { try SharedMetadata.adopt(state, sidecarETag: etag, into: id, tx) }
            for change in journal { try tx.appendJournalChange(change.encoded) }
        }
    }
}

extension SharedMetadata {
    /// Merges one sidecar state into a row (a row that is gone is skipped).
    static func adopt(_ state: SharedMetadata, sidecarETag etag: String?, into id: Int64, _ tx: StoreTransaction)
        throws
    {
        guard let record = try tx.record(id) else { return }
        let merged = SharedMetadata(record: record).merged(with: state)
        try tx.update(id) { r in
            merged.apply(to: &r)
            r.sidecarETag = etag
            r.metadataDirty = merged != state
        }
    }
}

extension Array {
    /// The array cut into consecutive pieces of at most `size` elements.
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
