import GRDB

/// The folders of keys: for every key prefix ending with `/` that some key ends at (`originals/Trips/Rome/` for
/// `originals/Trips/Rome/a.jpg`), how many assets are directly in it. Kept in step with the asset table by every
/// write (one upsert per folder a transaction touched, not per row), read to show a bucket another tool organised
/// in folders as albums. Every library derives the same from the keys: nothing of it is written to the bucket.
extension AssetStore {
    /// The identifier of the album of the assets directly in `folder` (`keys:` + the folder).
    package static func keyFolderAlbumIdentifier(_ folder: String) -> String { keyAlbumPrefix + folder }
    /// The identifier of `folder` as a folder of albums (`keyfolder:` + the folder).
    package static func keyFolderListIdentifier(_ folder: String) -> String { keyListPrefix + folder }
    /// What every folder-of-keys album identifier starts with.
    package static let keyAlbumPrefix = "keys:"
    /// What every folder-of-keys folder identifier starts with.
    package static let keyListPrefix = "keyfolder:"

    /// Every folder of keys under `prefix` (itself included), with its count of assets directly in it, in key
    /// order.
    package func keyFolders(under prefix: String) throws -> [(folder: String, count: Int)] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT prefix, count FROM key_folder WHERE prefix GLOB ? ORDER BY prefix",
                arguments: [StorePredicate.globEscaped(prefix) + "*"]
            ).map { (folder: $0[0], count: $0[1]) }
        }
    }

    /// How many assets are directly in `folder` (0 when none).
    package func keyFolderCount(_ folder: String) throws -> Int {
        try read { db in
            try Int.fetchOne(db, sql: "SELECT count FROM key_folder WHERE prefix = ?", arguments: [folder]) ?? 0
        }
    }

    /// Applies what the transaction did to the asset table to the folder counts, and names in the change set the
    /// album of every folder whose count changed; when a folder appears or goes, the albums and folders of every
    /// folder above it too (their place in the tree may change).
    static func maintainKeyFolders(_ changes: inout StoreChangeSet, _ db: Database) throws {
        var deltas: [String: Int] = [:]
        func count(_ key: String?, _ delta: Int) {
            if let key, let folder = StorePredicate.keyFolder(of: key) { deltas[folder, default: 0] += delta }
        }
        for id in changes.inserted { count(changes.after[id]?.key, 1) }
        for id in changes.deleted { count(changes.before[id]?.key, -1) }
        for id in changes.rekeyed {
            guard let before = changes.before[id]?.key, let after = changes.after[id]?.key, before != after else {
                continue
            }
            count(before, -1)
            count(after, 1)
        }
        for (folder, delta) in deltas where delta != 0 {
            let before =
                try Int.fetchOne(db, sql: "SELECT count FROM key_folder WHERE prefix = ?", arguments: [folder]) ?? 0
            let after = before + delta
            guard after >= 0 else {
                throw AssetStoreError.invariantViolation("folder of keys \(folder) would hold \(after) assets")
            }
            if after == 0 {
                try db.execute(sql: "DELETE FROM key_folder WHERE prefix = ?", arguments: [folder])
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO key_folder (prefix, count) VALUES (?, ?)
                        ON CONFLICT (prefix) DO UPDATE SET count = excluded.count
                        """, arguments: [folder, after])
            }
            changes.collections.insert(keyFolderAlbumIdentifier(folder))
            guard (before == 0) != (after == 0) else { continue }
            changes.collections.insert(keyFolderListIdentifier(folder))
            var above = StorePredicate.keyFolder(of: String(folder.dropLast()))
            while let parent = above {
                changes.collections.insert(keyFolderAlbumIdentifier(parent))
                changes.collections.insert(keyFolderListIdentifier(parent))
                above = StorePredicate.keyFolder(of: String(parent.dropLast()))
            }
        }
    }
}
