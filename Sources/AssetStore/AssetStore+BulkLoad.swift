import Foundation
import GRDB

/// Loading many rows into an empty catalog (a new library's first listing or checkpoint): SQLite builds an index
/// from sorted rows several times faster than it inserts the same rows one by one into a B-tree, so the asset
/// table's dense secondary indexes are dropped for the load and built again after it.
///
/// Crash-safe: the dropped indexes' definitions are recorded in the transaction that drops them, and
/// ``restoreSuspendedIndexes()`` (which the library runs when it opens a folder no other library has open) builds
/// any that a killed process left suspended. While indexes are suspended every query still answers correctly; the
/// ones that would use them scan the table instead.
extension AssetStore {
    /// The setting that holds the suspended indexes' `CREATE INDEX` statements (a JSON array), present only while
    /// they are suspended.
    static let suspendedIndexesSetting = "suspendedAssetIndexes"

    /// The asset table's secondary indexes (not the key's automatic one), by name.
    private static let assetIndexesSQL =
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'asset' AND sql IS NOT NULL "
        + "ORDER BY name"

    /// The indexes a bulk load suspends: those nearly every loaded row enters at a place of its own (the shown
    /// assets by creation date, modification date, date added, content hash). The others stay: the key's uniqueness, which
    /// every insert relies on, and the partial indexes of rare states (not uploaded, pinned, trashed, local,
    /// edited…) or on the row identifier, which new rows enter seldom or only at the end — building one of those
    /// again would cost a scan of the whole table for nothing. An index missing here is simply not suspended.
    static let bulkLoadSuspendedIndexes: Set<String> = [
        "asset_shown_creationDate", "asset_modificationDate", "asset_added", "asset_contentSHA256",
    ]

    /// Drops the asset table's dense secondary indexes (``bulkLoadSuspendedIndexes``) and records their
    /// definitions, in one transaction. Does nothing when they are suspended already.
    /// - Returns: How many indexes were dropped.
    @discardableResult
    package func suspendIndexesForBulkLoad() throws -> Int {
        do {
            return try pool.write { db in
                guard try Self.suspendedIndexes(db, path: databaseURL.path) == nil else { return 0 }
                let indexes = try Row.fetchAll(db, sql: Self.assetIndexesSQL).filter {
                    Self.bulkLoadSuspendedIndexes.contains($0["name"])
                }
                let statements: [String] = indexes.map { $0["sql"] }
                let encoded = String(decoding: try JSONEncoder().encode(statements), as: UTF8.self)
                try db.execute(
                    sql: "INSERT INTO store_setting (name, value) VALUES (?, ?)",
                    arguments: [Self.suspendedIndexesSetting, encoded])
                for index in indexes {
                    let name: String = index["name"]
                    try db.execute(sql: "DROP INDEX \(name.quotedDatabaseIdentifier)")
                }
                return indexes.count
            }
        } catch let error as DatabaseError {
            throw Self.translate(error, path: databaseURL.path)
        }
    }

    /// Builds again, in one transaction, the indexes ``suspendIndexesForBulkLoad()`` dropped. Does nothing when
    /// none are suspended; safe to call any number of times.
    /// - Returns: How many indexes were built.
    @discardableResult
    package func restoreSuspendedIndexes() throws -> Int {
        do {
            return try pool.write { db in try Self.restoreSuspendedIndexes(db, path: databaseURL.path) }
        } catch let error as DatabaseError {
            throw Self.translate(error, path: databaseURL.path)
        }
    }

    /// ``restoreSuspendedIndexes()`` inside a write of the caller's (the store's open runs it before migrating,
    /// so that a migration meets the schema it was written for).
    static func restoreSuspendedIndexes(_ db: Database, path: String) throws -> Int {
        guard try db.tableExists("store_setting"), let statements = try suspendedIndexes(db, path: path) else {
            return 0
        }
        for statement in statements {
            // `IF NOT EXISTS`: a definition that is already back (built by hand, say) is kept as it is.
            let sql = statement.replacingOccurrences(
                of: "CREATE INDEX ", with: "CREATE INDEX IF NOT EXISTS ", options: .anchored)
            try db.execute(sql: sql)
        }
        try db.execute(sql: "DELETE FROM store_setting WHERE name = ?", arguments: [suspendedIndexesSetting])
        return statements.count
    }

    /// The asset table's secondary indexes as they are now, their `CREATE INDEX` statements in name order (for
    /// tests and diagnostics).
    package func assetIndexDefinitions() throws -> [String] {
        try read { db in try Row.fetchAll(db, sql: Self.assetIndexesSQL).map { $0["sql"] } }
    }

    private static func suspendedIndexes(_ db: Database, path: String) throws -> [String]? {
        guard
            let value = try String.fetchOne(
                db, sql: "SELECT value FROM store_setting WHERE name = ?", arguments: [suspendedIndexesSetting])
        else { return nil }
        do {
            return try JSONDecoder().decode([String].self, from: Data(value.utf8))
        } catch {
            throw AssetStoreError.corrupt(path: path, reason: "the suspended indexes' definitions are unreadable")
        }
    }
}
