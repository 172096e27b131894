import Essentials
package import Foundation
import GRDB

/// What a row of the `collection` table is.
package enum StoredCollectionKind: Int, Sendable, Hashable {
    /// A user album: an ordered list of assets.
    case album = 1
    /// A folder of albums and other folders.
    case folder = 2
}

/// One album or folder as the catalog keeps it.
package struct CollectionRecord: Sendable, Hashable {
    package var id: Int64
    /// The identity every library on the bucket shares (a lower-case UUID).
    package var uuid: String
    package var kind: StoredCollectionKind
    package var title: String
    /// The folder it is in (its UUID); `nil` at the top level.
    package var parentUUID: String?
    package var creationDate: Date
    package var modificationDate: Date
    /// An album's assets, or a folder's albums and folders.
    package var count: Int
    /// A tombstone: deleted here or by another library (kept so that the deletion reaches the bucket).
    package var isDeleted: Bool
    /// The shared state last merged here (``CollectionDocument``'s text; read only inside a write transaction),
    /// its bucket copy's ETag, and whether this library holds changes the bucket does not have yet.
    package var document: String?
    package var documentETag: String?
    package var isDirty: Bool
    /// The keys the document names that had no asset here when it was last merged (not shown in the album).
    package var unresolvedKeys: Set<String>
    /// What this library changed that no object in the bucket holds yet: the members' keys, and `""` for the
    /// title, folder or deletion (``CollectionRecord/headerKey``). What its next delta carries.
    package var unsentKeys: Set<String> = []

    /// The entry of ``unsentKeys`` that stands for the title, the folder and the deletion.
    package static let headerKey = ""
}

/// An album member's shared state kept for a key that no asset of the catalog has (stamps as milliseconds and
/// device): out of the album's document, so that keys that do not exist cost nothing after they are first read.
package struct PendingMember: Sendable, Hashable {
    package var addedTime: Int64
    package var addedDevice: String
    package var removedTime: Int64?
    package var removedDevice: String?
    package var position: Int64
    package var placedTime: Int64
    package var placedDevice: String

    package init(
        addedTime: Int64, addedDevice: String, removedTime: Int64?, removedDevice: String?, position: Int64,
        placedTime: Int64, placedDevice: String
    ) {
        self.addedTime = addedTime
        self.addedDevice = addedDevice
        self.removedTime = removedTime
        self.removedDevice = removedDevice
        self.position = position
        self.placedTime = placedTime
        self.placedDevice = placedDevice
    }

    static let columns =
        "key, addedTime, addedDevice, removedTime, removedDevice, position, placedTime, placedDevice"

    static func fetch(_ db: Database, sql: String, _ arguments: StatementArguments) throws -> [String: PendingMember] {
        var result: [String: PendingMember] = [:]
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() {
            result[row[0]] = PendingMember(
                addedTime: row[1], addedDevice: row[2], removedTime: row[3], removedDevice: row[4], position: row[5],
                placedTime: row[6], placedDevice: row[7])
        }
        return result
    }
}

/// The collections: albums (ordered lists of assets) and folders. An album's order is a position per member,
/// spaced ``memberPositionStep`` apart so that an insertion between two members takes a free position; when
/// there is none the album is renumbered (O(members), rare). Reads leave deleted collections out.
extension AssetStore {
    /// The gap between consecutive members' positions after a renumbering or an append.
    package static let memberPositionStep: Int64 = 1 << 20

    static let collectionColumns = """
        c.id, c.uuid, c.kind, c.title, c.parentUUID, c.creationDate, c.modificationDate,
        CASE c.kind WHEN 1 THEN coalesce(n.memberCount, 0)
        ELSE (SELECT count(*) FROM collection k WHERE k.parentUUID = c.uuid AND k.deleted = 0) END,
        c.deleted, c.documentETag, c.dirty, c.unresolvedKeys, c.unsentKeys
        """

    static func collection(_ row: Row) -> CollectionRecord? {
        guard let kind = StoredCollectionKind(rawValue: row[2]) else { return nil }
        return CollectionRecord(
            id: row[0], uuid: row[1], kind: kind, title: row[3], parentUUID: row[4],
            creationDate: Date(timeIntervalSince1970: row[5]), modificationDate: Date(timeIntervalSince1970: row[6]),
            count: row[7], isDeleted: row[8], document: row.count > 13 ? row[13] : nil, documentETag: row[9],
            isDirty: row[10], unresolvedKeys: Set(((row[11] as String?) ?? "").split(separator: "\n").map(String.init)),
            unsentKeys: decodeKeys(row[12]))
    }

