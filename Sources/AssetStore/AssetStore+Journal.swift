import Foundation
import GRDB

/// The catalog's side of the bucket journal: the outbox of changes this library made that are not in the bucket's
/// journal yet, the journal entries already applied (within the reader's look-back window), and named settings
/// written in the same transaction as the rows they describe. None of these is an asset row: writing them is not
/// a change and uses no ``ChangeToken``.
extension AssetStore {
    /// Up to `limit` outbox entries, oldest first: (sequence number, the change as the library encoded it).
    package func journalOutbox(limit: Int) throws -> [(seq: Int64, change: String)] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT seq, change FROM journal_outbox ORDER BY seq LIMIT ?", arguments: [limit]
            ).map { ($0[0], $0[1]) }
        }
    }

    /// Removes the outbox entries up to and including `seq` (they are in the bucket now).
    package func removeJournalOutbox(through seq: Int64) throws {
        try writeOther { db in try db.execute(sql: "DELETE FROM journal_outbox WHERE seq <= ?", arguments: [seq]) }
    }

    /// Which of these journal entry keys were applied already.
    package func appliedJournalKeys(among keys: [String]) throws -> Set<String> {
        guard !keys.isEmpty else { return [] }
        return try read { db in
            var found = Set<String>()
            for chunk in stride(from: 0, to: keys.count, by: 500) {
                let slice = Array(keys[chunk..<min(chunk + 500, keys.count)])
                let marks = Array(repeating: "?", count: slice.count).joined(separator: ",")
                let rows = try String.fetchAll(
                    db, sql: "SELECT key FROM journal_applied WHERE key IN (\(marks))",
                    arguments: StatementArguments(slice))
                found.formUnion(rows)
            }
            return found
        }
    }

    /// Forgets applied entries older than `time` (milliseconds): behind the look-back window, they are never
    /// listed again.
    package func forgetAppliedJournalEntries(before time: Int64) throws {
        try writeOther { db in
            try db.execute(sql: "DELETE FROM journal_applied WHERE time < ?", arguments: [time])
        }
    }

    /// A write that changes no asset row.
    private func writeOther(_ body: (Database) throws -> Void) throws {
        do {
            try pool.write { db in try body(db) }
        } catch let error as DatabaseError {
            throw Self.translate(error, path: databaseURL.path)
        }
    }
}

extension StoreTransaction {
    /// Appends a change to the journal outbox, committed with the rows it describes.
    package func appendJournalChange(_ change: String) throws {
        try db.cachedStatement(sql: "INSERT INTO journal_outbox (change) VALUES (?)").execute(arguments: [change])
    }

    /// Records that the journal entry `key` (written at `time`, in milliseconds) was applied.
    package func markJournalEntryApplied(_ key: String, time: Int64) throws {
        try db.execute(
            sql: "INSERT INTO journal_applied (key, time) VALUES (?, ?) ON CONFLICT(key) DO NOTHING",
            arguments: [key, time])
    }

    /// Sets a named setting, committed with the transaction.
    package func setSetting(_ name: String, to value: String) throws {
        try db.execute(
            sql: "INSERT INTO store_setting (name, value) VALUES (?, ?) "
                + "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            arguments: [name, value])
    }
}
