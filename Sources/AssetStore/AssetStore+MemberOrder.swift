import Foundation
import GRDB

/// Each album's members in its order, kept packed in `collection_order` (the identifiers, then the positions,
/// each a little-endian 64-bit integer): rewritten in the transaction that changes the members, so that it always
/// agrees with `collection_member`; read whole to list a large album without walking its members row by row.
extension AssetStore {
    /// Rewrites the packed order of every album the change touched (its members, or the album itself).
    static func refreshMemberOrders(_ changes: StoreChangeSet, _ db: Database) throws {
        var albums = Set(changes.memberDeltas.keys)
        let uuids = changes.collections.filter { !$0.hasPrefix(keyAlbumPrefix) && !$0.hasPrefix(keyListPrefix) }
        if !uuids.isEmpty {
            let list = String(decoding: try JSONSerialization.data(withJSONObject: Array(uuids)), as: UTF8.self)
            albums.formUnion(
                try Int64.fetchAll(
                    db, sql: "SELECT id FROM collection WHERE uuid IN (SELECT value FROM json_each(?))",
                    arguments: [list]))
        }
        for id in albums { try writeMemberOrder(of: id, db) }
    }

    /// Packs the album's members (by position, then identifier) into its `memberOrder`; NULL for a folder or a
    /// deleted album.
    static func writeMemberOrder(of id: Int64, _ db: Database) throws {
        let isAlbum =
            try Bool.fetchOne(
                db, sql: "SELECT kind = 1 AND deleted = 0 FROM collection WHERE id = ?", arguments: [id]) ?? false
        guard isAlbum else {
            try db.execute(sql: "DELETE FROM collection_order WHERE collectionID = ?", arguments: [id])
            return
        }
        var ids: [Int64] = []
        var positions: [Int64] = []
        let rows = try Row.fetchCursor(
            db,
            sql: "SELECT assetID, position FROM collection_member WHERE collectionID = ? ORDER BY position, assetID",
            arguments: [id])
        while let row = try rows.next() {
            ids.append((row[0] as Int64).littleEndian)
            positions.append((row[1] as Int64).littleEndian)
        }
        var packed = Data(capacity: (ids.count + positions.count) * 8)
        ids.withUnsafeBytes { packed.append(contentsOf: $0) }
        positions.withUnsafeBytes { packed.append(contentsOf: $0) }
        try db.execute(
            sql: "INSERT OR REPLACE INTO collection_order (collectionID, memberOrder) VALUES (?, ?)",
            arguments: [id, packed])
    }

    /// The album's packed members, or nil when it has none recorded (a folder, a deleted album).
    static func memberOrder(of id: Int64, _ db: Database) throws -> (
        ids: ContiguousArray<Int64>, positions: ContiguousArray<Int64>
    )? {
        guard
            let packed = try Data.fetchOne(
                db, sql: "SELECT memberOrder FROM collection_order WHERE collectionID = ?", arguments: [id])
        else { return nil }
        let count = packed.count / 16
        var ids = ContiguousArray<Int64>(repeating: 0, count: count)
        var positions = ContiguousArray<Int64>(repeating: 0, count: count)
        packed.withUnsafeBytes { raw in
            ids.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<(count * 8)])) }
            positions.withUnsafeMutableBytes {
                $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[(count * 8)..<(count * 16)]))
            }
        }
        #if _endian(big)
            for index in 0..<count {
                ids[index] = Int64(littleEndian: ids[index])
                positions[index] = Int64(littleEndian: positions[index])
            }
        #endif
        return (ids, positions)
    }

    /// The album's members that `predicate` selects, read from the packed order, when `predicate` only leaves
    /// out hidden and/or trashed assets (what a fetch does by default): those few are found through the partial
    /// indexes of hidden and trashed assets (`CROSS JOIN` keeps them the outer loop: the planner would otherwise
    /// walk the album's members and probe each). Nil for any other predicate, or an album without a packed order.
    static func packedMembers(of id: Int64, matching predicate: StorePredicate, _ db: Database) throws
        -> (ids: ContiguousArray<Int64>, positions: ContiguousArray<Int64>)?
    {
        let terms: [StorePredicate] =
            switch predicate {
            case .all: []
            case .and(let list): list
            default: [predicate]
            }
        // The partial index that lists each kind of asset left out, and its condition.
        var dropped: [(index: String, condition: String)] = []
        for term in terms {
            switch term {
            case .field(.isHidden(false)): dropped.append(("asset_hidden", "a.isHidden = 1"))
            case .field(.isTrashed(false)): dropped.append(("asset_trashed", "a.trashedDate IS NOT NULL"))
            case .all: continue
            default: return nil
            }
        }
        guard var (ids, positions) = try memberOrder(of: id, db) else { return nil }
        var left = Set<Int64>()
        for (index, condition) in dropped {
            left.formUnion(
                try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT a.id FROM asset a INDEXED BY \(index)
                        CROSS JOIN collection_member m ON m.collectionID = ? AND m.assetID = a.id WHERE \(condition)
                        """, arguments: [id]))
        }
        if !left.isEmpty {
            var keptIDs = ContiguousArray<Int64>()
            var keptPositions = ContiguousArray<Int64>()
            keptIDs.reserveCapacity(ids.count - left.count)
            keptPositions.reserveCapacity(ids.count - left.count)
            for (index, member) in ids.enumerated() where !left.contains(member) {
                keptIDs.append(member)
                keptPositions.append(positions[index])
            }
            (ids, positions) = (keptIDs, keptPositions)
        }
        return (ids, positions)
    }
}
