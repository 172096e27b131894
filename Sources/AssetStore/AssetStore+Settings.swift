import Foundation
import GRDB

/// Named text settings the library keeps in its catalog (not asset rows: writing one is not a change).
extension AssetStore {
    /// The setting's value, or `nil` when it was never set.
    package func setting(_ name: String) throws -> String? {
        try read { db in
            try String.fetchOne(db, sql: "SELECT value FROM store_setting WHERE name = ?", arguments: [name])
        }
    }

    /// Sets (or replaces) a setting in its own transaction. No ``ChangeToken`` is used.
    package func setSetting(_ name: String, to value: String) throws {
        do {
            try pool.write { db in
                try db.execute(
                    sql: "INSERT INTO store_setting (name, value) VALUES (?, ?) "
                        + "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                    arguments: [name, value])
            }
        } catch let error as DatabaseError {
            throw Self.translate(error, path: databaseURL.path)
        }
    }
}
