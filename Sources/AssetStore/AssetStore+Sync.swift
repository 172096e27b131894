import Foundation
import GRDB

/// Reads that catalog sync and the library's file management need.
extension AssetStore {
    /// The records with these keys (keys without a row are skipped), keyed by key.
    /// - Parameter keys: Bucket keys.
    package func records(keys: [String]) throws -> [String: AssetRecord] {
        guard !keys.isEmpty else { return [:] }
        return try read { db in
            var result: [String: AssetRecord] = [:]
            for start in stride(from: 0, to: keys.count, by: 500) {
                let batch = Array(keys[start..<min(start + 500, keys.count)])
                let sql =
                    "SELECT \(AssetRecord.selectColumns) FROM asset WHERE key IN ("
                    + Array(repeating: "?", count: batch.count).joined(separator: ",") + ")"
                try Self.forEachRecord(db, sql: sql, arguments: StatementArguments(batch)) { record in
                    result[record.key] = record
                    return true
                }
            }
            return result
        }
    }

    /// Every record whose key starts with `prefix` and lies in `(after, through]` (by UTF-8 bytes, S3's order;
    /// `nil` ends are the prefix's), in any upload state, keyed by key: the catalog's side of one listing page.
    package func records(withPrefix prefix: String, after: String?, through: String?) throws -> [String: AssetRecord] {
        try read { db in
            var sql = "SELECT \(AssetRecord.selectColumns) FROM asset WHERE key " + (after == nil ? ">= ?" : "> ?")
            var arguments: StatementArguments = [after ?? prefix]
            if let through {
                sql += " AND key <= ?"
                arguments += [through]
            }
            sql += " ORDER BY key"
            var result: [String: AssetRecord] = [:]
            try Self.forEachRecord(db, sql: sql, arguments: arguments) { record in
                // Sorted by key: the first key past the prefix ends the prefix's keys.
                guard record.key.utf8.starts(with: prefix.utf8) else { return false }
                result[record.key] = record
                return true
            }
            return result
        }
    }

    /// Up to `limit` records of assets in the bucket (upload state `uploaded`) whose key sorts after `key` (all
    /// when nil), in key order: one page of a walk over the whole catalog in bounded memory.
    package func uploadedRecords(after key: String?, limit: Int) throws -> [AssetRecord] {
        try read { db in
            let sql =
                "SELECT \(AssetRecord.selectColumns) FROM asset WHERE uploadState = 0"
                + (key == nil ? "" : " AND key > ?") + " ORDER BY key LIMIT ?"
            let arguments: StatementArguments = key.map { [$0, limit] } ?? [limit]
            return try Self.records(db, sql: sql, arguments: arguments, capacity: limit)
        }
    }

    /// The records a statement selecting ``AssetRecord/selectColumns`` reads, in its order.
    static func records(_ db: Database, sql: String, arguments: StatementArguments, capacity: Int) throws
        -> [AssetRecord]
    {
        var result: [AssetRecord] = []
        result.reserveCapacity(min(capacity, 1 << 16))
        try forEachRecord(db, sql: sql, arguments: arguments) {
            result.append($0)
            return true
        }
        return result
    }

    /// Hands each record a statement selecting ``AssetRecord/selectColumns`` reads to `body`, in its order, until
    /// `body` returns false — decoded straight from SQLite (a page of 25,000 through GRDB's row cursor took twice as
    /// long).
    static func forEachRecord(
        _ db: Database, sql: String, arguments: StatementArguments, _ body: (AssetRecord) throws -> Bool
    ) throws {
        let statement = try db.makeStatement(sql: sql)
        try statement.setArguments(arguments)
        let raw = RawStatement(db, boundHandle: statement.sqliteStatement)
        defer { raw.reset() }
        while try raw.step() {
            guard try body(try AssetRecord(raw: raw)) else { return }
        }
    }

    /// Up to `limit` records of assets in the bucket whose metadata is still to read (``MetadataFill``), with keys
    /// after `key` (all when nil), in key order — those with only their listing, and, when `imageHeaders`, those
    /// whose image headers are left. Reads the partial index `asset_metadataFill`: O(rows returned).
    package func recordsNeedingMetadata(after key: String?, limit: Int, imageHeaders: Bool) throws -> [AssetRecord] {
        try read { db in
            let sql =
                "SELECT \(AssetRecord.selectColumns) FROM asset INDEXED BY asset_metadataFill"
                + " WHERE imageMetadataPending <> 0 AND imageMetadataPending >= ? AND uploadState = 0"
                + (key == nil ? "" : " AND key > ?") + " ORDER BY key LIMIT ?"
            let least = imageHeaders ? MetadataFill.imageHeaders.rawValue : MetadataFill.objectHead.rawValue
            let arguments: StatementArguments = key.map { [least, $0, limit] } ?? [least, limit]
            return try Self.records(db, sql: sql, arguments: arguments, capacity: limit)
        }
    }

    /// How many assets still have metadata to read: only their listing (`objectHead`), and only their image
    /// headers (`imageHeaders`).
    package func metadataFillCounts() throws -> (objectHead: Int, imageHeaders: Int) {
        try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT imageMetadataPending, count(*) FROM asset INDEXED BY asset_metadataFill"
                    + " WHERE imageMetadataPending <> 0 GROUP BY imageMetadataPending")
            var counts = (objectHead: 0, imageHeaders: 0)
            for row in rows {
                let fill: Int = row[0]
                let count: Int = row[1]
                if fill == MetadataFill.objectHead.rawValue { counts.objectHead = count }
                if fill == MetadataFill.imageHeaders.rawValue { counts.imageHeaders = count }
            }
            return counts
        }
    }

    /// Identifiers of assets that have a thumbnail in the bucket but not on disk.
    package func identifiersNeedingThumbnail() throws -> [Int64] {
        try read { db in
            try Int64.fetchAll(
                db, sql: "SELECT id FROM asset WHERE thumbnailKey IS NOT NULL AND thumbnailPresent = 0 ORDER BY id")
        }
    }

    /// Identifiers of pinned assets whose original is not verified locally (state other than `full`).
    package func identifiersOfPinnedAssetsNotFull() throws -> [Int64] {
        try read { db in
            try Int64.fetchAll(
                db, sql: "SELECT id FROM asset WHERE isPinned = 1 AND availability != ? ORDER BY id",
                arguments: [StoredAvailability.full.rawValue])
        }
    }
}