    /// A set of keys as a column holds it (a JSON array: a key may be empty, ``CollectionRecord/headerKey``).
    static func decodeKeys(_ text: String?) -> Set<String> {
        // try?: a column that is no JSON array holds no keys
        guard let text, let keys = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String] else {
            return []
        }
        return Set(keys)
    }

    /// The column text of a set of keys; `nil` for none.
    static func encodeKeys(_ keys: Set<String>) -> String? {
        keys.isEmpty ? nil : jsonArray(keys.sorted())
    }

    /// Keys as a JSON array (for `json_each`), written by hand: `JSONSerialization` took a second for 150,000.
    static func jsonArray(_ keys: some Sequence<String>) -> String {
        var text = "["
        var first = true
        for key in keys {
            if !first { text += "," }
            first = false
            text += JSONText.quoted(key)
        }
        return text + "]"
    }

    /// The collections matching `condition`, by title. The shared document (as large as its album) is read only
    /// `withDocument`.
    static func collections(
        _ db: Database, where condition: String, _ arguments: StatementArguments, withDocument: Bool = false
    ) throws -> [CollectionRecord] {
        let columns =
            collectionColumns
            + (withDocument ? ", (SELECT d.document FROM collection_document d WHERE d.collectionID = c.id)" : "")
        return try Row.fetchAll(
            db,
            sql: """
                SELECT \(columns) FROM collection c LEFT JOIN collection_count n ON n.collectionID = c.id
                WHERE \(condition) ORDER BY c.title, c.uuid
                """,
            arguments: arguments
        ).compactMap(collection)
    }

    /// Every collection, or those of one kind, or those directly in one folder (`parentUUID`; `.some(nil)`: the
    /// top level), ordered by title.
    package func collections(kind: StoredCollectionKind? = nil, parentUUID: String?? = nil) throws
        -> [CollectionRecord]
    {
        var terms = ["c.deleted = 0"]
        var arguments = StatementArguments()
        if let kind {
            terms.append("c.kind = ?")
            arguments += [kind.rawValue]
        }
        if let parentUUID {
            if let parentUUID {
                terms.append("c.parentUUID = ?")
                arguments += [parentUUID]
            } else {
                // A folder the catalog does not know (not read yet, or a stranger's) shows its albums at the top.
                terms.append(
                    "(c.parentUUID IS NULL OR NOT EXISTS (SELECT 1 FROM collection p WHERE p.uuid = c.parentUUID))")
            }
        }
        let condition = terms.joined(separator: " AND ")
        return try read { db in try Self.collections(db, where: condition, arguments) }
    }

    /// The collection with this UUID, or `nil` (a deleted one too when `includingDeleted`).
    package func collection(uuid: String, includingDeleted: Bool = false) throws -> CollectionRecord? {
        try read { db in
            try Self.collections(db, where: includingDeleted ? "c.uuid = ?" : "c.uuid = ? AND c.deleted = 0", [uuid])
                .first
        }
    }

    /// An album's assets in its order.
    package func memberIDs(ofCollection id: Int64) throws -> [Int64] {
        try read { db in try StoreTransaction.memberIDs(db, id) }
    }

    /// The albums `assetID` is in.
    package func collections(containing assetID: Int64) throws -> [CollectionRecord] {
        try read { db in
            try Self.collections(
                db, where: "c.deleted = 0 AND c.id IN (SELECT collectionID FROM collection_member WHERE assetID = ?)",
                [assetID])
        }
    }

    /// The collections holding changes the bucket does not have yet, and those naming assets not in the catalog.
    package func collectionsToShare() throws -> (dirty: [String], unresolved: [String]) {
        try read { db in
            (
                try String.fetchAll(db, sql: "SELECT uuid FROM collection WHERE dirty = 1"),
                try String.fetchAll(db, sql: "SELECT uuid FROM collection WHERE unresolvedKeys IS NOT NULL")
            )
        }
    }

    /// The collections whose state holds nothing of this library's own still to send, with that state (the
    /// bucket's document as last read, merged with the deltas merged since), the document's ETag and the deltas'
    /// keys, by UUID after `uuid`, at most `limit`: what a checkpoint carries.
    /// The pending members (``PendingMember``) are read with each document that has them.
    package func sharedCollectionDocuments(after uuid: String?, limit: Int) throws
        -> [(uuid: String, etag: String, document: String, deltaKeys: [String], pending: [String: PendingMember])]
    {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT c.uuid, c.documentETag, s.document,
                        (SELECT group_concat(d.key, char(10)) FROM collection_delta d WHERE d.uuid = c.uuid),
                        c.id, EXISTS (SELECT 1 FROM collection_pending p WHERE p.collectionID = c.id)
                    FROM collection c JOIN collection_document s ON s.collectionID = c.id
                    WHERE c.dirty = 0 AND c.documentETag IS NOT NULL AND c.uuid > ?
                    ORDER BY c.uuid LIMIT ?
                    """, arguments: [uuid ?? "", limit]
            ).map {
                (
                    uuid: $0[0], etag: $0[1], document: $0[2],
                    deltaKeys: (($0[3] as String?) ?? "").split(separator: "\n").map(String.init).sorted(),
                    pending: $0[5]
                        ? try PendingMember.fetch(
                            db, sql: "SELECT \(PendingMember.columns) FROM collection_pending WHERE collectionID = ?",
                            [$0[4] as Int64]) : [:]
                )
            }
        }
    }

    /// The keys of every collection delta merged here.
    package func collectionDeltaKeys() throws -> Set<String> {
        try read { db in Set(try String.fetchAll(db, sql: "SELECT key FROM collection_delta")) }
    }

    /// How many deltas of the collection `uuid` are merged here, their bytes, and the bytes of its document.
    package func collectionDeltaTotals(uuid: String) throws -> (count: Int, bytes: Int, documentBytes: Int) {
        try read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(*), coalesce(sum(size), 0),
                        (SELECT coalesce(length(CAST(d.document AS BLOB)), 0) FROM collection_document d
                         JOIN collection c ON c.id = d.collectionID WHERE c.uuid = ?)
                    FROM collection_delta WHERE uuid = ?
                    """, arguments: [uuid, uuid])
            return (row?[0] ?? 0, row?[1] ?? 0, row?[2] ?? 0)
        }
    }

    /// Every collection's document ETag (tombstones included), by UUID.
    package func collectionDocumentETags() throws -> [String: String?] {
        try read { db in
            Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT uuid, documentETag FROM collection").map {
                    ($0[0] as String, $0[1] as String?)
                })
        }
    }
}

