import Essentials
import Foundation
import GRDB

/// Schema versions and migrations. Each migration sets `PRAGMA user_version` to its number, so a database
/// written by a newer version is recognised before anything is changed.
extension AssetStore {
    /// The highest schema version this build knows.
    package static let schemaVersion = 18

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    PRAGMA application_id = \(applicationID);
                    CREATE TABLE asset (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        key TEXT NOT NULL UNIQUE,
                        size INTEGER NOT NULL,
                        etag TEXT NOT NULL,
                        lastModified REAL NOT NULL,
                        contentType TEXT,
                        creationDate REAL NOT NULL,
                        modificationDate REAL NOT NULL,
                        mediaType INTEGER NOT NULL,
                        pixelWidth INTEGER NOT NULL,
                        pixelHeight INTEGER NOT NULL,
                        orientation INTEGER NOT NULL,
                        isFavorite INTEGER NOT NULL,
                        isHidden INTEGER NOT NULL,
                        thumbnailKey TEXT,
                        thumbnailSize INTEGER,
                        thumbnailETag TEXT,
                        thumbnailPresent INTEGER NOT NULL,
                        availability INTEGER NOT NULL,
                        partialRanges TEXT,
                        partialETag TEXT,
                        localFilePath TEXT,
                        verifiedSize INTEGER,
                        verifiedETag TEXT,
                        isPinned INTEGER NOT NULL,
                        lastAccessDate REAL
                    );
                    CREATE INDEX asset_creationDate ON asset(creationDate);
                    CREATE INDEX asset_modificationDate ON asset(modificationDate);
                    CREATE INDEX asset_size ON asset(size);
                    CREATE INDEX asset_pixelCount ON asset((pixelWidth * pixelHeight));
                    CREATE INDEX asset_visible_creationDate ON asset(creationDate) WHERE isHidden = 0;
                    CREATE TABLE change_history (
                        token INTEGER PRIMARY KEY,
                        inserted BLOB NOT NULL,
                        updated BLOB NOT NULL,
                        contentChanged BLOB NOT NULL,
                        deleted BLOB NOT NULL
                    );
                    CREATE TABLE store_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
                    INSERT INTO store_meta (name, value) VALUES ('lastToken', 0);
                    PRAGMA user_version = 1;
                    """)
        }
        // v2: only the orders a library is browsed in keep an index: visible assets by creation date (the
        // partial index), modification date, key. Sorting by size or pixel count, or by date with hidden assets
        // included, is rare: SQLite sorts 100,000 rows for it on demand (tens of milliseconds), while every
        // index dropped makes each row a sync writes cheaper (a 100,000-row first sync: about a fifth).
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    DROP INDEX asset_size;
                    DROP INDEX asset_pixelCount;
                    DROP INDEX asset_creationDate;
                    PRAGMA user_version = 2;
                    """)
        }
        // v3: text settings the library keeps about itself (the endpoint and bucket it belongs to).
        migrator.registerMigration("v3") { db in
            try db.execute(
                sql: """
                    CREATE TABLE store_setting (name TEXT PRIMARY KEY, value TEXT NOT NULL);
                    PRAGMA user_version = 3;
                    """)
        }
        // v4: the write path. Shared properties (title, keywords, trash) and their merge state, the upload state
        // of imported originals, the content hash (deduplication), and the checkpoints of uploads in progress
        // (not asset rows: saving one is not a change).
        migrator.registerMigration("v4") { db in
            try db.execute(
                sql: """
                    ALTER TABLE asset ADD COLUMN title TEXT;
                    ALTER TABLE asset ADD COLUMN keywords TEXT;
                    ALTER TABLE asset ADD COLUMN trashedDate REAL;
                    ALTER TABLE asset ADD COLUMN uploadState INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE asset ADD COLUMN uploadError TEXT;
                    ALTER TABLE asset ADD COLUMN contentSHA256 TEXT;
                    ALTER TABLE asset ADD COLUMN sidecarETag TEXT;
                    ALTER TABLE asset ADD COLUMN metadataStamps TEXT;
                    ALTER TABLE asset ADD COLUMN metadataDirty INTEGER NOT NULL DEFAULT 0;
                    CREATE INDEX asset_contentSHA256 ON asset(contentSHA256) WHERE contentSHA256 IS NOT NULL;
                    CREATE INDEX asset_notUploaded ON asset(uploadState) WHERE uploadState != 0;
                    CREATE INDEX asset_metadataDirty ON asset(id) WHERE metadataDirty = 1;
                    CREATE INDEX asset_trashed ON asset(trashedDate) WHERE trashedDate IS NOT NULL;
                    CREATE TABLE upload_checkpoint (assetID INTEGER PRIMARY KEY, checkpoint TEXT NOT NULL);
                    PRAGMA user_version = 4;
                    """)
        }
        // v5: the bucket journal. Changes this library made that are not in the journal yet (its outbox, in commit
        // order), and the journal entries it applied inside the look-back window (so that an entry listed again
        // is not applied twice).
        migrator.registerMigration("v5") { db in
            try db.execute(
                sql: """
                    CREATE TABLE journal_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, change TEXT NOT NULL);
                    CREATE TABLE journal_applied (key TEXT PRIMARY KEY, time INTEGER NOT NULL);
                    CREATE INDEX journal_applied_time ON journal_applied(time);
                    PRAGMA user_version = 5;
                    """)
        }
        // v6: what opening and `status` read stays proportional to what is local, not to the library: assets
        // with anything local (recovery checks them against the disk; the cache counts them) and pinned ones.
        migrator.registerMigration("v6") { db in
            try db.execute(
                sql: """
                    CREATE INDEX asset_local ON asset(availability) WHERE availability != 0;
                    CREATE INDEX asset_pinned ON asset(id) WHERE isPinned = 1;
                    PRAGMA user_version = 6;
                    """)
        }
        // v7: the default fetch (shown assets: not hidden, not in the trash, by date) reads one index and no table
        // row: a million assets in about a tenth of the time the old index (hidden only) took with a row lookup each.
        migrator.registerMigration("v7") { db in
            try db.execute(
                sql: """
                    DROP INDEX asset_visible_creationDate;
                    CREATE INDEX asset_shown_creationDate ON asset(creationDate) WHERE isHidden = 0 AND trashedDate IS NULL;
                    PRAGMA user_version = 7;
                    """)
        }
        // v8: where a photo was taken, and which objects still need their own headers read (objects another tool
        // wrote carry no `x-amz-meta-*`: a sync reads their EXIF with a ranged GET).
        migrator.registerMigration("v8") { db in
            try db.execute(
                sql: """
                    ALTER TABLE asset ADD COLUMN latitude REAL;
                    ALTER TABLE asset ADD COLUMN longitude REAL;
                    ALTER TABLE asset ADD COLUMN altitude REAL;
                    ALTER TABLE asset ADD COLUMN imageMetadataPending INTEGER NOT NULL DEFAULT 0;
                    CREATE INDEX asset_imageMetadataPending ON asset(id) WHERE imageMetadataPending = 1;
                    PRAGMA user_version = 8;
                    """)
        }
        // v9: content edits. The asset row names its current edit revision and what of it is local; every revision
        // known for an asset (current, superseded by a concurrent edit, a revert) is a row of `edit_revision` with
        // its manifest, `shared = 0` until it is in the bucket.
        migrator.registerMigration("v9") { db in
            try db.execute(
                sql: """
                    ALTER TABLE asset ADD COLUMN editRevision TEXT;
                    ALTER TABLE asset ADD COLUMN editAvailability INTEGER NOT NULL DEFAULT 0;
                    CREATE INDEX asset_edited ON asset(id) WHERE editRevision IS NOT NULL;
                    CREATE TABLE edit_revision (
                        assetID INTEGER NOT NULL, revision TEXT NOT NULL, manifest TEXT NOT NULL,
                        shared INTEGER NOT NULL DEFAULT 0, uploadCheckpoint TEXT,
                        PRIMARY KEY (assetID, revision));
                    CREATE INDEX edit_revision_unshared ON edit_revision(assetID) WHERE shared = 0;
                    PRAGMA user_version = 9;
                    """)
        }
        // v10: the column also marks rows a first sync took from the listing alone (value 2, `MetadataFill`), read
        // afterwards in key order: the index covers every row with something left to read, by key.
        migrator.registerMigration("v10") { db in
            try db.execute(
                sql: """
                    DROP INDEX asset_imageMetadataPending;
                    CREATE INDEX asset_metadataFill ON asset(key) WHERE imageMetadataPending <> 0;
                    PRAGMA user_version = 10;
                    """)
        }
        // v11: albums and folders (`collection`; a deleted one stays as a tombstone until every library has it;
        // `memberCount` kept by triggers),
        // an album's assets in its own order (`collection_member`: a position per asset, gaps between them so that
        // an insertion rarely renumbers), the shared state last merged here (`document`, with the ETag of the
        // bucket's copy and whether this library holds changes the bucket lacks), and the collections each change
        // touched in the history; and the smart albums' sets (favourites, videos, hidden) as partial indexes, so
        // that counting them reads only their rows.
        migrator.registerMigration("v11") { db in
            try db.execute(
                sql: """
                    CREATE TABLE collection (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        uuid TEXT NOT NULL UNIQUE,
                        kind INTEGER NOT NULL,
                        title TEXT NOT NULL,
                        parentUUID TEXT,
                        creationDate REAL NOT NULL,
                        modificationDate REAL NOT NULL,
                        deleted INTEGER NOT NULL DEFAULT 0,
                        document TEXT,
                        documentETag TEXT,
                        dirty INTEGER NOT NULL DEFAULT 0,
                        unresolvedKeys TEXT,
                        memberCount INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX collection_parent ON collection(parentUUID) WHERE deleted = 0;
                    CREATE INDEX collection_dirty ON collection(id) WHERE dirty = 1;
                    CREATE INDEX collection_unresolved ON collection(id) WHERE unresolvedKeys IS NOT NULL;
                    CREATE TABLE collection_member (
                        collectionID INTEGER NOT NULL,
                        assetID INTEGER NOT NULL,
                        position INTEGER NOT NULL,
                        PRIMARY KEY (collectionID, assetID)
                    ) WITHOUT ROWID;
                    CREATE INDEX collection_member_order ON collection_member(collectionID, position, assetID);
                    CREATE INDEX collection_member_asset ON collection_member(assetID);
                    CREATE TRIGGER collection_member_added AFTER INSERT ON collection_member BEGIN
                        UPDATE collection SET memberCount = memberCount + 1 WHERE id = NEW.collectionID;
                    END;
                    CREATE TRIGGER collection_member_removed AFTER DELETE ON collection_member BEGIN
                        UPDATE collection SET memberCount = memberCount - 1 WHERE id = OLD.collectionID;
                    END;
                    CREATE INDEX asset_favorite ON asset(id) WHERE isFavorite = 1;
                    CREATE INDEX asset_video ON asset(id) WHERE mediaType = 2;
                    CREATE INDEX asset_hidden ON asset(id) WHERE isHidden = 1;
                    ALTER TABLE change_history ADD COLUMN collections TEXT;
                    PRAGMA user_version = 11;
                    """)
        }
        // v12: the folders of keys (everything of a key up to its last `/`) with how many assets each holds
        // directly, kept by every write that inserts, deletes or re-keys assets (`maintainKeyFolders`).
        migrator.registerMigration("v12") { db in
            try db.execute(
                sql: """
                    CREATE TABLE key_folder (prefix TEXT PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID;
                    INSERT INTO key_folder (prefix, count)
                        SELECT rtrim(key, replace(key, '/', '')) AS folder, count(*) FROM asset
                        WHERE instr(key, '/') > 0 GROUP BY folder;
                    PRAGMA user_version = 12;
                    """)
        }
        // v13: each album's members in its order, packed (`memberOrder`), rewritten by every transaction that
        // changes them: the first page of a large album reads one value instead of walking its members.
        // (Written by v16, which moved it to a table of its own.)
        migrator.registerMigration("v13") { db in
            try db.execute(sql: "ALTER TABLE collection ADD COLUMN memberOrder BLOB")
            try db.execute(sql: "PRAGMA user_version = 13")
        }
        // v14: when each asset was added to the bucket (`AssetRecord.addedKeySQL`), for Recently Added and the
        // sort by date added.
        migrator.registerMigration("v14") { db in
            try db.execute(
                sql: """
                    CREATE INDEX asset_added ON asset\(AssetRecord.addedKeySQL);
                    PRAGMA user_version = 14;
                    """)
        }
        // v15: albums shared as deltas (`collections/<id>/<name>.json`): what each collection changed here that no
        // object in the bucket holds yet, and the deltas merged here.
        migrator.registerMigration("v15") { db in
            try db.execute(
                sql: """
                    ALTER TABLE collection ADD COLUMN unsentKeys TEXT;
                    CREATE TABLE collection_delta (
                        key TEXT PRIMARY KEY, uuid TEXT NOT NULL, size INTEGER NOT NULL) WITHOUT ROWID;
                    CREATE INDEX collection_delta_uuid ON collection_delta(uuid);
                    PRAGMA user_version = 15;
                    """)
        }
        // v16: a collection's shared state, packed order and member count in tables of their own. In the
        // collection row, a 15 MB document (a 100,000-asset album) and the keys still to resolve were read and
        // written again by every update of the row — the count's trigger, once per member inserted — so merging a
        // large album took hours.
        migrator.registerMigration("v16") { db in
            try db.execute(
                sql: """
                    CREATE TABLE collection_document (collectionID INTEGER PRIMARY KEY, document TEXT NOT NULL);
                    INSERT INTO collection_document (collectionID, document)
                        SELECT id, document FROM collection WHERE document IS NOT NULL;
                    CREATE TABLE collection_order (collectionID INTEGER PRIMARY KEY, memberOrder BLOB NOT NULL);
                    INSERT INTO collection_order (collectionID, memberOrder)
                        SELECT id, memberOrder FROM collection WHERE memberOrder IS NOT NULL;
                    ALTER TABLE collection DROP COLUMN document;
                    ALTER TABLE collection DROP COLUMN memberOrder;
                    CREATE TABLE collection_count (collectionID INTEGER PRIMARY KEY, memberCount INTEGER NOT NULL);
                    INSERT INTO collection_count (collectionID, memberCount)
                        SELECT id, memberCount FROM collection WHERE memberCount != 0;
                    DROP TRIGGER collection_member_added;
                    DROP TRIGGER collection_member_removed;
                    CREATE TRIGGER collection_member_added AFTER INSERT ON collection_member BEGIN
                        INSERT INTO collection_count (collectionID, memberCount) VALUES (NEW.collectionID, 1)
                            ON CONFLICT (collectionID) DO UPDATE SET memberCount = memberCount + 1;
                    END;
                    CREATE TRIGGER collection_member_removed AFTER DELETE ON collection_member BEGIN
                        UPDATE collection_count SET memberCount = memberCount - 1 WHERE collectionID = OLD.collectionID;
                    END;
                    ALTER TABLE collection DROP COLUMN memberCount;
                    """)
            let unpacked = try Int64.fetchAll(
                db,
                sql: """
                    SELECT id FROM collection WHERE kind = 1 AND deleted = 0
                    AND id NOT IN (SELECT collectionID FROM collection_order)
                    """)
            for id in unpacked { try AssetStore.writeMemberOrder(of: id, db) }
            try db.execute(sql: "PRAGMA user_version = 16")
        }
        // v17: the members of a shared album whose keys no asset of the catalog has, one row each
        // (`collection_pending`), out of its document: a stranger's document naming 150,000 keys that do not exist
        // was parsed again by every sync, and kept in every library. An asset arriving with such a key marks its
        // collections to resolve (`unresolvedKeys` not NULL), so that nothing else reads those rows again. And an
        // album's count is of the members it shows (not hidden, not in the trash), as its contents are.
        migrator.registerMigration("v17") { db in
            try db.execute(
                sql: """
                    CREATE TABLE collection_pending (
                        collectionID INTEGER NOT NULL,
                        key TEXT NOT NULL,
                        addedTime INTEGER NOT NULL,
                        addedDevice TEXT NOT NULL,
                        removedTime INTEGER,
                        removedDevice TEXT,
                        position INTEGER NOT NULL,
                        placedTime INTEGER NOT NULL,
                        placedDevice TEXT NOT NULL,
                        PRIMARY KEY (collectionID, key)
                    ) WITHOUT ROWID;
                    CREATE INDEX collection_pending_key ON collection_pending(key);
                    CREATE TRIGGER asset_named_by_collection AFTER INSERT ON asset
                    WHEN EXISTS (SELECT 1 FROM collection_pending WHERE key = NEW.key) BEGIN
                        UPDATE collection SET unresolvedKeys = ''
                        WHERE unresolvedKeys IS NULL
                            AND id IN (SELECT collectionID FROM collection_pending WHERE key = NEW.key);
                    END;
                    CREATE TRIGGER asset_rekeyed_named_by_collection AFTER UPDATE OF key ON asset
                    WHEN EXISTS (SELECT 1 FROM collection_pending WHERE key = NEW.key) BEGIN
                        UPDATE collection SET unresolvedKeys = ''
                        WHERE unresolvedKeys IS NULL
                            AND id IN (SELECT collectionID FROM collection_pending WHERE key = NEW.key);
                    END;
                    DROP TRIGGER collection_member_added;
                    DROP TRIGGER collection_member_removed;
                    CREATE TRIGGER collection_member_added AFTER INSERT ON collection_member
                    WHEN (SELECT isHidden = 0 AND trashedDate IS NULL FROM asset WHERE id = NEW.assetID) BEGIN
                        INSERT INTO collection_count (collectionID, memberCount) VALUES (NEW.collectionID, 1)
                            ON CONFLICT (collectionID) DO UPDATE SET memberCount = memberCount + 1;
                    END;
                    CREATE TRIGGER collection_member_removed AFTER DELETE ON collection_member
                    WHEN (SELECT isHidden = 0 AND trashedDate IS NULL FROM asset WHERE id = OLD.assetID) BEGIN
                        UPDATE collection_count SET memberCount = memberCount - 1 WHERE collectionID = OLD.collectionID;
                    END;
                    CREATE TRIGGER asset_member_deleted AFTER DELETE ON asset
                    WHEN OLD.isHidden = 0 AND OLD.trashedDate IS NULL BEGIN
                        UPDATE collection_count SET memberCount = memberCount - 1
                        WHERE collectionID IN (SELECT collectionID FROM collection_member WHERE assetID = OLD.id);
                    END;
                    CREATE TRIGGER asset_member_shown AFTER UPDATE OF isHidden, trashedDate ON asset
                    WHEN NOT (OLD.isHidden = 0 AND OLD.trashedDate IS NULL)
                        AND NEW.isHidden = 0 AND NEW.trashedDate IS NULL BEGIN
                        INSERT INTO collection_count (collectionID, memberCount)
                            SELECT collectionID, 1 FROM collection_member WHERE assetID = NEW.id AND 1
                            ON CONFLICT (collectionID) DO UPDATE SET memberCount = memberCount + 1;
                    END;
                    CREATE TRIGGER asset_member_unshown AFTER UPDATE OF isHidden, trashedDate ON asset
                    WHEN OLD.isHidden = 0 AND OLD.trashedDate IS NULL
                        AND NOT (NEW.isHidden = 0 AND NEW.trashedDate IS NULL) BEGIN
                        UPDATE collection_count SET memberCount = memberCount - 1
                        WHERE collectionID IN (SELECT collectionID FROM collection_member WHERE assetID = NEW.id);
                    END;
                    DELETE FROM collection_count;
                    INSERT INTO collection_count (collectionID, memberCount)
                        SELECT m.collectionID, count(*) FROM collection_member m JOIN asset a ON a.id = m.assetID
                        WHERE a.isHidden = 0 AND a.trashedDate IS NULL GROUP BY m.collectionID;
                    PRAGMA user_version = 17;
                    """)
        }
        // v18: a video's length, codec and frame rate (read from its container, `Video`). The videos already in
        // the bucket are marked for their headers to be read (`MetadataFill.imageHeaders`) by the next sync.
        migrator.registerMigration("v18") { db in
            try db.execute(
                sql: """
                    ALTER TABLE asset ADD COLUMN duration REAL NOT NULL DEFAULT 0;
                    ALTER TABLE asset ADD COLUMN videoCodec TEXT;
                    ALTER TABLE asset ADD COLUMN frameRate REAL NOT NULL DEFAULT 0;
                    UPDATE asset SET imageMetadataPending = 1
                        WHERE mediaType = 2 AND imageMetadataPending = 0 AND uploadState = 0;
                    PRAGMA user_version = 18;
                    """)
        }
        return migrator
    }

    /// Creates the folder when absent and refuses one that cannot be written.
    static func prepareFolder(_ folder: URL) throws {
        let path = folder.path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw AssetStoreError.readOnly(path: path) }
        } else {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw AssetStoreError.readOnly(path: path)
            }
        }
        if !isWritable(path) { throw AssetStoreError.readOnly(path: path) }
    }

    /// `false` when the path is on a read-only file system, not writable for this user, or carries no write
    /// permission bit at all (a folder or file marked read-only is respected even by root).
    static func isWritable(_ path: String) -> Bool {
        var fileStatus = stat()
        guard stat(path, &fileStatus) == 0 else { return false }
        if fileStatus.st_mode & 0o222 == 0 { return false }
        var volume = statvfs()
        if statvfs(path, &volume) == 0, volume.f_flag & UInt(ST_RDONLY) != 0 { return false }
        return access(path, W_OK) == 0
    }

    /// Checks an existing database file without modifying it: SQLite magic, application id, schema version,
    /// readable schema.
    static func inspectExistingFile(at url: URL) throws {
        let path = url.path
        // try?: no such file: SQLite creates it
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return }
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw AssetStoreError.notAnAssetStore(path: path)
        }
        if (attributes[.size] as? NSNumber)?.int64Value ?? 0 == 0 { return }  // created but never written
        if !isWritable(path) { throw AssetStoreError.readOnly(path: path) }
        // try?: unreadable is thrown as readOnly
        guard let header = try? LocalFile.read(url, limit: 16) else { throw AssetStoreError.readOnly(path: path) }
        guard header == Data("SQLite format 3\0".utf8) else { throw AssetStoreError.notAnAssetStore(path: path) }

        var configuration = Configuration()
        configuration.readonly = true
        // After a crash another connection (this process's earlier pool, or the one recovering the WAL) may hold
        // a lock for a moment: wait for it rather than fail the open with "database is locked".
        configuration.busyMode = .timeout(10)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            // try?: closing a read-only inspection: nothing was written
            defer { try? queue.close() }
            try queue.read { db in
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                if tables.isEmpty && applicationID == 0 { return }  // empty database: created, never migrated
                guard applicationID == Self.applicationID else { throw AssetStoreError.notAnAssetStore(path: path) }
                let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                if version > schemaVersion { throw AssetStoreError.schemaTooNew(found: version, known: schemaVersion) }
                guard tables.contains("asset") else {
                    throw AssetStoreError.corrupt(path: path, reason: "the asset table is missing")
                }
                // Walks one index of the asset table: damage to the schema or the table's pages shows here. A
                // `quick_check` of every page found the same and read the whole file on each open (half a second
                // for a million assets); damage elsewhere surfaces as `corrupt` where it is read.
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM asset")
            }
        } catch let error as AssetStoreError {
            throw error
        } catch let error as DatabaseError {
            throw translate(error, path: path)
        }
    }
}
