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
    /// The identity every library on the bucket will share (a lower-case UUID).
    package var uuid: String
    package var kind: StoredCollectionKind
    package var title: String
    /// The folder it is in; `nil` at the top level.
    package var parentID: Int64?
    package var creationDate: Date
    package var modificationDate: Date
    /// An album's assets, or a folder's albums and folders.
    package var count: Int
}

/// The collections: albums (ordered lists of assets) and folders. An album's order is a position per member,
/// spaced ``memberPositionStep`` apart so that an insertion between two members takes a free position; when
/// there is none the album is renumbered (O(members), rare).
extension AssetStore {
    /// The gap between consecutive members' positions after a renumbering or an append.
    package static let memberPositionStep: Int64 = 1 << 20

    static let collectionColumns = """
        c.id, c.uuid, c.kind, c.title, c.parentID, c.creationDate, c.modificationDate,
        CASE c.kind WHEN 1 THEN (SELECT count(*) FROM collection_member m WHERE m.collectionID = c.id)
        ELSE (SELECT count(*) FROM collection k WHERE k.parentID = c.id) END
        """

    static func collection(_ row: Row) -> CollectionRecord? {
        guard let kind = StoredCollectionKind(rawValue: row[2]) else { return nil }
        return CollectionRecord(
            id: row[0], uuid: row[1], kind: kind, title: row[3], parentID: row[4],
            creationDate: Date(timeIntervalSince1970: row[5]), modificationDate: Date(timeIntervalSince1970: row[6]),
            count: row[7])
    }

    static func collections(_ db: Database, where condition: String, _ arguments: StatementArguments) throws
        -> [CollectionRecord]
    {
        try Row.fetchAll(
            db, sql: "SELECT \(collectionColumns) FROM collection c WHERE \(condition) ORDER BY c.title, c.id",
            arguments: arguments
        ).compactMap(collection)
    }

    /// Every collection, or those of one kind, or those directly in one folder (`parentID`; `.some(nil)`: the
    /// top level), ordered by title.
    package func collections(kind: StoredCollectionKind? = nil, parentID: Int64?? = nil) throws -> [CollectionRecord] {
        var terms = ["1"]
        var arguments = StatementArguments()
        if let kind {
            terms.append("c.kind = ?")
            arguments += [kind.rawValue]
        }
        if let parentID {
            if let parentID {
                terms.append("c.parentID = ?")
                arguments += [parentID]
            } else {
                terms.append("c.parentID IS NULL")
            }
        }
        let condition = terms.joined(separator: " AND ")
        return try read { db in try Self.collections(db, where: condition, arguments) }
    }

    /// The collection with this UUID, or `nil`.
    package func collection(uuid: String) throws -> CollectionRecord? {
        try read { db in try Self.collections(db, where: "c.uuid = ?", [uuid]).first }
    }

    /// The collection with this identifier, or `nil`.
    package func collection(id: Int64) throws -> CollectionRecord? {
        try read { db in try Self.collections(db, where: "c.id = ?", [id]).first }
    }

    /// An album's assets in its order.
    package func memberIDs(ofCollection id: Int64) throws -> [Int64] {
        try read { db in try StoreTransaction.memberIDs(db, id) }
    }

    /// The albums `assetID` is in.
    package func collections(containing assetID: Int64) throws -> [CollectionRecord] {
        try read { db in
            try Self.collections(
                db, where: "c.id IN (SELECT collectionID FROM collection_member WHERE assetID = ?)", [assetID])
        }
    }
}

extension StoreTransaction {
    /// The collection with this UUID, or `nil`.
    package func collection(uuid: String) throws -> CollectionRecord? {
        try AssetStore.collections(db, where: "c.uuid = ?", [uuid]).first
    }

    static func memberIDs(_ db: Database, _ collectionID: Int64) throws -> [Int64] {
        try Int64.fetchAll(
            db, sql: "SELECT assetID FROM collection_member WHERE collectionID = ? ORDER BY position",
            arguments: [collectionID])
    }

    /// An album's assets in its order.
    package func memberIDs(ofCollection id: Int64) throws -> [Int64] { try Self.memberIDs(db, id) }

