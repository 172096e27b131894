import Essentials
import Foundation
import GRDB

/// The persistent change history: one entry per committed non-empty transaction, identifiers only.
extension AssetStore {
    func appendHistory(_ changes: StoreChangeSet, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO change_history (token, inserted, updated, contentChanged, deleted, collections)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                changes.token.rawValue, Self.encode(changes.inserted), Self.encode(changes.updated),
                Self.encode(changes.contentChanged), Self.encode(changes.deleted),
                changes.collections.isEmpty ? nil : changes.collections.sorted().joined(separator: "\n"),
            ])
        try db.execute(
            sql: "DELETE FROM change_history WHERE token <= ?",
            arguments: [changes.token.rawValue - Int64(historyLimit)])
    }

    /// Every history entry after `token`, in commit order (empty when `token` is current).
    ///
    /// Works across restarts. - Throws: ``AssetStoreError/historyExpired(token:oldestAvailable:)`` when entries
    /// after `token` were trimmed; ``AssetStoreError/invalidToken(_:)`` for a token newer than ``currentToken``.
    package func changes(since token: ChangeToken) throws -> [StoreHistoryEntry] {
        try read { db in
            let last = try Int64.fetchOne(db, sql: "SELECT value FROM store_meta WHERE name = 'lastToken'") ?? 0
            if token.rawValue > last || token.rawValue < 0 { throw AssetStoreError.invalidToken(token.rawValue) }
            if token.rawValue == last { return [] }
            let oldest = try Int64.fetchOne(db, sql: "SELECT min(token) FROM change_history") ?? (last + 1)
            if oldest > token.rawValue + 1 {
                throw AssetStoreError.historyExpired(token: token.rawValue, oldestAvailable: oldest - 1)
            }
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM change_history WHERE token > ? ORDER BY token", arguments: [token.rawValue])
            return rows.map { row in
                StoreHistoryEntry(
                    token: ChangeToken(rawValue: row["token"]), inserted: Self.decode(row["inserted"]),
                    updated: Self.decode(row["updated"]), contentChanged: Self.decode(row["contentChanged"]),
                    deleted: Self.decode(row["deleted"]),
                    collections: Set(((row["collections"] as String?) ?? "").split(separator: "\n").map(String.init)))
            }
        }
    }

    /// Identifiers as consecutive little-endian 64-bit integers.
    static func encode(_ ids: Set<Int64>) -> Data {
        var data = Data(capacity: ids.count * 8)
        for id in ids.sorted() { withUnsafeBytes(of: id.littleEndian) { data.append(contentsOf: $0) } }
        return data
    }

    static func decode(_ data: Data) -> Set<Int64> {
        var ids = Set<Int64>(minimumCapacity: data.count / 8)
        data.withUnsafeBytes { buffer in
            for offset in stride(from: 0, to: buffer.count - 7, by: 8) {
                ids.insert(Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: Int64.self)))
            }
        }
        return ids
    }
}

extension AssetStore {
    /// The token of the last transaction committed by any connection to this database — another process's
    /// included — read from the database (``currentToken`` is updated to it).
    package func refreshedToken() throws -> ChangeToken {
        let last = try read { db in
            try Int64.fetchOne(db, sql: "SELECT value FROM store_meta WHERE name = 'lastToken'") ?? 0
        }
        tokenState.withLock { $0 = max($0, last) }
        return ChangeToken(rawValue: last)
    }
}
