/// Errors of the library itself (store errors surface as `AssetStoreError`).
public enum AssetLibraryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another `AssetLibrary` (in this or another process) has the folder open.
    case locked(path: String)
    /// The library was closed.
    case closed

    public var description: String {
        switch self {
        case .locked(let path): "The library at \(path) is already open elsewhere; close it first."
        case .closed: "The library was closed."
        }
    }
}