    /// Creates an album or folder. `parentID` must name a folder.
    /// - Throws: ``AssetStoreError/invariantViolation(_:)`` for a parent that is not a folder or a UUID in use.
    package func createCollection(
        uuid: String, kind: StoredCollectionKind, title: String, parentID: Int64?, now: Date
    ) throws -> Int64 {
        try checkParent(parentID, of: nil)
        guard try collection(uuid: uuid) == nil else {
            throw AssetStoreError.invariantViolation("collection \(uuid) exists already")
        }
        try db.execute(
            sql: """
                INSERT INTO collection (uuid, kind, title, parentID, creationDate, modificationDate)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [uuid, kind.rawValue, title, parentID, now.timeIntervalSince1970, now.timeIntervalSince1970])
        collectionsTouched.insert(uuid)
        return db.lastInsertedRowID
    }

    /// Renames a collection and/or moves it to another folder (`parentID`: `.some(nil)` for the top level).
    /// - Throws: ``AssetStoreError/invariantViolation(_:)`` for a parent that is not a folder, or that is the
    ///   folder itself or inside it.
    package func updateCollection(_ id: Int64, title: String? = nil, parentID: Int64?? = nil, now: Date) throws {
        if let parentID { try checkParent(parentID, of: id) }
        var sets: [String] = []
        var arguments = StatementArguments()
        if let title {
            sets.append("title = ?")
            arguments += [title]
        }
        if let parentID {
            sets.append("parentID = ?")
            arguments += [parentID]
        }
        guard !sets.isEmpty else { return }
        try touchCollection(id, now: now, sets: sets, arguments)
    }

    private func touchCollection(
        _ id: Int64, now: Date, sets: [String] = [], _ arguments: StatementArguments = []
    ) throws {
        try db.execute(
            sql: "UPDATE collection SET \((sets + ["modificationDate = ?"]).joined(separator: ", ")) WHERE id = ?",
            arguments: arguments + [now.timeIntervalSince1970, id])
        guard db.changesCount > 0,
            let uuid = try String.fetchOne(db, sql: "SELECT uuid FROM collection WHERE id = ?", arguments: [id])
        else { throw AssetStoreError.invariantViolation("no collection \(id)") }
        collectionsTouched.insert(uuid)
    }

    private func checkParent(_ parentID: Int64?, of id: Int64?) throws {
        guard var folder = parentID else { return }
        // Walks up from the new parent: a cycle (the collection itself above it) or a non-folder is refused.
        var steps = 0
        while true {
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT kind, parentID FROM collection WHERE id = ?", arguments: [folder]),
                row[0] as Int == StoredCollectionKind.folder.rawValue
            else { throw AssetStoreError.invariantViolation("collection \(folder) is not a folder") }
            if folder == id { throw AssetStoreError.invariantViolation("a folder cannot go inside itself") }
            guard let up: Int64 = row[1] else { return }
            folder = up
            steps += 1
            if steps > 10_000 { throw AssetStoreError.invariantViolation("folders nested in a loop") }
        }
    }

    /// Deletes a collection; a folder's albums and folders go with it. The assets stay in the library.
    package func deleteCollection(_ id: Int64) throws {
        var pending = [id]
        while let next = pending.popLast() {
            pending += try Int64.fetchAll(db, sql: "SELECT id FROM collection WHERE parentID = ?", arguments: [next])
            let uuid = try String.fetchOne(db, sql: "SELECT uuid FROM collection WHERE id = ?", arguments: [next])
            try db.execute(sql: "DELETE FROM collection_member WHERE collectionID = ?", arguments: [next])
            try db.execute(sql: "DELETE FROM collection WHERE id = ?", arguments: [next])
            if let uuid { collectionsTouched.insert(uuid) }
        }
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
        }
        try place(moved, at: destination, among: remaining, in: collectionID)
        try touchCollection(collectionID, now: now)
    }

    private func memberPositions(_ collectionID: Int64) throws -> [(id: Int64, position: Int64)] {
        guard
            try Int.fetchOne(
                db, sql: "SELECT kind FROM collection WHERE id = ?", arguments: [collectionID])
                == StoredCollectionKind.album.rawValue
        else { throw AssetStoreError.invariantViolation("collection \(collectionID) is not an album") }
        return try Row.fetchAll(
            db, sql: "SELECT assetID, position FROM collection_member WHERE collectionID = ? ORDER BY position",
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
        try db.execute(sql: "DELETE FROM collection_member WHERE collectionID = ?", arguments: [collectionID])
        for (offset, id) in order.enumerated() { try insertMember(id, step * Int64(offset + 1), collectionID) }
    }

    private func insertMember(_ id: Int64, _ position: Int64, _ collectionID: Int64) throws {
        try db.execute(
            sql: "INSERT INTO collection_member (collectionID, assetID, position) VALUES (?, ?, ?)",
            arguments: [collectionID, id, position])
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
}

extension AssetStore {
    /// How many assets match `query` (its limit applied).
    package func count(_ query: StoreQuery) throws -> Int {
        var arguments = StatementArguments()
        var unlimited = query
        unlimited.limit = nil
        unlimited.sort = []
        let sql = Self.selectSQL(columns: "count(*)", unlimited, &arguments)
        let all = try read { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0 }
        return query.limit.map { min($0, all) } ?? all
    }

    /// The assets with a content edit.
    package func editedAssetIDs() throws -> Set<Int64> {
        try read { db in Set(try Int64.fetchAll(db, sql: "SELECT id FROM asset WHERE editRevision IS NOT NULL")) }
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