extension StoreTransaction {
    /// The collection with this UUID (not deleted), or `nil`; with its shared document.
    package func collection(uuid: String, includingDeleted: Bool = false) throws -> CollectionRecord? {
        try AssetStore.collections(
            db, where: includingDeleted ? "c.uuid = ?" : "c.uuid = ? AND c.deleted = 0", [uuid], withDocument: true
        ).first
    }

    static func memberIDs(_ db: Database, _ collectionID: Int64) throws -> [Int64] {
        try Int64.fetchAll(
            db, sql: "SELECT assetID FROM collection_member WHERE collectionID = ? ORDER BY position, assetID",
            arguments: [collectionID])
    }

    /// An album's assets in its order with their keys, positions and whether their originals are in the bucket.
    package func members(ofCollection id: Int64) throws -> [(key: String, position: Int64, isUploaded: Bool)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT a.key, m.position, a.uploadState FROM collection_member m JOIN asset a ON a.id = m.assetID
                WHERE m.collectionID = ? ORDER BY m.position, m.assetID
                """, arguments: [id]
        ).map { (key: $0[0], position: $0[1], isUploaded: ($0[2] as Int) == StoredUploadState.uploaded.rawValue) }
    }

    /// An album's members' asset identifiers by key.
    package func memberIDs(byKeyOfCollection id: Int64) throws -> [String: Int64] {
        var ids: [String: Int64] = [:]
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT a.key, a.id FROM collection_member m JOIN asset a ON a.id = m.assetID WHERE m.collectionID = ?
                """,
            arguments: [id])
        while let row = try rows.next() { ids[row[0]] = row[1] }
        return ids
    }

    /// Creates an album or folder. `parentUUID` must name a folder.
    /// - Throws: ``AssetStoreError/invariantViolation(_:)`` for a parent that is not a folder or a UUID in use.
    package func createCollection(
        uuid: String, kind: StoredCollectionKind, title: String, parentUUID: String?, now: Date, dirty: Bool = true
    ) throws -> Int64 {
        try checkParent(parentUUID, of: uuid)
        guard try collection(uuid: uuid, includingDeleted: true) == nil else {
            throw AssetStoreError.invariantViolation("collection \(uuid) exists already")
        }
        try db.execute(
            sql: """
                INSERT INTO collection (uuid, kind, title, parentUUID, creationDate, modificationDate, dirty)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                uuid, kind.rawValue, title, parentUUID, now.timeIntervalSince1970, now.timeIntervalSince1970, dirty,
            ])
        collectionsTouched.insert(uuid)
        return db.lastInsertedRowID
    }

    /// Renames a collection and/or moves it to another folder (`parentUUID`: `.some(nil)` for the top level).
    /// - Throws: ``AssetStoreError/invariantViolation(_:)`` for a parent that is not a folder, or that is the
    ///   folder itself or inside it.
    package func updateCollection(
        _ id: Int64, title: String? = nil, parentUUID: String?? = nil, now: Date, dirty: Bool = true
    ) throws {
        guard let uuid = try String.fetchOne(db, sql: "SELECT uuid FROM collection WHERE id = ?", arguments: [id])
        else { throw AssetStoreError.invariantViolation("no collection \(id)") }
        if let parentUUID { try checkParent(parentUUID, of: uuid) }
        var sets: [String] = []
        var arguments = StatementArguments()
        if let title {
            sets.append("title = ?")
            arguments += [title]
        }
        if let parentUUID {
            sets.append("parentUUID = ?")
            arguments += [parentUUID]
        }
        guard !sets.isEmpty else { return }
        try touchCollection(id, now: now, dirty: dirty, sets: sets, arguments)
    }

    private func touchCollection(
        _ id: Int64, now: Date, dirty: Bool = true, sets: [String] = [], _ arguments: StatementArguments = []
    ) throws {
        let all = sets + ["modificationDate = ?"] + (dirty ? ["dirty = 1"] : [])
        try db.execute(
            sql: "UPDATE collection SET \(all.joined(separator: ", ")) WHERE id = ?",
            arguments: arguments + [now.timeIntervalSince1970, id])
        guard db.changesCount > 0,
            let uuid = try String.fetchOne(db, sql: "SELECT uuid FROM collection WHERE id = ?", arguments: [id])
        else { throw AssetStoreError.invariantViolation("no collection \(id)") }
        collectionsTouched.insert(uuid)
    }

    private func checkParent(_ parentUUID: String?, of uuid: String) throws {
        guard var folder = parentUUID else { return }
        // Walks up from the new parent: a cycle (the collection itself above it) or a non-folder is refused.
        var steps = 0
        while true {
            if folder == uuid { throw AssetStoreError.invariantViolation("a folder cannot go inside itself") }
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT kind, parentUUID FROM collection WHERE uuid = ? AND deleted = 0",
                    arguments: [folder]),
                row[0] as Int == StoredCollectionKind.folder.rawValue
            else { throw AssetStoreError.invariantViolation("collection \(folder) is not a folder") }
            guard let up: String = row[1] else { return }
            folder = up
            steps += 1
            if steps > 10_000 { throw AssetStoreError.invariantViolation("folders nested in a loop") }
        }
    }

    /// Deletes a collection; a folder's albums and folders go with it. The assets stay in the library. Each stays
    /// as a tombstone (left out of every read) until its deletion is in the bucket.
    package func deleteCollection(_ id: Int64, now: Date, dirty: Bool = true) throws {
        var pending = [id]
        while let next = pending.popLast() {
            guard
                let uuid = try String.fetchOne(
                    db, sql: "SELECT uuid FROM collection WHERE id = ? AND deleted = 0", arguments: [next])
            else { continue }
            pending += try Int64.fetchAll(
                db, sql: "SELECT id FROM collection WHERE parentUUID = ? AND deleted = 0", arguments: [uuid])
            try db.execute(sql: "DELETE FROM collection_member WHERE collectionID = ?", arguments: [next])
            // What a folder held goes with it, and the bucket hears of it from this library too (a library that
            // learnt of the folder's deletion from the bucket may hold albums other libraries moved into it).
            let marksDirty = dirty || next != id
            try db.execute(
                sql:
                    "UPDATE collection SET deleted = 1, modificationDate = ?\(marksDirty ? ", dirty = 1" : "") WHERE id = ?",
                arguments: [now.timeIntervalSince1970, next])
            collectionsTouched.insert(uuid)
        }
    }

    /// A collection's place in the tree of folders.
    package struct CollectionTreeRow: Sendable {
        package var id: Int64
        package var uuid: String
        package var kind: StoredCollectionKind
        package var parentUUID: String?
    }

    /// Every collection (not deleted) with its folder, by UUID.
    package func collectionTree() throws -> [CollectionTreeRow] {
        try Row.fetchAll(
            db, sql: "SELECT id, uuid, kind, parentUUID FROM collection WHERE deleted = 0 ORDER BY uuid"
        ).compactMap { row in
            StoredCollectionKind(rawValue: row[2]).map {
                CollectionTreeRow(id: row[0], uuid: row[1], kind: $0, parentUUID: row[3])
            }
        }
    }

    /// Puts a collection at the top level (a change: its document says otherwise until it is sent).
    package func moveCollectionToTop(_ id: Int64) throws {
        try db.execute(sql: "UPDATE collection SET parentUUID = NULL WHERE id = ?", arguments: [id])
        if let uuid = try String.fetchOne(db, sql: "SELECT uuid FROM collection WHERE id = ?", arguments: [id]) {
            collectionsTouched.insert(uuid)
        }
    }

    /// Marks a collection as holding a change of this library's that the bucket lacks.
    package func markCollectionDirty(_ id: Int64) throws {
        try db.execute(sql: "UPDATE collection SET dirty = 1 WHERE id = ?", arguments: [id])
    }

    /// Where a collection's folder stands, as the catalog holds the folders now.
    package enum FolderStanding: Sendable, Equatable {
        /// At the top level, or in a folder that is in place.
        case inPlace
        /// In a folder the catalog does not know (yet).
        case unknown
        /// In a deleted folder, or inside one.
        case deleted
        /// In something that cannot hold it: an album, itself, or a folder inside it.
        case impossible
    }

    /// Where the collection `uuid` would stand in the folder `parentUUID` (``FolderStanding``).
    package func folderStanding(of uuid: String, in parentUUID: String?) throws -> FolderStanding {
        var seen = Set<String>()
        var next = parentUUID
        while let folder = next {
            if folder == uuid { return .impossible }
            // A loop above that does not come back here is not this collection's to settle.
            guard seen.insert(folder).inserted, seen.count <= 10_000 else { return .unknown }
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT kind, parentUUID, deleted FROM collection WHERE uuid = ?", arguments: [folder])
            else { return .unknown }
            if row[2] as Bool { return .deleted }
            guard row[0] as Int == StoredCollectionKind.folder.rawValue else { return .impossible }
            next = row[1]
        }
        return .inPlace
    }

    /// The collections (not deleted) directly in `parentUUID`, by UUID.
    package func collectionUUIDs(in parentUUID: String) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT uuid FROM collection WHERE parentUUID = ? AND deleted = 0 ORDER BY uuid",
            arguments: [parentUUID])
    }

    /// Puts assets into an album at `index` (in its order before the call; `nil` or past the end: at the end), in
    /// the given order. Assets already in the album stay where they are.
    /// - Throws: ``AssetStoreError/notFound(_:)`` for an asset the catalog does not have.
    package func insertMembers(_ assetIDs: [Int64], into collectionID: Int64, at index: Int?, now: Date) throws {
        let existing = try memberPositions(collectionID)
        let present = Set(existing.map(\.id))
        var seen = Set<Int64>()
        let new = assetIDs.filter { !present.contains($0) && seen.insert($0).inserted }
        for id in new where try record(id) == nil { throw AssetStoreError.notFound(id) }
        guard !new.isEmpty else { return }
        try place(new, at: min(index ?? existing.count, existing.count), among: existing, in: collectionID)
        try touchCollection(collectionID, now: now)
    }

    /// Takes assets out of an album (ones not in it are ignored).
    package func removeMembers(_ assetIDs: [Int64], from collectionID: Int64, now: Date) throws {
        var removed = 0
        for id in Set(assetIDs) {
            try db.execute(
                sql: "DELETE FROM collection_member WHERE collectionID = ? AND assetID = ?",
                arguments: [collectionID, id])
            if db.changesCount > 0 { memberDeltas[collectionID, default: MemberDelta()].remove(id) }
            removed += db.changesCount
        }
        if removed > 0 { try touchCollection(collectionID, now: now) }
    }

    /// Moves the album's assets at `indexes` (in its order) to `destination`, an index in the order that remains
    /// once they are taken out (as `NSMutableArray.moveObjects(at:to:)`), keeping their relative order.
    /// - Throws: ``AssetStoreError/invariantViolation(_:)`` for an index out of range.
    package func moveMembers(at indexes: IndexSet, to destination: Int, in collectionID: Int64, now: Date) throws {
        let existing = try memberPositions(collectionID)
        guard (indexes.first ?? 0) >= 0, (indexes.last ?? 0) < max(1, existing.count), destination >= 0,
            destination <= existing.count - indexes.count
        else {
            throw AssetStoreError.invariantViolation("move of \(indexes.count) assets to \(destination) out of range")
        }
        guard !indexes.isEmpty else { return }
        let moved = indexes.map { existing[$0].id }
        let remaining = existing.enumerated().filter { !indexes.contains($0.offset) }.map(\.element)
        let order = remaining.prefix(destination).map(\.id) + moved + remaining.dropFirst(destination).map(\.id)
        if order == existing.map(\.id) { return }  // already in that order
        for id in moved {
            try db.execute(
                sql: "DELETE FROM collection_member WHERE collectionID = ? AND assetID = ?",
                arguments: [collectionID, id])
            memberDeltas[collectionID, default: MemberDelta()].remove(id)
        }
        try place(moved, at: destination, among: remaining, in: collectionID)
        try touchCollection(collectionID, now: now)
    }

    private func memberPositions(_ collectionID: Int64) throws -> [(id: Int64, position: Int64)] {
        guard
            try Int.fetchOne(
                db, sql: "SELECT kind FROM collection WHERE id = ? AND deleted = 0", arguments: [collectionID])
                == StoredCollectionKind.album.rawValue
        else { throw AssetStoreError.invariantViolation("collection \(collectionID) is not an album") }
        return try Row.fetchAll(
            db,
            sql: "SELECT assetID, position FROM collection_member WHERE collectionID = ? ORDER BY position, assetID",
            arguments: [collectionID]
        ).map { (id: $0[0], position: $0[1]) }
    }

    /// Inserts `ids` (not members) at `index` of `existing` (the members, in order): evenly spaced in the gap
    /// between their neighbours when it has room, else the whole album renumbered.
    private func place(
        _ ids: [Int64], at index: Int, among existing: [(id: Int64, position: Int64)], in collectionID: Int64
    ) throws {
        let step = AssetStore.memberPositionStep
        let low = index > 0 ? existing[index - 1].position : 0
        let high: Int64? = index < existing.count ? existing[index].position : nil
        let count = Int64(ids.count)
        var positions: [Int64]? = nil
        if let high {
            let gap = high - low
            if gap > count { positions = (1...count).map { low + gap * $0 / (count + 1) } }
        } else if low <= Int64.max / 2 - step * count {
            positions = (1...count).map { low + step * $0 }
        }
        if let positions {
            for (id, position) in zip(ids, positions) { try insertMember(id, position, collectionID) }
            return
        }
        let order = existing.prefix(index).map(\.id) + ids + existing.dropFirst(index).map(\.id)
        try replaceMembers(of: collectionID, with: order.enumerated().map { ($0.element, step * Int64($0.offset + 1)) })
    }

    private func insertMember(_ id: Int64, _ position: Int64, _ collectionID: Int64) throws {
        try db.execute(
            sql: "INSERT INTO collection_member (collectionID, assetID, position) VALUES (?, ?, ?)",
            arguments: [collectionID, id, position])
        memberDeltas[collectionID, default: MemberDelta()].place(id, at: position)
    }

    /// An album's members with their positions, in its order.
    package func memberPositions(ofCollection id: Int64) throws -> [(id: Int64, position: Int64)] {
        try Row.fetchAll(
            db,
            sql: "SELECT assetID, position FROM collection_member WHERE collectionID = ? ORDER BY position, assetID",
            arguments: [id]
        ).map { (id: $0[0], position: $0[1]) }
    }

    /// Sets a collection's title and folder as another library's document says (no check of the folder: it may
    /// not be known here yet). A changed collection of this transaction.
    package func setCollectionFields(_ id: Int64, title: String, parentUUID: String?) throws {
        try db.execute(
            sql: "UPDATE collection SET title = ?, parentUUID = ? WHERE id = ?", arguments: [title, parentUUID, id])
        if let uuid = try String.fetchOne(db, sql: "SELECT uuid FROM collection WHERE id = ?", arguments: [id]) {
            collectionsTouched.insert(uuid)
        }
    }

    /// Sets an album's members to exactly these, at these positions (ascending).
    package func replaceMembers(of collectionID: Int64, with members: [(id: Int64, position: Int64)]) throws {
        // Only the rows that differ are written: a merge that moves one asset of a large album writes one row.
        var current: [Int64: Int64] = [:]
        for (id, position) in try memberPositions(ofCollection: collectionID) { current[id] = position }
        var wanted = Set<Int64>()
        for (id, position) in members where wanted.insert(id).inserted {
            switch current[id] {
            case position: continue
            case nil: try insertMember(id, position, collectionID)
            case .some:
                try db.execute(
                    sql: "UPDATE collection_member SET position = ? WHERE collectionID = ? AND assetID = ?",
                    arguments: [position, collectionID, id])
            }
        }
        for id in current.keys where !wanted.contains(id) {
            try db.execute(
                sql: "DELETE FROM collection_member WHERE collectionID = ? AND assetID = ?",
                arguments: [collectionID, id])
        }
        memberDeltas[collectionID, default: MemberDelta()].rebuilt = true
    }

    /// Takes a deleted asset out of every album it was in (each is a changed collection).
    func removeFromEveryCollection(_ assetID: Int64) throws {
        let albums = try String.fetchAll(
            db,
            sql:
                "SELECT c.uuid FROM collection_member m JOIN collection c ON c.id = m.collectionID WHERE m.assetID = ?",
            arguments: [assetID])
        guard !albums.isEmpty else { return }
        try db.execute(sql: "DELETE FROM collection_member WHERE assetID = ?", arguments: [assetID])
        collectionsTouched.formUnion(albums)
    }

    /// Records the shared state merged here: the document, its bucket copy's ETag, whether this library holds
    /// changes the bucket lacks (and which: ``CollectionRecord/unsentKeys``), and whether it names assets the
    /// catalog does not have. Not a change by itself.
    package func setCollectionDocument(
        _ id: Int64, document: String, etag: String?, dirty: Bool, unresolvedKeys: Set<String>,
        unsentKeys: Set<String> = []
    ) throws {
        let unresolved = unresolvedKeys.isEmpty ? nil : unresolvedKeys.sorted().joined(separator: "\n")
        try db.execute(
            sql: "UPDATE collection SET documentETag = ?, dirty = ?, unresolvedKeys = ?, unsentKeys = ? WHERE id = ?",
            arguments: [etag, dirty, unresolved, AssetStore.encodeKeys(unsentKeys), id])
        try db.execute(
            sql: "INSERT OR REPLACE INTO collection_document (collectionID, document) VALUES (?, ?)",
            arguments: [id, document])
    }

    // MARK: Members whose keys have no asset

    /// The pending members of collection `id` among `keys` (all of them when `keys` is nil), by key.
    package func pendingMembers(ofCollection id: Int64, keys: [String]? = nil) throws -> [String: PendingMember] {
        if let keys, keys.isEmpty { return [:] }
        // A collection with none (the common case, and a document read the first time) costs one lookup.
        guard
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM collection_pending WHERE collectionID = ?)", arguments: [id])
                == true
        else { return [:] }
        var sql = "SELECT \(PendingMember.columns) FROM collection_pending WHERE collectionID = ?"
        var arguments: StatementArguments = [id]
        if let keys {
            sql += " AND key IN (SELECT value FROM json_each(?))"
            arguments += [AssetStore.encodeKeys(Set(keys))]
        }
        return try PendingMember.fetch(db, sql: sql, arguments)
    }

    /// The pending members of collection `id` whose keys an asset of the catalog has now.
    package func resolvablePendingMembers(ofCollection id: Int64) throws -> [String: PendingMember] {
        try PendingMember.fetch(
            db,
            sql: """
                SELECT \(PendingMember.columns) FROM collection_pending
                WHERE collectionID = ? AND key IN (SELECT key FROM asset)
                """, [id])
    }

    /// Records (replacing) pending members of collection `id`.
    package func setPendingMembers(ofCollection id: Int64, _ members: [String: PendingMember]) throws {
        guard !members.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO collection_pending (collectionID, key, addedTime, addedDevice, removedTime,
                    removedDevice, position, placedTime, placedDevice) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        for (key, member) in members {
            try statement.execute(arguments: [
                id, key, member.addedTime, member.addedDevice, member.removedTime, member.removedDevice,
                member.position, member.placedTime, member.placedDevice,
            ])
        }
    }

    /// Forgets pending members of collection `id`: those among `keys`, or all of them when `keys` is nil.
    package func forgetPendingMembers(ofCollection id: Int64, keys: [String]? = nil) throws {
        guard let keys else {
            try db.execute(sql: "DELETE FROM collection_pending WHERE collectionID = ?", arguments: [id])
            return
        }
        guard !keys.isEmpty else { return }
        try db.execute(
            sql: "DELETE FROM collection_pending WHERE collectionID = ? AND key IN (SELECT value FROM json_each(?))",
            arguments: [id, AssetStore.encodeKeys(Set(keys))])
    }

    /// Records a collection's state with this library's changes stamped into it, and which of them no object in
    /// the bucket holds yet (the collection is then to send); the document's ETag and the keys to resolve stay.
    package func recordLocalCollectionState(_ id: Int64, document: String, unsentKeys: Set<String>) throws {
        try db.execute(
            sql: "UPDATE collection SET dirty = 1, unsentKeys = ? WHERE id = ?",
            arguments: [AssetStore.encodeKeys(unsentKeys), id])
        try db.execute(
            sql: "INSERT OR REPLACE INTO collection_document (collectionID, document) VALUES (?, ?)",
            arguments: [id, document])
    }

    /// Records that a collection's delta (`key`, `size` bytes) is merged here (or was written here).
    package func recordCollectionDelta(key: String, uuid: String, size: Int) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO collection_delta (key, uuid, size) VALUES (?, ?, ?)",
            arguments: [key, uuid, size])
    }

    /// Forgets the deltas merged here that are not among `listed` (a listing of every delta in the bucket).
    package func forgetCollectionDeltas(notIn listed: Set<String>) throws {
        let gone = try String.fetchAll(db, sql: "SELECT key FROM collection_delta").filter { !listed.contains($0) }
        try forgetCollectionDeltas(gone)
    }

    /// Forgets deltas (folded into their collection's document and deleted from the bucket).
    package func forgetCollectionDeltas(_ keys: some Sequence<String>) throws {
        for key in keys { try db.execute(sql: "DELETE FROM collection_delta WHERE key = ?", arguments: [key]) }
    }

    /// Records that a collection changed (a change delivered to observers) without writing it.
    package func markCollectionChanged(_ uuid: String) { collectionsTouched.insert(uuid) }

    /// The asset identifiers of these keys (keys with no asset are left out).
    package func assetIDs(keys: [String]) throws -> [String: Int64] {
        guard !keys.isEmpty else { return [:] }
        let list = AssetStore.jsonArray(keys)
        return Dictionary(
            uniqueKeysWithValues: try Row.fetchAll(
                db, sql: "SELECT key, id FROM asset WHERE key IN (SELECT value FROM json_each(?))", arguments: [list]
            ).map { ($0[0] as String, $0[1] as Int64) })
    }
}

extension AssetStore {
    /// How many assets match `query` (its limit applied).
    package func count(_ query: StoreQuery) throws -> Int { try counts([query])[0] }

    /// An album's assets that match `predicate`, in its order, at most `limit`: for the default fetch (hidden and
    /// trashed assets left out) the album's packed order less its few hidden and trashed members, else one indexed
    /// walk of the album's members (no list of identifiers bound into the query).
    package func members(ofCollection id: Int64, matching predicate: StorePredicate, limit: Int?) throws
        -> SortedIdentifiers
    {
        try membersWithToken(ofCollection: id, matching: predicate, limit: limit).sorted
    }

    /// ``members(ofCollection:matching:limit:)`` with the token of the last commit they reflect, both read in one
    /// read transaction.
    package func membersWithToken(ofCollection id: Int64, matching predicate: StorePredicate, limit: Int?) throws
        -> (sorted: SortedIdentifiers, token: ChangeToken)
    {
        var arguments: StatementArguments = [id]
        var sql = """
            SELECT m.assetID, m.position FROM collection_member m JOIN asset ON asset.id = m.assetID
            WHERE m.collectionID = ?
            """
        if predicate != .all { sql += " AND (" + predicate.sql(into: &arguments) + ")" }
        sql += " ORDER BY m.position, m.assetID"
        if let limit {
            sql += " LIMIT ?"
            arguments += [max(0, limit)]
        }
        return try read { db in
            let token = try Int64.fetchOne(db, sql: "SELECT value FROM store_meta WHERE name = 'lastToken'") ?? 0
            // The default fetch (hidden and trashed assets left out, or nothing left out): the packed order.
            if let packed = try Self.packedMembers(of: id, matching: predicate, db) {
                var (ids, positions) = packed
                if let limit, limit < ids.count {
                    ids = ContiguousArray(ids.prefix(max(0, limit)))
                    positions = ContiguousArray(positions.prefix(max(0, limit)))
                }
                return (SortedIdentifiers(ids: ids, keys: [.integer(positions)]), ChangeToken(rawValue: token))
            }
            var ids = ContiguousArray<Int64>()
            var positions = ContiguousArray<Int64>()
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() {
                ids.append(row[0])
                positions.append(row[1])
            }
            return (SortedIdentifiers(ids: ids, keys: [.integer(positions)]), ChangeToken(rawValue: token))
        }
    }

    /// How many assets match each of `queries` (each one's limit applied), read in one statement of one read
    /// transaction, so the counts agree with one another. Each count is the very `WHERE` a fetch of the query runs,
    /// so SQLite picks the same partial index for it.
    package func counts(_ queries: [StoreQuery]) throws -> [Int] {
        guard !queries.isEmpty else { return [] }
        var arguments = StatementArguments()
        let columns = queries.map { query in
            var unlimited = query
            unlimited.limit = nil
            unlimited.sort = []
            var sql = "SELECT count(*) FROM asset"
            if unlimited.predicate != .all { sql += " WHERE " + unlimited.predicate.sql(into: &arguments) }
            return "(" + sql + ")"
        }
        let sql = "SELECT " + columns.joined(separator: ", ")
        let row = try read { db in try Row.fetchOne(db, sql: sql, arguments: arguments) }
        return queries.enumerated().map { index, query in
            let all: Int = row?[index] ?? 0
            return query.limit.map { min($0, all) } ?? all
        }
    }

    /// SQLite's plan for ``counts(_:)`` of one query, one line per step (`EXPLAIN QUERY PLAN`).
    package func countPlan(_ query: StoreQuery) throws -> [String] {
        var arguments = StatementArguments()
        var sql = "EXPLAIN QUERY PLAN SELECT count(*) FROM asset"
        if query.predicate != .all { sql += " WHERE " + query.predicate.sql(into: &arguments) }
        return try read { db in try Row.fetchAll(db, sql: sql, arguments: arguments).map { $0["detail"] } }
    }

    /// Whether any of `assetIDs` is in the album.
    package func hasMembers(_ collectionID: Int64, among assetIDs: Set<Int64>) throws -> Bool {
        guard !assetIDs.isEmpty else { return false }
        let list = "[" + assetIDs.map(String.init).joined(separator: ",") + "]"
        return try read { db in
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (SELECT 1 FROM collection_member WHERE collectionID = ?
                        AND assetID IN (SELECT value FROM json_each(?)))
                    """, arguments: [collectionID, list]) ?? false
        }
    }
}
