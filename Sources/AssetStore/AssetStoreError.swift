import Foundation

/// Errors the store throws. Every case leaves the database file as it was.
package enum AssetStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A write would break an availability invariant; the whole transaction was rolled back.
    case invariantViolation(String)
    /// The database was written by a newer version of this library (it knows `found`, we know up to `known`).
    case schemaTooNew(found: Int, known: Int)
    /// The file at `path` is not an asset store (another SQLite database or not SQLite at all).
    case notAnAssetStore(path: String)
    /// The file at `path` looks like an asset store but SQLite reports it damaged.
    case corrupt(path: String, reason: String)
    /// The folder or database at `path` cannot be written.
    case readOnly(path: String)
    /// A token newer than the store's current token (for example from another library folder).
    case invalidToken(Int64)
    /// The history no longer holds the changes after `token`; only changes after `oldestAvailable` are kept.
    case historyExpired(token: Int64, oldestAvailable: Int64)
    /// No asset has this identifier.
    case notFound(Int64)
    /// Another asset already uses this bucket key.
    case duplicateKey(String)
    /// SQLite or the file system failed.
    case database(String)
    /// The disk holding the database at `path` is full (SQLite's `SQLITE_FULL`, or an I/O error while the disk has
    /// no room left); the transaction was rolled back.
    case diskFull(path: String)
    /// The database at `path` could not be read or written (SQLite's `SQLITE_IOERR` while the disk has room): the
    /// disk is failing or not writable; the transaction was rolled back.
    case diskFailed(path: String, reason: String)

    package var description: String {
        switch self {
        case .invariantViolation(let message): "Asset store invariant violated: \(message)"
        case .schemaTooNew(let found, let known):
            "The library was written by a newer version (schema \(found), this version knows \(known)); "
                + "update the app to open it."
        case .notAnAssetStore(let path): "\(path) is not a CloudAssets library database; choose another folder."
        case .corrupt(let path, let reason):
            "The library database \(path) is damaged (\(reason)); move it aside to rebuild the library."
        case .readOnly(let path): "\(path) is read-only; the library needs a writable folder."
        case .invalidToken(let token): "Change token \(token) does not belong to this library."
        case .historyExpired(let token, let oldest):
            "The change history after token \(token) was trimmed (oldest kept: \(oldest)); refetch everything."
        case .notFound(let id): "No asset with identifier \(id)."
        case .duplicateKey(let key): "An asset with key \(key) already exists."
        case .database(let message): "Database error: \(message)"
        case .diskFull(let path): "The disk holding \(path) is full; free some space and try again."
        case .diskFailed(let path, let reason):
            "The library database \(path) could not be read or written (\(reason)); check the disk."
        }
    }
}
