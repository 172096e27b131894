import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What makes a folder a library, checked before anything is written in it.
///
/// A folder is a library when it holds the catalog (`library.sqlite`, whose SQLite application id the store
/// checks). A folder that does not exist yet, or holds only what the library itself creates before its catalog
/// (the lock file, empty `originals/`, `partial/`, `thumbnails/` folders), becomes one. Any other folder is
/// refused before the lock file or anything else is created in it: opening a folder of someone's photos never
/// removes or writes a file there.
enum LibraryFolder {
    static let catalogName = "library.sqlite"
    /// Files a library may hold before its catalog exists (a crash between creating the lock and the catalog).
    static let ownFilesBeforeCatalog: Set<String> = [
        LibraryLock.fileName, "library.sqlite-wal", "library.sqlite-shm", "library.sqlite-journal",
    ]
    static let ownFolders = Set(LocalFiles.Folder.allCases.map(\.rawValue))

    /// - Throws: ``CloudAssetsError/Code/notALibrary``.
    static func validate(_ folder: URL) throws {
        let path = folder.path
        guard !path.isEmpty else { throw AssetLibraryError.notALibrary(path: "\"\"", reason: "the path is empty") }
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { return }  // created by the store
            throw AssetLibraryError.notALibrary(path: path, reason: String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw AssetLibraryError.notALibrary(path: path, reason: "it is a file, not a folder")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: path)
        if names.contains(catalogName) { return }
        for name in names.sorted() where !ownFilesBeforeCatalog.contains(name) {
            let entry = folder.appendingPathComponent(name).path
            if ownFolders.contains(name), isEmptyFolder(entry) { continue }
            throw AssetLibraryError.notALibrary(
                path: path,
                reason: "it has no catalog (\(catalogName)) and holds \(name), which the library did not create")
        }
    }

    /// A real folder (not a link) with nothing in it.
    private static func isEmptyFolder(_ path: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return false }
        // try?: unreadable is not "empty": the folder is not taken
        return (try? FileManager.default.contentsOfDirectory(atPath: path).isEmpty) ?? false
    }
}
