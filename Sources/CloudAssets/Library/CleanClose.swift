import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `<folder>/library.closed`: written by the last library to close the folder — it holds the folder's lock
/// exclusively then, so no other library has it open and nothing it wrote is half-done — and removed by the next
/// library to open the folder before anything else. Found at an open, it means the crash repair has nothing to
/// repair, and the open skips its scan of every local file (see `AssetLibrary.recoverLocalState`). A process
/// killed, or a library released without ``AssetLibrary/close()``, writes no marker: the next open scans.
///
/// The removal is not synced: after a power loss the marker may come back while the catalog lost its last
/// transactions. Originals are synced before the commits that name them, so what can follow is a file no row
/// names (space, until the next scan) or a row whose file is gone (found when it is used: an original is
/// downloaded again, a thumbnail forgotten and fetched by the next sync) — never a wrong original handed out.
package enum CleanClose {
    package static let fileName = "library.closed"

    /// Whether the folder was closed cleanly: the marker was there (a regular file, never followed through a link),
    /// and is removed now. `false` when it cannot be removed (a later crash would otherwise be taken for a clean
    /// close).
    static func take(folder: URL) -> Bool {
        let path = folder.appendingPathComponent(fileName).path
        guard LocalFiles.regularFileSize(path) != nil else { return false }
        return unlink(path) == 0
    }

    /// Writes the marker (best effort: without it the next open only does more work).
    static func mark(folder: URL) {
        let path = folder.appendingPathComponent(fileName).path
        let fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd >= 0 { close(fd) }
    }
}
