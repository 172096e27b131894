package import Foundation
import GRDB

/// What the write path needs beyond asset rows: the checkpoints of uploads in progress (saving one is not a change
/// and uses no ``ChangeToken``), and the queues of work that is not in the bucket yet.
extension AssetStore {
    /// The saved checkpoint of the upload of an asset's original (opaque text), or `nil`.
    package func uploadCheckpoint(for id: Int64) throws -> String? {
        try read { db in
            try String.fetchOne(
                db, sql: "SELECT checkpoint FROM upload_checkpoint WHERE assetID = ?", arguments: [id])
        }
    }

    /// Saves (or, with `nil`, forgets) the checkpoint of an asset's upload, in its own transaction.
    package func setUploadCheckpoint(_ checkpoint: String?, for id: Int64) throws {
        do {
            try pool.write { db in
                if let checkpoint {
                    try db.execute(
                        sql: "INSERT INTO upload_checkpoint (assetID, checkpoint) VALUES (?, ?) "
                            + "ON CONFLICT(assetID) DO UPDATE SET checkpoint = excluded.checkpoint",
                        arguments: [id, checkpoint])
                } else {
                    try db.execute(sql: "DELETE FROM upload_checkpoint WHERE assetID = ?", arguments: [id])
                }
            }
        } catch let error as DatabaseError {
            throw Self.translate(error, path: databaseURL.path)
        }
    }

    /// Every saved checkpoint, by asset (those of assets that no longer exist included: their uploads are to be
    /// aborted).
    package func allUploadCheckpoints() throws -> [Int64: String] {
        try read { db in
            var result: [Int64: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT assetID, checkpoint FROM upload_checkpoint") {
                result[row[0]] = row[1]
            }
            return result
        }
    }

    /// The identifiers of assets whose original is in one of these upload states, oldest first, at most `limit`.
    package func ids(inUploadStates states: Set<StoredUploadState>, limit: Int = .max) throws -> [Int64] {
        guard !states.isEmpty else { return [] }
        return try read { db in
            let list = states.map { String($0.rawValue) }.sorted().joined(separator: ",")
            return try Int64.fetchAll(
                db, sql: "SELECT id FROM asset WHERE uploadState != 0 AND uploadState IN (\(list)) ORDER BY id LIMIT ?",
                arguments: [limit])
        }
    }

    /// How many assets are in each upload state other than `uploaded`.
    package func uploadStateCounts() throws -> [StoredUploadState: Int] {
        try read { db in
            var result: [StoredUploadState: Int] = [:]
            let rows = try Row.fetchAll(db, sql: SummarySQL.uploadStates)
            for row in rows {
                if let state = StoredUploadState(rawValue: row[0]) { result[state] = row[1] }
            }
            return result
        }
    }

    /// The identifiers of uploaded assets whose shared properties changed here and are not in the bucket yet.
    package func idsWithUnsharedMetadata() throws -> [Int64] {
        try read { db in
            try Int64.fetchAll(db, sql: SummarySQL.unsharedMetadata)
        }
    }

    /// The identifiers of assets in the trash since before `date` (all trashed assets with `nil`).
    package func idsTrashed(before date: Date?) throws -> [Int64] {
        try read { db in
            if let date {
                return try Int64.fetchAll(
                    db, sql: "SELECT id FROM asset WHERE trashedDate IS NOT NULL AND trashedDate < ? ORDER BY id",
                    arguments: [date.timeIntervalSinceReferenceDate])
            }
            return try Int64.fetchAll(db, sql: "SELECT id FROM asset WHERE trashedDate IS NOT NULL ORDER BY id")
        }
    }
}

extension StoreTransaction {
    /// Forgets the checkpoint of an asset's upload, in this transaction (not a change).
    package func clearUploadCheckpoint(for id: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM upload_checkpoint WHERE assetID = ?").execute(arguments: [id])
    }

    /// The asset whose original has this content hash (lower-case hex SHA-256), as this transaction sees it; the
    /// oldest when several have it.
    package func record(contentSHA256 hash: String) throws -> AssetRecord? {
        let statement = try db.cachedStatement(
            sql: "SELECT id FROM asset WHERE contentSHA256 = ? ORDER BY id LIMIT 1")
        guard let id = try Int64.fetchOne(statement, arguments: [hash]) else { return nil }
        return try record(id)
    }
}
