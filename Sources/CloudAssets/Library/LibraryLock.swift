import AssetStore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive `flock` on `<folder>/library.lock`, held while a library is open.
///
/// The lock belongs to the open file description, so a second open of the same folder is refused both from another
/// process and from this one.
final class LibraryLock: Sendable {
    static let fileName = "library.lock"
    private let descriptor: Mutex<Int32>
    let path: String

    /// Takes the lock without waiting.
    /// - Throws: ``AssetLibraryError/locked(path:)`` when held elsewhere; `AssetStoreError.readOnly` when the lock
    ///   file cannot be created.
    init(folder: URL) throws {
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent(Self.fileName).path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw AssetStoreError.readOnly(path: folder.path) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw AssetLibraryError.locked(path: folder.path)
        }
        descriptor = Mutex(fd)
    }

    /// Releases the lock (idempotent).
    func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
