import AssetStore
import Foundation
import S3Transfer

/// Albums and folders between the catalog and the bucket: each is one document, `collections/<id>.json`
/// (``CollectionDocument``), written conditionally (a write that finds another library's in between reads, merges
/// and writes again) and announced in the journal; other libraries read it when their sync meets the announcement
/// (or, on a full sync or a bootstrap, when its ETag is not the one they merged).
///
/// The catalog keeps, per collection, the document last merged here: a local change is folded into it when it is
/// sent, as a change of this device stamped then.
enum CollectionSharing {
    /// The collection as this library holds it now: the document last merged here with the catalog's differences
    /// from it folded in (title, folder, deletion, and membership and positions of the album's assets that are in
    /// the bucket).
    static func localDocument(_ row: CollectionRecord, device: String, now: Date, _ tx: StoreTransaction) throws
        -> CollectionDocument
    {
        let stored =
            row.document.flatMap(CollectionDocument.init(catalogText:))
            ?? CollectionDocument(
                id: row.uuid, kind: row.kind, title: row.title, parent: row.parentUUID,
                stamp: CollectionDocument.stamp(after: nil, device: device, now: now))
        let members = row.kind == .album ? try tx.members(ofCollection: row.id) : []
        // What this library can speak for: its album's assets in the bucket, and the assets the document names
        // that were shown here when it was merged (one that had no asset then and has one now was never taken out).
        var shareable = Set(members.filter(\.isUploaded).map(\.key))
        let named = stored.members.filter { $0.value.isPresent && !row.unresolvedKeys.contains($0.key) }.map(\.key)
        shareable.formUnion(try tx.assetIDs(keys: named).keys)
        return stored.folding(
            title: row.title, parent: row.parentUUID, isDeleted: row.isDeleted,
            members: members.map { (key: $0.key, position: $0.position) }, shareable: shareable, device: device,
            now: now)
    }

    /// Merges `incoming` (a document read from or written to the bucket, with its ETag) with what this library
    /// holds, and makes the catalog show the merge: the collection created, renamed, moved or deleted, an album's
    /// assets in the merged order (assets the catalog does not have yet are left out until it does). Records the
    /// merge as the collection's document, still to send when it holds something `incoming` lacks. Under the
    /// write transaction; each collection changed is one changed collection of the transaction's change.
    static func adopt(
        _ id: String, incoming: CollectionDocument, etag: String?, device: String, now: Date, _ tx: StoreTransaction
    ) throws {
        if try tx.collection(uuid: id, includingDeleted: true) == nil {
            let row = try tx.createCollection(
                uuid: id, kind: incoming.kind, title: incoming.title, parentUUID: nil, now: now, dirty: false)
            try tx.setCollectionFields(row, title: incoming.title, parentUUID: incoming.parent)
            // Nothing of it is shown yet: every asset it names is still to show.
            try tx.setCollectionDocument(
                row, document: incoming.text, etag: nil, dirty: false,
                unresolvedKeys: Set(incoming.members.filter(\.value.isPresent).map(\.key)))
        }
        guard let row = try tx.collection(uuid: id, includingDeleted: true) else { return }
        let merged = try localDocument(row, device: device, now: now, tx).merged(with: incoming)
        var renumbered = false
        var pendingUploads = false
        var unresolved = Set<String>()
        if merged.deleted != nil {
            if !row.isDeleted { try tx.deleteCollection(row.id, now: now, dirty: false) }
        } else {
            if merged.title != row.title || merged.parent != row.parentUUID {
                try tx.setCollectionFields(row.id, title: merged.title, parentUUID: merged.parent)
            }
            if row.kind == .album {
                let keys = merged.orderedKeys
                let ids = try tx.assetIDs(keys: keys)
                var desired: [(id: Int64, position: Int64)] = []
                for key in keys {
                    guard let asset = ids[key], let member = merged.members[key] else {
                        unresolved.insert(key)
                        continue
                    }
                    desired.append((asset, member.position))
                }
                // Imports not in the bucket yet are this library's alone: they stay where they are, and go out
                // with the album once uploaded.
                let current = try tx.members(ofCollection: row.id)
                let localOnly = current.filter { !$0.isUploaded }
                if !localOnly.isEmpty {
                    let keyed = try tx.assetIDs(keys: localOnly.map(\.key))
                    desired += localOnly.compactMap { member in keyed[member.key].map { ($0, member.position) } }
                    desired.sort { $0.position != $1.position ? $0.position < $1.position : $0.id < $1.id }
                    pendingUploads = true
                }
                // Equal positions (two libraries filled one gap at once): distinct ones here, sent as moves.
                if zip(desired, desired.dropFirst()).contains(where: { $0.position >= $1.position }) {
                    renumbered = true
                    desired = desired.enumerated().map {
                        ($0.element.id, AssetStore.memberPositionStep * Int64($0.offset + 1))
                    }
                }
                let shown = try tx.memberPositions(ofCollection: row.id)
                if !shown.elementsEqual(desired, by: { $0.id == $1.id && $0.position == $1.position }) {
                    try tx.replaceMembers(of: row.id, with: desired)
                    tx.markCollectionChanged(id)
                }
            }
        }
        try tx.setCollectionDocument(
            row.id, document: merged.text, etag: etag, dirty: renumbered || pendingUploads || merged != incoming,
            unresolvedKeys: unresolved)
    }

