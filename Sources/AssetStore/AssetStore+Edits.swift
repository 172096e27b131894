import Foundation
import GRDB

/// One known revision of an asset's content edit, as the catalog keeps it: the library's manifest (opaque text
/// here) and whether it is in the bucket yet.
package struct StoredEditRevision: Sendable, Hashable {
    package var assetID: Int64
    package var revision: String
    package var manifest: String
    package var isShared: Bool
    /// The saved checkpoint of the rendered file's upload (opaque), while it goes up in parts.
    package var uploadCheckpoint: String?

    package init(assetID: Int64, revision: String, manifest: String, isShared: Bool, uploadCheckpoint: String? = nil) {
        self.assetID = assetID
        self.revision = revision
        self.manifest = manifest
        self.isShared = isShared
        self.uploadCheckpoint = uploadCheckpoint
    }
}

/// The `edit_revision` table: every revision of every asset's content edit this library knows (the current one,
/// ones a concurrent edit superseded, revert markers). Writing it is not a change by itself; the asset row's
/// ``AssetRecord/editRevision`` is what observers see.
extension AssetStore {
    /// The revisions known for an asset, oldest first (revision identifiers sort in time order).
    package func editRevisions(of assetID: Int64) throws -> [StoredEditRevision] {
        try read { db in try Self.revisions(db, where: "assetID = ?", [assetID]) }
    }

    /// Revisions not in the bucket yet, oldest first, at most `limit`.
    package func unsharedEditRevisions(limit: Int = 256) throws -> [StoredEditRevision] {
        try read { db in
            try Self.revisions(db, where: "shared = 0", [], suffix: " LIMIT \(max(1, limit))")
        }
    }

    /// How many revisions are not in the bucket yet.
    package func unsharedEditRevisionCount() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM edit_revision WHERE shared = 0") ?? 0 }
    }

    /// Saves (or forgets) the upload checkpoint of a revision's rendered file, in its own transaction.
    package func setEditUploadCheckpoint(_ checkpoint: String?, assetID: Int64, revision: String) throws {
        do {
            try pool.write { db in
                try db.execute(
                    sql: "UPDATE edit_revision SET uploadCheckpoint = ? WHERE assetID = ? AND revision = ?",
                    arguments: [checkpoint, assetID, revision])
            }
        } catch let error as DatabaseError {
            throw Self.translate(error, path: databaseURL.path)
        }
    }

    static func revisions(_ db: Database, where condition: String, _ arguments: [Int64], suffix: String = "")
        throws -> [StoredEditRevision]
    {
        try Row.fetchAll(
            db,
            sql: "SELECT assetID, revision, manifest, shared, uploadCheckpoint FROM edit_revision WHERE \(condition) "
                + "ORDER BY assetID, revision" + suffix,
            arguments: StatementArguments(arguments)
        ).map {
            StoredEditRevision(
                assetID: $0[0], revision: $0[1], manifest: $0[2], isShared: $0[3], uploadCheckpoint: $0[4])
        }
    }
}

extension StoreTransaction {
    /// The revisions known for an asset, oldest first.
    package func editRevisions(of assetID: Int64) throws -> [StoredEditRevision] {
        try AssetStore.revisions(db, where: "assetID = ?", [assetID])
    }

    /// Records a revision; one already known is left as it is (revisions are immutable), and `false` returned.
    @discardableResult
    package func insertEditRevision(_ revision: StoredEditRevision) throws -> Bool {
        try db.execute(
            sql: "INSERT INTO edit_revision (assetID, revision, manifest, shared) VALUES (?, ?, ?, ?) "
                + "ON CONFLICT(assetID, revision) DO NOTHING",
            arguments: [revision.assetID, revision.revision, revision.manifest, revision.isShared])
        return db.changesCount > 0
    }

    /// Marks a revision as in the bucket with the manifest as written there (and drops its upload checkpoint).
    package func markEditRevisionShared(assetID: Int64, revision: String, manifest: String) throws {
        try db.execute(
            sql: "UPDATE edit_revision SET shared = 1, manifest = ?, uploadCheckpoint = NULL "
                + "WHERE assetID = ? AND revision = ?",
            arguments: [manifest, assetID, revision])
    }

    /// Forgets revisions of an asset (all of them, or those listed).
    package func deleteEditRevisions(of assetID: Int64, revisions: [String]? = nil) throws {
        if let revisions {
            for revision in revisions {
                try db.execute(
                    sql: "DELETE FROM edit_revision WHERE assetID = ? AND revision = ?", arguments: [assetID, revision])
            }
        } else {
            try db.execute(sql: "DELETE FROM edit_revision WHERE assetID = ?", arguments: [assetID])
        }
    }
}

extension AssetStore {
    /// The identifiers of assets whose rendered version the catalog says is local.
    package func idsWithLocalRenderedVersion() throws -> [Int64] {
        try read { db in
            try Int64.fetchAll(
                db, sql: "SELECT id FROM asset WHERE editRevision IS NOT NULL AND editAvailability = 3")
        }
    }
}
