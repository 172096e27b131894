import AssetStore
import Foundation
import Logging
import S3Transfer

/// Albums and folders between the catalog and the bucket. Each is a document, `collections/<id>.json`
/// (``CollectionDocument``), and the deltas written since it was last folded, `collections/<id>/<name>.json`
/// (documents holding only what one change touched: its members, with the title, folder and deletion). The state
/// is the merge of the document and every delta; merging is a join, so the order they are read in, or reading one
/// twice, makes no difference.
///
/// - A change goes up as one new delta (a PUT that never replaces an object), announced in the journal: bytes and
///   requests in proportion to the change, not to the album. An album never written goes up whole, conditionally
///   (a write that finds another library's in between reads, merges and writes again).
/// - Other libraries read a delta when their sync meets its announcement, and on a full sync or a bootstrap every
///   delta they have not merged (and a document whose ETag is not the one they merged).
/// - Now and then (``deltasBeforeFolding``, or deltas of half the document's bytes) the library that wrote the
///   last delta folds them: it reads the document and the deltas, writes the merge conditionally on the
///   document's ETag, then deletes each delta it folded, conditionally on the ETag it read (only that version).
///   A fold that loses a race with another library's does nothing; a delta written meanwhile stays.
///
/// The catalog keeps, per collection, the state last merged here and what this library changed that no object in
/// the bucket holds yet (``CollectionRecord/unsentKeys``): a local change is folded into the state when it is
/// merged or sent, as a change of this device stamped then.
enum CollectionSharing {
    /// Deltas of one collection after which the library that writes one folds them into the document.
    static let deltasBeforeFolding = 64

    /// The collection as this library holds it now: the document last merged here with the catalog's differences
    /// from it folded in (title, folder, deletion, and membership and positions of the album's assets that are in
    /// the bucket).
    static func localDocument(_ row: CollectionRecord, device: String, now: Date, _ tx: StoreTransaction) throws
        -> CollectionDocument
    {
        try localDocument(
            row, base: row.document.flatMap(CollectionDocument.init(catalogText:)), device: device, now: now, tx)
    }

    /// The catalog's differences from `base` (the state last merged here, or that and what this library sent
    /// since) folded into it. Members of `base` among `pending` (kept for keys no asset had) are not the catalog's
    /// to speak for.
    static func localDocument(
        _ row: CollectionRecord, base: CollectionDocument?, pending: Set<String> = [], device: String, now: Date,
        _ tx: StoreTransaction
    ) throws -> CollectionDocument {
        let stored =
            base
            ?? CollectionDocument(
                id: row.uuid, kind: row.kind, title: row.title, parent: row.parentUUID,
                stamp: CollectionDocument.stamp(after: nil, device: device, now: now))
        let members = row.kind == .album ? try tx.members(ofCollection: row.id) : []
        // What this library can speak for: its album's assets in the bucket, and the assets the document names
        // that were shown here when it was merged (one that had no asset then and has one now was never taken out).
        var shareable = Set(members.filter(\.isUploaded).map(\.key))
        let memberKeys = Set(members.map(\.key))
        var named: [String] = []
        for (key, member) in stored.members
        where member.isPresent && !row.unresolvedKeys.contains(key) && !pending.contains(key) {
            // A member has an asset; only the others are looked up.
            if memberKeys.contains(key) { shareable.insert(key) } else { named.append(key) }
        }
        shareable.formUnion(try tx.assetIDs(keys: named).keys)
        return stored.folding(
            title: row.title, parent: row.parentUUID, isDeleted: row.isDeleted,
            members: members.map { (key: $0.key, position: $0.position) }, shareable: shareable, device: device,
            now: now)
    }

    /// Stamps the changes just made to these collections (under the transaction that made them) into their
    /// states, as changes of this device at `now`: a change is as late as it was made, not as it was sent. A
    /// collection never merged or sent here has no state yet (it goes up whole, stamped then).
    static func stampChanges(of ids: Set<String>, device: String, now: Date, _ tx: StoreTransaction) throws {
        for id in ids.sorted() {
            guard let row = try tx.collection(uuid: id, includingDeleted: true),
                let stored = row.document.flatMap(CollectionDocument.init(catalogText:))
            else { continue }
            let local = try localDocument(row, base: stored, device: device, now: now, tx)
            let changed = local.differingKeys(from: stored)
            guard !changed.isEmpty else { continue }
            try tx.recordLocalCollectionState(
                row.id, document: local.text, unsentKeys: row.unsentKeys.union(changed))
        }
    }

