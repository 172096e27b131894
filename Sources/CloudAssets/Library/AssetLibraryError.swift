/// Errors of the library itself (store errors surface as `AssetStoreError`).
public enum AssetLibraryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another `AssetLibrary` (in this or another process) has the folder open.
    case locked(path: String)
    /// The library was closed.
    case closed
    /// The library's network policy is `.offline`, so it cannot sync or download.
    case offline
    /// The configuration asks for credentials from the environment, but `AWS_ACCESS_KEY_ID` or
    /// `AWS_SECRET_ACCESS_KEY` is not set.
    case missingCredentials

    public var description: String {
        switch self {
        case .locked(let path): "The library at \(path) is already open elsewhere; close it first."
        case .closed: "The library was closed."
        case .offline: "The library is offline (network policy .offline): it cannot sync or download."
        case .missingCredentials:
            "No credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or pass them in the configuration."
        }
    }
}
