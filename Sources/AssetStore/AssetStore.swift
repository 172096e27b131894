import Essentials
package import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#endif

/// The SQLite-backed store of every asset the library knows, with its change history.
///
/// One file, `<folder>/library.sqlite`, opened in WAL mode through a GRDB `DatabasePool`: writes are serialised on
/// one writer connection; reads run on reader connections and are never blocked by a write in progress (they see
/// the last committed state). All methods are synchronous and may be called from any thread.
package final class AssetStore: Sendable {
    /// The database file name inside the library folder.
    package static let databaseFileName = "library.sqlite"
    /// The SQLite `application_id` that marks a CloudAssets store ("CAst").
    static let applicationID: Int32 = 0x4341_7374

    /// The library folder.
    package let folder: URL
    /// The database file.
    package let databaseURL: URL
    /// How many history entries are kept (older ones are trimmed on write).
    package let historyLimit: Int

    let pool: DatabasePool
    let tokenState: LockedBox<Int64>

    /// Opens the store in `folder`, creating the folder and the database when absent and migrating an older schema.
    ///
    /// An existing file is inspected read-only first; when it is refused it is left byte-for-byte untouched.
    /// - Parameters:
    ///   - folder: The library folder (created when absent).
    ///   - historyLimit: How many transactions ``changes(since:)`` can go back (at least 1).
    ///   - pagesLeft: How many pages the database may grow by from its size when opened (SQLite's `max_page_count`):
    ///     a write beyond them fails as on a full disk (``AssetStoreError/diskFull(path:)``). For tests; nil (no
    ///     limit) unless ``testPagesLeft`` sets it.
    /// - Throws: ``AssetStoreError/readOnly(path:)`` when the folder or file cannot be written (or carries no write
    ///   permission bit, which is honoured even for root), ``AssetStoreError/notAnAssetStore(path:)``,
    ///   ``AssetStoreError/corrupt(path:reason:)``, ``AssetStoreError/schemaTooNew(found:known:)``.
    package init(folder: URL, historyLimit: Int = 10_000, pagesLeft: Int? = AssetStore.testPagesLeft) throws {
        self.folder = folder
        self.databaseURL = folder.appendingPathComponent(Self.databaseFileName)
        self.historyLimit = max(1, historyLimit)
        try Self.prepareFolder(folder)
        try Self.inspectExistingFile(at: databaseURL)
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                // Up to 32 MiB of pages per connection (SQLite's default is 2 MiB): a 100,000-asset catalog and
                // its indexes then stay in the page cache instead of being re-read through the kernel.
                try db.execute(sql: "PRAGMA cache_size = -32768")
                // A large transaction (a bulk load's index build) grows the write-ahead log to tens of MiB: once it
                // is checkpointed and starts over, it is cut back to this instead of keeping that size for good.
                try db.execute(sql: "PRAGMA journal_size_limit = 8388608")
                // The log is folded into the database after 20,000 pages (80 MiB at 4 KiB) instead of 1,000: a
                // sync that fills a million rows rewrites the same index pages over and over, and each fold writes
                // them back and flushes the file (a first sync of 200,000 objects: 1.5–2 % sooner).
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 20000")
                if let pagesLeft {
                    let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                    try db.execute(sql: "PRAGMA max_page_count = \(max(1, pages + pagesLeft))")
                }
            }
            configuration.maximumReaderCount = 4
            // Another connection (a closing pool checkpointing, another process reading) may hold a lock briefly.
            configuration.busyMode = .timeout(10)
            pool = try DatabasePool(path: databaseURL.path, configuration: configuration)
            if try pool.read({ try !Self.migrator.hasCompletedMigrations($0) }) {
                // Indexes a killed bulk load left suspended come back before a migration meets the schema.
                let path = databaseURL.path
                _ = try pool.write { db in try Self.restoreSuspendedIndexes(db, path: path) }
            }
            try Self.migrator.migrate(pool)
            let token = try pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT value FROM store_meta WHERE name = 'lastToken'") ?? 0
            }
            tokenState = LockedBox(token)
        } catch let error as AssetStoreError {
            throw error
        } catch let error as DatabaseError {
            throw Self.translate(error, path: databaseURL.path)
        }
    }

    /// The pages every store this process opens may grow by, from `CLOUDASSETS_TEST_CATALOG_PAGES_LEFT`: a test
    /// hook (the command-line tests' full disk without a disk of its own), nil when unset.
    package static let testPagesLeft: Int? = ProcessInfo.processInfo.environment[
        "CLOUDASSETS_TEST_CATALOG_PAGES_LEFT"
    ].flatMap { Int($0) }

    /// The file written after every commit that changed something (see ``signalCommit()``).
    package static let commitSignalFileName = "library.commit-signal"

    /// Writes one byte to `<folder>/library.commit-signal` (created when absent, never followed through a symbolic
    /// link). Called only once a commit has returned, so the commit is visible to every connection — in any
    /// process — by the time the write is: a watcher that reacts to this file (not to the write-ahead log, which is
    /// written before the commit is published in the shared WAL index) never reads the catalog too early.
    /// Best effort: a failure only delays other libraries' view until the next commit.
    func signalCommit() {
        let path = folder.appendingPathComponent(Self.commitSignalFileName).path
        let fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        var byte: UInt8 = 1
        _ = pwrite(fd, &byte, 1, 0)
        Glibc.close(fd)
    }

    /// The token of the last committed non-empty transaction (0 for a library that never changed).
    package var currentToken: ChangeToken { ChangeToken(rawValue: tokenState.withLock { $0 }) }

    /// Runs `body` in one write transaction and commits it.
    ///
    /// Writes are serialised: at most one runs at a time, in call order per thread. When `body` throws (or a
    /// write inside it breaks an invariant) everything is rolled back and no token is used. A transaction that
    /// changed no row records nothing; otherwise it gets the next ``ChangeToken`` and a history entry, and the
    /// history is trimmed to ``historyLimit`` entries.
    /// - Returns: what `body` returned and what the transaction changed.
    package func write<T>(_ body: (StoreTransaction) throws -> T) throws -> (T, StoreChangeSet) {
        do {
            let result = try pool.write { db in
                let transaction = StoreTransaction(db: db)
                let value = try body(transaction)
                let current = try Int64.fetchOne(db, sql: "SELECT value FROM store_meta WHERE name = 'lastToken'") ?? 0
                var changes = transaction.changeSet(token: ChangeToken(rawValue: current))
                guard !changes.isEmpty else { return (value, changes) }
                try Self.maintainKeyFolders(&changes, db)
                try Self.refreshMemberOrders(changes, db)
                let token = current + 1
                changes.token = ChangeToken(rawValue: token)
                try appendHistory(changes, in: db)
                try db.execute(sql: "UPDATE store_meta SET value = ? WHERE name = 'lastToken'", arguments: [token])
                return (value, changes)
            }
            // The commit succeeded: publish the token.
            let token = result.1.token.rawValue
            tokenState.withLock { $0 = max($0, token) }
            if !result.1.isEmpty { signalCommit() }
            return result
        } catch let error as DatabaseError {
            throw Self.translate(error, path: databaseURL.path)
        }
    }

    static func translate(
        _ error: DatabaseError, path: String, availableBytes: (String) -> Int64? = AssetStore.availableBytes
    ) -> AssetStoreError {
        translate(
            resultCode: error.extendedResultCode.rawValue, message: error.message, description: error.description,
            path: path, availableBytes: availableBytes)
    }

    /// The store's error for SQLite's (extended) result code `resultCode`: a full disk — `SQLITE_FULL`, or an I/O
    /// error while the disk holding `path` has less than ``fullDiskMargin`` free (`availableBytes`) — is
    /// ``AssetStoreError/diskFull(path:)``, another I/O error ``AssetStoreError/diskFailed(path:reason:)``.
    static func translate(
        resultCode: Int32, message: String?, description: String, path: String,
        availableBytes: (String) -> Int64? = AssetStore.availableBytes
    ) -> AssetStoreError {
        switch ResultCode(rawValue: resultCode).primaryResultCode {
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN: .readOnly(path: path)
        case .SQLITE_CORRUPT: .corrupt(path: path, reason: message ?? "corrupt")
        case .SQLITE_NOTADB: .notAnAssetStore(path: path)
        case .SQLITE_FULL: .diskFull(path: path)
        case .SQLITE_IOERR:
            // An I/O error on a full disk (the shared-memory index or the log cannot grow) is a full disk.
            (availableBytes(path).map { $0 < fullDiskMargin } ?? false)
                ? .diskFull(path: path) : .diskFailed(path: path, reason: message ?? "disk I/O error")
        default: .database(description)
        }
    }

    /// Below this many free bytes on its disk, an I/O error of the database is taken for a full disk.
    static let fullDiskMargin: Int64 = 1 << 20

    /// The bytes an unprivileged writer may still use on the file system holding `path` (or its folder), or nil
    /// when it cannot be told.
    static func availableBytes(_ path: String) -> Int64? {
        var status = statvfs()
        guard statvfs(path, &status) == 0 || statvfs((path as NSString).deletingLastPathComponent, &status) == 0
        else { return nil }
        return Int64(status.f_bavail) * Int64(status.f_frsize)
    }

    /// A GRDB error as the store reports it (``translate(_:path:availableBytes:)``), for one that escaped a method
    /// of the store untranslated; nil for any other error. Which disk it was is not known here: an I/O error is
    /// ``AssetStoreError/diskFailed(path:reason:)``.
    package static func translated(_ error: any Error) -> AssetStoreError? {
        guard let database = error as? DatabaseError else { return nil }
        return translate(database, path: databaseFileName, availableBytes: { _ in nil })
    }
}