    /// Reads a collection document: its state and ETag, or (nil, nil) when there is none. One that is too large
    /// or breaks a rule (``BucketInput/collectionDocument(_:id:layout:now:)``) holds nothing: `rejected` says why,
    /// and it is replaced only by a write conditional on its ETag.
    static func read(_ id: String, remote: LibraryRemote, configuration: AssetLibrary.Configuration) async throws
        -> (document: CollectionDocument?, etag: String?, rejected: String?)
    {
        let key = configuration.layout.collectionKey(id)
        do {
            guard
                let (data, head) = try await remote.client.getObject(
                    bucket: configuration.bucket, key: key, maxBytes: BucketInput.maxCollectionDocumentBytes)
            else {
                let etag = try await remote.client.headObject(bucket: configuration.bucket, key: key).etag
                return (nil, etag, "collection document over \(BucketInput.maxCollectionDocumentBytes) bytes")
            }
            switch BucketInput.collectionDocument(
                data, id: id, layout: configuration.layout, now: remote.client.correctedNow)
            {
            case .success(let document): return (document, head.etag, nil)
            case .failure(let rejection): return (nil, head.etag, rejection.reason)
            }
        } catch {
            if error == .noSuchKey { return (nil, nil, nil) }
            throw error
        }
    }
}

extension UploadEngine {
    /// Sends every album and folder changed here to the bucket: for each, reads the bucket's document, merges
    /// (``CollectionDocument``'s rules), writes it back conditionally (another library's write in between makes the
    /// write fail; it is read and merged again) and records the merge, announced in the journal. Albums naming
    /// assets the catalog lacked are set right first (no network). Failures leave the change to the next round.
    func shareCollections() async {
        resolveCollections()
        guard let dirty = try? store.collectionsToShare().dirty, !dirty.isEmpty, let device = try? deviceIdentifier(),
            let remote, networkPolicy != .offline, (try? remote.checkBinding()) != nil
        else { return }
        for id in dirty { try? await shareCollection(id, device: device, remote: remote) }
        await journal.flush()
    }