    /// The whole state this library holds of a collection: the document merged here with the members kept aside
    /// for keys no asset has (what a whole document carries).
    static func wholeDocument(_ row: CollectionRecord, _ tx: StoreTransaction) throws -> CollectionDocument? {
        row.document.flatMap(CollectionDocument.init(catalogText:))?.adding(
            try tx.pendingMembers(ofCollection: row.id))
    }

    /// ``localDocument(_:device:now:_:)`` over the whole state (``wholeDocument(_:_:)``).
    static func localWholeDocument(_ row: CollectionRecord, device: String, now: Date, _ tx: StoreTransaction)
        throws -> CollectionDocument
    {
        let pending = try tx.pendingMembers(ofCollection: row.id)
        return try localDocument(
            row, base: row.document.flatMap(CollectionDocument.init(catalogText:))?.adding(pending),
            pending: Set(pending.keys), device: device, now: now, tx)
    }

    /// Merges `incoming` (a document or a delta read from or written to the bucket) with what this library holds,
    /// and makes the catalog show the merge: the collection created, renamed, moved or deleted, an album's assets
    /// in the merged order (assets the catalog does not have yet are left out until it does). Records the merge as
    /// the collection's state, with what this library changed that the bucket does not hold yet (still to send).
    /// Under the write transaction; each collection changed is one changed collection of the transaction's change.
    ///
    /// The state is kept in two parts: the document holds the header and the members whose keys have an asset
    /// here; the members of keys no asset has are rows of their own (``PendingMember``), read again only for the
    /// keys a later merge names or when an asset with one of those keys arrives. A deleted collection keeps its
    /// header alone (deletion is final: its members no longer matter).
    /// - Parameters:
    ///   - etag: The ETag of the collection's document `incoming` is (or was merged with); ignored for a delta.
    ///   - sent: This library's state that it has just written to the bucket (in a delta or the document): the
    ///     catalog agreeing with it is no change, and nothing of it is still to send.
    ///   - isDelta: `incoming` is a delta (the document's ETag stays the one merged here).
    static func adopt(
        _ id: String, incoming: CollectionDocument, etag: String?, device: String, now: Date, _ tx: StoreTransaction,
        sent: CollectionDocument? = nil, isDelta: Bool = false
    ) throws {
        if try tx.collection(uuid: id, includingDeleted: true) == nil {
            let row = try tx.createCollection(
                uuid: id, kind: incoming.kind, title: incoming.title, parentUUID: nil, now: now, dirty: false)
            try tx.setCollectionFields(row, title: incoming.title, parentUUID: incoming.parent)
            // Nothing of it is shown yet: its state starts as the header, every member still to place.
            var header = incoming
            header.members = [:]
            try tx.setCollectionDocument(row, document: header.text, etag: nil, dirty: false, unresolvedKeys: [])
        }
        guard let row = try tx.collection(uuid: id, includingDeleted: true) else { return }
        var stored = row.document.flatMap(CollectionDocument.init(catalogText:))
        // The members kept aside that this merge names: part of the state it merges with.
        var pendingRead: [String: PendingMember] = [:]
        if var whole = stored, row.kind == .album {
            let lacking = Array(incoming.members.keys.filter { whole.members[$0] == nil })
            pendingRead = try tx.pendingMembers(ofCollection: row.id, keys: lacking)
            for (key, member) in pendingRead { whole.members[key] = CollectionDocument.Member(member) }
            stored = whole
        }
        let base = sent.map { sent in stored.map { $0.merged(with: sent) } ?? sent } ?? stored
        let local = try localDocument(
            row, base: base, pending: Set(pendingRead.keys), device: device, now: now, tx)
        var merged = local.merged(with: incoming)
        // What this library changed that no object in the bucket holds: what it had not sent (what it has just
        // sent holds some of it; a change folded in after the sent state was read, by a merge in between, is not
        // in it), and the catalog's differences folded now.
        let stillUnsent = sent.map { sent in row.unsentKeys.subtracting(base?.sameKeys(in: sent) ?? []) }
        let unsent = (stillUnsent ?? row.unsentKeys).union(local.differingKeys(from: base))
        var renumbered = false
        var pendingUploads = false
        var settled = SettledFolder.asMerged
        if merged.deleted == nil {
            settled = try settleFolder(row, parent: merged.parent, title: merged.title, now: now, tx)
        }
        if merged.deleted != nil || settled == .deleted {
            if !row.isDeleted && merged.deleted != nil { try tx.deleteCollection(row.id, now: now, dirty: false) }
            merged.members = [:]
            try tx.forgetPendingMembers(ofCollection: row.id)
        } else {
            if row.kind == .album {
                // The album's members have their identifiers at hand; only the other keys are looked up.
                var ids = try tx.memberIDs(byKeyOfCollection: row.id)
                ids.merge(try tx.assetIDs(keys: merged.members.keys.filter { ids[$0] == nil })) { current, _ in
                    current
                }
                // Members of keys no asset has go aside; those that have one now come back into the document.
                var aside: [String: PendingMember] = [:]
                for (key, member) in merged.members where ids[key] == nil {
                    merged.members[key] = nil
                    aside[key] = member.pending
                }
                try tx.setPendingMembers(ofCollection: row.id, aside)
                try tx.forgetPendingMembers(ofCollection: row.id, keys: pendingRead.keys.filter { aside[$0] == nil })
                var desired: [(id: Int64, position: Int64)] = []
                for key in merged.orderedKeys {
                    guard let asset = ids[key], let member = merged.members[key] else { continue }
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
        // A collection never written to the bucket goes up whole (one a delta brought here before its document
        // is not this library's to write).
        let unwritten = (isDelta ? row.documentETag : etag) == nil && (row.isDirty || !isDelta)
        try tx.setCollectionDocument(
            row.id, document: merged.text, etag: isDelta ? row.documentETag : etag,
            dirty: renumbered || pendingUploads || !unsent.isEmpty || unwritten || settled != .asMerged,
            unresolvedKeys: [],
            unsentKeys: unsent)
    }

    /// Puts a collection (not deleted) in the folder its merged state names: in an unknown folder it waits there
    /// (shown at the top level); inside a deleted folder it is deleted too, and its deletion sent like any change
    /// of this library's (every library that sees it does the same, so all end alike). A folder that cannot hold
    /// it (an album, itself, a loop) is settled once the whole sync is merged
    /// (``Catalog/settleCollectionFolders()``).
    /// - Returns: How the catalog differs from the merged state now (a change to send unless `asMerged`).
    private static func settleFolder(
        _ row: CollectionRecord, parent: String?, title: String, now: Date, _ tx: StoreTransaction
    ) throws -> SettledFolder {
        if title != row.title || parent != row.parentUUID {
            try tx.setCollectionFields(row.id, title: title, parentUUID: parent)
        }
        guard try tx.folderStanding(of: row.uuid, in: parent) == .deleted else { return .asMerged }
        try tx.deleteCollection(row.id, now: now, dirty: true)
        return .deleted
    }

    /// What ``settleFolder(_:parent:title:now:_:)`` made of a collection.
    private enum SettledFolder { case asMerged, deleted }

    /// Reads a collection document: its state and ETag, or (nil, nil) when there is none. One that is too large
    /// or breaks a rule (``BucketInput/collectionDocument(_:id:layout:now:)``) holds nothing: `rejected` says why,
    /// and it is replaced only by a write conditional on its ETag.
    static func read(_ id: String, remote: LibraryRemote, configuration: AssetLibrary.Configuration) async throws
        -> (document: CollectionDocument?, etag: String?, rejected: String?)
    {
        try await read(id, key: configuration.layout.collectionKey(id), remote: remote, configuration: configuration)
    }

    /// Reads the document or delta at `key` of the collection `id` (as ``read(_:remote:configuration:)``).
    static func read(_ id: String, key: String, remote: LibraryRemote, configuration: AssetLibrary.Configuration)
        async throws -> (document: CollectionDocument?, etag: String?, rejected: String?)
    {
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
    /// Sends every album and folder changed here to the bucket: a delta of what changed (an album never written:
    /// the whole document, conditionally, merged with one another library wrote meanwhile), announced in the
    /// journal, and the merge recorded; then folds the collection's deltas into its document when they are many.
    /// Albums naming assets the catalog lacked are set right first (no network). Failures leave the change to the
    /// next round.
    func shareCollections() async {
        // The body throws nothing: `run` is declared throwing for bodies that do.
        _ = try? await collectionGate.run {
            catalog.resolveCollections()
            let dirty: [String]
            let device: String
            do {
                dirty = try catalog.store.collectionsToShare().dirty
                device = try catalog.deviceIdentifier()
            } catch {
                telemetry.logger.warning("albums not sent: the catalog cannot be read", metadata: ["error": "\(error)"])
                return
            }
            // try?: not bound to this bucket (another one, or never synced): the sync says so; nothing goes up
            // meanwhile.
            guard !dirty.isEmpty, let remote, network.policy != .offline, (try? remote.checkBinding()) != nil
            else { return }
            for id in dirty {
                do {
                    try await shareCollection(id, device: device, remote: remote)
                } catch {
                    // The change stays in the catalog, still to send, for the next round.
                    telemetry.logger.notice(
                        "album or folder not sent yet", metadata: ["collection": "\(id)", "error": "\(error)"])
                }
            }
            await journal.flush()
        }
    }

    /// What one collection holds here that the bucket lacks, read in one transaction.
    private struct LocalChanges {
        var local: CollectionDocument
        var stored: CollectionDocument?
        var etag: String?
        var unsent: Set<String>
    }

    private func shareCollection(_ id: String, device: String, remote: LibraryRemote) async throws {
        let read = try await catalog.performWrite { tx -> LocalChanges? in
            guard let row = try tx.collection(uuid: id, includingDeleted: true), row.isDirty else { return nil }
            let stored = row.document.flatMap(CollectionDocument.init(catalogText:))
            let local = try CollectionSharing.localDocument(row, base: stored, device: device, now: Date(), tx)
            return LocalChanges(
                local: local, stored: stored, etag: row.documentETag,
                unsent: row.unsentKeys.union(local.differingKeys(from: stored)))
        }
        guard let read else { return }
        guard read.etag != nil, read.stored != nil else {
            return try await shareWholeDocument(id, device: device, remote: remote)
        }
        var written: (key: String, etag: String, size: Int)?
        if !read.unsent.isEmpty {
            let body = read.local.restricted(to: read.unsent).encoded
            // A new name each time: a delta never replaces an object (a name taken already, never in practice:
            // another name).
            for _ in 0..<4 where written == nil {
                let key = configuration.layout.collectionDeltaKey(id, name: CollectionDocument.deltaName(now: Date()))
                switch await Self.conditionalPut(
                    remote: remote, bucket: configuration.bucket, key: key, body: body, condition: .keyAbsent)
                {
                case .success(let etag): written = (key, etag, body.count)
                case .failure(.preconditionFailed): continue
                case .failure(let error): throw error
                }
            }
            guard written != nil else { return }
        }
        try await catalog.performWrite { tx in
            try CollectionSharing.adopt(
                id, incoming: read.local, etag: nil, device: device, now: Date(), tx, sent: read.local, isDelta: true)
            if let written {
                try tx.recordCollectionDelta(key: written.key, uuid: id, size: written.size)
                try tx.appendJournalChange(JournalChange.collection(key: written.key, etag: written.etag).encoded)
            }
        }
        // A deletion is folded at once: the document becomes its header, and the members go from the bucket.
        let deletes = read.local.deleted != nil && read.unsent.contains(CollectionRecord.headerKey)
        if written != nil, try deletes || foldIsDue(id) {
            // try?: not folded now: it is folded when next due
            try? await foldCollectionDeltas(id, device: device, remote: remote)
        }
    }

    /// Writes the whole document of a collection never written here: read, merged, written conditionally on
    /// what was read (another library's write in between makes it fail: read and merged again).
    private func shareWholeDocument(_ id: String, device: String, remote: LibraryRemote) async throws {
        let key = configuration.layout.collectionKey(id)
        for _ in 0..<8 {
            let read = try await catalog.performWrite { tx -> (CollectionDocument, String?)? in
                guard let row = try tx.collection(uuid: id, includingDeleted: true), row.isDirty else { return nil }
                return (
                    try CollectionSharing.localWholeDocument(row, device: device, now: Date(), tx), row.documentETag
                )
            }
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
            try await catalog.performWrite { tx in
                try CollectionSharing.adopt(
                    id, incoming: merged, etag: etag, device: device, now: Date(), tx, sent: local)
                for change in journal { try tx.appendJournalChange(change.encoded) }
            }
            return
        }
    }

    /// Whether the deltas of `id` merged here are many enough to fold: ``CollectionSharing/deltasBeforeFolding``
    /// of them, or more bytes than half the document (at least 16 KiB).
    private func foldIsDue(_ id: String) throws -> Bool {
        let totals = try catalog.store.collectionDeltaTotals(uuid: id)
        return totals.count >= CollectionSharing.deltasBeforeFolding
            || totals.bytes >= max(16 << 10, totals.documentBytes / 2)
    }

    /// Folds the deltas of `id` into its document: lists them (at most 1,000), reads the document and each delta
    /// (one that breaks a rule is left where it is), writes the merge with what this library holds conditionally
    /// on the document's ETag, announces it, then deletes each delta folded, conditionally on the ETag it was read
    /// with. Another library's write of the document in between makes the fold do nothing.
    func foldCollectionDeltas(_ id: String, device: String, remote: LibraryRemote) async throws {
        let layout = configuration.layout
        let bucket = configuration.bucket
        var listed: [String] = []
        listing: for try await page in remote.client.listAllObjects(
            bucket: bucket, prefix: layout.collectionDeltaPrefix(id))
        {
            for object in page.objects where layout.collectionID(forDeltaKey: object.key) == id {
                listed.append(object.key)
                if listed.count >= 1000 { break listing }
            }
        }
        guard !listed.isEmpty else { return }
        let (document, documentETag, rejected) = try await CollectionSharing.read(
            id, remote: remote, configuration: configuration)
        // A stranger's object where the document goes is replaced only by the whole-document path.
        guard rejected == nil else { return }
        let configuration = self.configuration
        let deltas = try await concurrentMap(listed, limit: max(1, configuration.maxConnections)) { key in
            (key, try await CollectionSharing.read(id, key: key, remote: remote, configuration: configuration))
        }
        let stored = try await catalog.performWrite { tx in
            try tx.collection(uuid: id, includingDeleted: true).flatMap { try CollectionSharing.wholeDocument($0, tx) }
        }
        guard var merged = document ?? stored else { return }
        if let stored { merged = merged.merged(with: stored) }
        var folded: [(key: String, etag: String)] = []
        for (key, read) in deltas {
            guard let delta = read.document, let etag = read.etag else { continue }
            merged = merged.merged(with: delta)
            folded.append((key, etag))
        }
        let key = layout.collectionKey(id)
        // The document holds every delta already (folded by another library that did not delete them all): the
        // deltas go, the document stays.
        if merged != document {
            guard
                case .success(let written) = await Self.conditionalPut(
                    remote: remote, bucket: bucket, key: key, body: merged.encoded,
                    condition: documentETag.map(S3WriteCondition.etagMatches) ?? .keyAbsent)
            else { return }
            try await catalog.performWrite { tx in
                try CollectionSharing.adopt(id, incoming: merged, etag: written, device: device, now: Date(), tx)
                try tx.appendJournalChange(JournalChange.collection(key: key, etag: written).encoded)
            }
            await journal.flush()
        }
        // Only the versions folded: a delta replaced since it was read stays.
        for delta in folded {
            do {
                try await remote.client.deleteObject(bucket: bucket, key: delta.key, ifMatch: delta.etag)
            } catch {
                // Folded already: a delta left is folded again (no change) and deleted at the next fold.
                telemetry.failed("could not delete a folded album delta", key: delta.key, error: error)
            }
        }
        try await catalog.performWrite { tx in try tx.forgetCollectionDeltas(folded.map(\.key)) }
    }
}

extension Catalog {
    /// Shows the assets that albums name and the catalog lacked when they were merged, now that it has them (after
    /// a sync): each album an arriving asset's key marked merged again with the members kept aside for keys that
    /// have an asset now. Costs nothing for albums no new asset names. No network.
    func resolveCollections() {
        // try?: unreadable now: resolved after the next sync
        guard let unresolved = try? store.collectionsToShare().unresolved, !unresolved.isEmpty,
            // try?: no device identifier now: resolved after the next sync
            let device = try? deviceIdentifier()
        else { return }
        // try?: the albums stay marked unresolved and are resolved after the next sync
        _ = try? performWrite { tx in
            for id in unresolved {
                guard let row = try tx.collection(uuid: id, includingDeleted: true),
                    let stored = row.document.flatMap(CollectionDocument.init(catalogText:))
                else { continue }
                // Only the members kept aside whose keys have an asset now are read.
                try CollectionSharing.adopt(
                    id, incoming: stored.adding(try tx.resolvablePendingMembers(ofCollection: row.id)),
                    etag: row.documentETag, device: device, now: Date(), tx)
            }
        }
    }
}

extension Catalog {
    /// Moves to the top level every album and folder whose folder cannot hold it — an album, itself, or a loop of
    /// folders (a stranger writes those; two libraries moving two folders into each other at once make a loop) —
    /// as a change of this library's, sent like any: in a loop, the folder moved there last. Run after a sync has
    /// merged everything it read (a loop half read is no loop). No network.
    func settleCollectionFolders() throws {
        try performWrite { tx in
            let rows = try tx.collectionTree()
            let byUUID = Dictionary(uniqueKeysWithValues: rows.map { ($0.uuid, $0) })
            var moved: [Int64] = []
            var settled = Set<String>()
            for row in rows where !settled.contains(row.uuid) {
                // Walks up: the first step into an album, or back into the walk, is where it cannot stand.
                var path: [String] = [row.uuid]
                var next = row.parentUUID
                while let folder = next, let up = byUUID[folder] {
                    if up.kind != .folder {
                        moved.append(byUUID[path.last!]!.id)
                        break
                    }
                    // Above a folder already walked all is in place (or is once the moves are made).
                    if settled.contains(folder) { break }
                    if let start = path.firstIndex(of: folder) {
                        // A loop: the folder of the latest move leaves it (then the UUID, so every library picks
                        // the same).
                        let loop = path[start...].compactMap { byUUID[$0] }
                        var stamped: [(stamp: CollectionDocument.Stamp?, row: StoreTransaction.CollectionTreeRow)] = []
                        for member in loop { stamped.append((try Self.parentStamp(member, tx), member)) }
                        let latest = stamped.max { a, b in
                            switch (a.stamp, b.stamp) {
                            case (let x?, let y?) where x != y: return x < y
                            case (nil, _?): return true
                            case (_?, nil): return false
                            default: return a.row.uuid < b.row.uuid
                            }
                        }
                        if let latest { moved.append(latest.row.id) }
                        break
                    }
                    path.append(folder)
                    next = up.parentUUID
                }
                settled.formUnion(path)
            }
            for id in moved {
                try tx.moveCollectionToTop(id)
                try tx.markCollectionDirty(id)
            }
        }
    }

    /// The stamp of a collection's folder in its merged state (nil when it has none).
    private static func parentStamp(_ row: StoreTransaction.CollectionTreeRow, _ tx: StoreTransaction) throws
        -> CollectionDocument.Stamp?
    {
        try tx.collection(uuid: row.uuid)?.document.flatMap(CollectionDocument.init(catalogText:))?.parentStamp
    }
}

extension SyncEngine {
    /// Reads every collection document whose ETag is not the one merged here, and every delta not merged here (a
    /// full sync, a bootstrap: the journal's announcements cover the rest), and merges them; forgets the deltas
    /// merged here that are gone (folded).
    /// - Returns: How many were read; objects that break a rule are reported in `skipped`.
    func pullCollections(remote: LibraryRemote, skipped: inout [SyncSummary.SkippedObject]) async throws -> Int {
        let layout = configuration.layout
        let known = try catalog.store.collectionDocumentETags()
        var wanted: [String] = []
        var deltas: [(id: String, key: String)] = []
        for try await page in remote.client.listAllObjects(
            bucket: configuration.bucket, prefix: layout.collectionsPrefix)
        {
            for object in page.objects {
                if let id = layout.collectionID(forDeltaKey: object.key) {
                    deltas.append((id, object.key))
                    continue
                }
                guard let id = layout.collectionID(forKey: object.key) else { continue }
                if let etag = known[id] ?? nil, S3ETag.same(etag, object.etag) { continue }
                wanted.append(id)
            }
        }
        var read = try await adoptCollections(wanted, remote: remote, skipped: &skipped)
        read += try await adoptCollectionDeltas(deltas, remote: remote, skipped: &skipped)
        let listed = Set(deltas.map(\.key))
        try await catalog.performWrite { tx in try tx.forgetCollectionDeltas(notIn: listed) }
        return read
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
        let device = try catalog.deviceIdentifier()
        try await catalog.performWrite { tx in
            for (id, read) in reads {
                guard let document = read.document else { continue }
                try CollectionSharing.adopt(id, incoming: document, etag: read.etag, device: device, now: Date(), tx)
            }
        }
        return reads.filter { $0.1.document != nil }.count
    }

    /// Reads the deltas not merged here yet (``Configuration/maxConnections`` at a time) and merges them in one
    /// transaction, each collection's all at once (one state, never a part of one: merged one by one, a delta
    /// placing an asset where another delta moved one away from would look like two libraries filling one gap),
    /// recording each as merged. A delta gone since it was announced or listed was folded into the document: then
    /// the document is read too. - Returns: How many were read.
    func adoptCollectionDeltas(
        _ deltas: [(id: String, key: String)], remote: LibraryRemote, skipped: inout [SyncSummary.SkippedObject]
    ) async throws -> Int {
        guard !deltas.isEmpty else { return 0 }
        let merged = try catalog.store.collectionDeltaKeys()
        var seen = Set<String>()
        let wanted = deltas.filter { !merged.contains($0.key) && seen.insert($0.key).inserted }
        guard !wanted.isEmpty else { return 0 }
        let configuration = self.configuration
        let reads = try await concurrentMap(wanted, limit: max(1, configuration.maxConnections)) { delta in
            (
                delta,
                try await CollectionSharing.read(delta.id, key: delta.key, remote: remote, configuration: configuration)
            )
        }
        var found: [String: [(key: String, document: CollectionDocument)]] = [:]
        var folded = Set<String>()
        for (delta, read) in reads {
            if let reason = read.rejected { skipped.append(SyncSummary.SkippedObject(key: delta.key, reason: reason)) }
            if let document = read.document {
                found[delta.id, default: []].append((delta.key, document))
            } else if read.rejected == nil {
                folded.insert(delta.id)
            }
        }
        let documents = try await concurrentMap(folded, limit: max(1, configuration.maxConnections)) { id in
            (id, try await CollectionSharing.read(id, remote: remote, configuration: configuration))
        }
        for (id, read) in documents {
            if let reason = read.rejected {
                skipped.append(SyncSummary.SkippedObject(key: configuration.layout.collectionKey(id), reason: reason))
            }
        }
        let withDocument = Dictionary(uniqueKeysWithValues: documents.map { ($0.0, $0.1) })
        let device = try catalog.deviceIdentifier()
        try await catalog.performWrite { tx in
            for id in Set(found.keys).union(folded).sorted() {
                let parts = found[id] ?? []
                let document = withDocument[id]?.document
                guard var incoming = document ?? parts.first?.document else { continue }
                for part in parts { incoming = incoming.merged(with: part.document) }
                try CollectionSharing.adopt(
                    id, incoming: incoming, etag: document == nil ? nil : withDocument[id]?.etag, device: device,
                    now: Date(), tx, isDelta: document == nil)
                for part in parts {
                    try tx.recordCollectionDelta(key: part.key, uuid: id, size: part.document.encoded.count)
                }
            }
        }
        return found.values.reduce(0) { $0 + $1.count } + documents.filter { $0.1.document != nil }.count
    }
}
