/// Errors of the library itself, reported as ``CloudAssetsError`` (``CloudAssetsError/init(_:)-library``).
enum AssetLibraryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another library (in this or another process) kept the folder to itself — it was repairing it after a crash —
    /// for longer than an open waits (``LibraryLock/repairWait``). Several libraries may have a folder open at
    /// once: an open alone never causes this.
    case locked(path: String)
    /// The library was closed.
    case closed
    /// The library's network policy is `.offline`, so it cannot sync or download.
    case offline
    /// The configuration asks for credentials from the environment, but `AWS_ACCESS_KEY_ID` or
    /// `AWS_SECRET_ACCESS_KEY` is not set.
    case missingCredentials
    /// The configuration cannot work; `reason` says what to set.
    case invalidConfiguration(reason: String)
    /// The folder exists but is not a CloudAssets library (it holds other files, or one of the library's own
    /// folders is a file or a link). Nothing in it was changed.
    case notALibrary(path: String, reason: String)
    /// The library was first synced with another endpoint or bucket; it refuses to reconcile itself with a
    /// different one (which would remove every asset). Open it with ``AssetLibrary/Configuration/rebind`` to
    /// move it deliberately.
    case boundToAnotherBucket(library: String, bound: String, requested: String)

    /// A file given to ``AssetLibrary/performChanges(_:)`` to import could not be read (missing, a folder, not
    /// readable); nothing of the change was committed.
    case cannotImport(path: String, reason: String)
    /// A content edit could not be committed (see ``CloudAssetsError/Code/cannotEdit``); nothing was changed.
    case cannotEdit(localIdentifier: String, reason: String)
    /// A change request named an asset this library does not have (deleted meanwhile, or another library's).
    case noSuchAsset(localIdentifier: String)
    /// A fetch or change request named an album or folder this library does not have.
    case noSuchCollection(localIdentifier: String)
    /// A collection change request cannot be applied (a smart album, a title other libraries would refuse, a
    /// folder into itself, an index out of range); nothing of the change was committed. `localIdentifier` is empty
    /// for an album or folder to be created.
    case cannotChangeCollection(localIdentifier: String, reason: String)

    var description: String {
        switch self {
        case .locked(let path):
            "The library at \(path) is busy: another library is repairing it after a crash; try again."
        case .closed: "The library was closed."
        case .cannotImport(let path, let reason): "Cannot import \(path): \(reason)."
        case .cannotEdit(let id, let reason): "Cannot edit asset \(id): \(reason)."
        case .noSuchAsset(let id): "The library has no asset \(id) (it may have been deleted)."
        case .noSuchCollection(let id): "The library has no album or folder \(id) (it may have been deleted)."
        case .cannotChangeCollection(let id, let reason):
            id.isEmpty ? "Cannot make the album or folder: \(reason)." : "Cannot change collection \(id): \(reason)."
        case .offline: "The library is offline (network policy .offline): it cannot sync or download."
        case .missingCredentials:
            "No credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or pass them in the configuration."
        case .notALibrary(let path, let reason):
            "\(path) is not a CloudAssets library: \(reason). Nothing was changed; use a new or empty folder."
        case .invalidConfiguration(let reason): "The configuration cannot work: \(reason)."
        case .boundToAnotherBucket(let library, let bound, let requested):
            "The library at \(library) belongs to \(bound), not \(requested); "
                + "use the library made for that bucket, or open this one with Configuration.rebind to move it."
        }
    }
}