    private func shareCollection(_ id: String, device: String, remote: LibraryRemote) async throws {
        let key = configuration.layout.collectionKey(id)
        for _ in 0..<8 {
            let read = try store.write { tx -> (CollectionDocument, String?)? in
                guard let row = try tx.collection(uuid: id, includingDeleted: true), row.isDirty else { return nil }
                return (try CollectionSharing.localDocument(row, device: device, now: Date(), tx), row.documentETag)
            }.0
            guard let (local, known) = read else { return }
            let (theirs, theirETag, _) = try await CollectionSharing.read(
                id, remote: remote, configuration: configuration)
            let merged = theirs.map { local.merged(with: $0) } ?? local
            var etag = theirETag
            var journal: [JournalChange] = []
            // A version this library never recorded — its own write whose answer it did not get (killed, cut
            // off), or another's — is announced again: other libraries may not have heard of it.
            if merged == theirs, let theirETag, theirETag != known {
                journal.append(.collection(key: key, etag: theirETag))
            }
            if merged != theirs {
                switch await Self.conditionalPut(
                    remote: remote, bucket: configuration.bucket, key: key, body: merged.encoded,
                    condition: theirETag.map(S3WriteCondition.etagMatches) ?? .keyAbsent)
                {
                case .success(let written):
                    etag = written
                    journal.append(.collection(key: key, etag: written))
                // Another library wrote (or deleted) it since it was read: read, merge, write again.
                case .failure(.preconditionFailed), .failure(.noSuchKey): continue
                case .failure(let error): throw error
                }
            }
            try performWrite { tx in
                try CollectionSharing.adopt(id, incoming: merged, etag: etag, device: device, now: Date(), tx)
                for change in journal { try tx.appendJournalChange(change.encoded) }
            }
            return
        }
    }
}

extension LibraryEngine {
    /// Shows the assets that albums name and the catalog lacked when they were merged, now that it may have them
    /// (after a sync): each such album merged again from its document. No network.
    func resolveCollections() {
        guard let unresolved = try? store.collectionsToShare().unresolved, !unresolved.isEmpty,
            let device = try? deviceIdentifier()
        else { return }
        _ = try? performWrite { tx in
            for id in unresolved {
                guard let row = try tx.collection(uuid: id, includingDeleted: true),
                    let stored = row.document.flatMap(CollectionDocument.init(catalogText:))
                else { continue }
                try CollectionSharing.adopt(
                    id, incoming: stored, etag: row.documentETag, device: device, now: Date(), tx)
            }
        }
    }
}

extension SyncEngine {
    /// Reads every collection document whose ETag is not the one merged here (a full sync, a bootstrap: the
    /// journal's announcements cover the rest) and merges it, all in one transaction.
    /// - Returns: How many were read; documents that break a rule are reported in `skipped`.
    func pullCollections(remote: LibraryRemote, skipped: inout [SyncSummary.SkippedObject]) async throws -> Int {
        let layout = configuration.layout
        let known = try store.collectionDocumentETags()
        var wanted: [String] = []
        for try await page in remote.client.listAllObjects(
            bucket: configuration.bucket, prefix: layout.collectionsPrefix)
        {
            for object in page.objects {
                guard let id = layout.collectionID(forKey: object.key) else { continue }
                if let etag = known[id] ?? nil, S3ETag.same(etag, object.etag) { continue }
                wanted.append(id)
            }
        }
        return try await adoptCollections(wanted, remote: remote, skipped: &skipped)
    }

    /// Reads these collections' documents (``Configuration/maxConnections`` at a time) and merges them in one
    /// transaction. - Returns: How many were read.
    func adoptCollections(_ ids: [String], remote: LibraryRemote, skipped: inout [SyncSummary.SkippedObject])
        async throws -> Int
    {
        guard !ids.isEmpty else { return 0 }
        let configuration = self.configuration
        let reads = try await concurrentMap(ids, limit: max(1, configuration.maxConnections)) { id in
            (id, try await CollectionSharing.read(id, remote: remote, configuration: configuration))
        }
        for (id, read) in reads {
            if let reason = read.rejected {
                skipped.append(SyncSummary.SkippedObject(key: configuration.layout.collectionKey(id), reason: reason))
            }
        }
        let device = try deviceIdentifier()
        try performWrite { tx in
            for (id, read) in reads {
                guard let document = read.document else { continue }
                try CollectionSharing.adopt(id, incoming: document, etag: read.etag, device: device, now: Date(), tx)
            }
        }
        return reads.filter { $0.1.document != nil }.count
    }
}
