import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Checks `get -o PATH` before anything is downloaded, so a bad path is one readable line instead of a
/// Foundation error after the download. Guarantees on return: `path` is not empty, does not name an existing
/// folder (nor end in `/`), and its parent folder exists, is a folder and is writable. The file itself is
/// not created. `-` (standard output) is not a path: callers handle it before calling this.
/// - Returns: The file URL to write.
/// - Throws: `CLIError` with status ``ExitStatus/usage``, or ``ExitStatus/diskFull`` when the folder cannot be
///   written.
func validateOutputPath(_ path: String) throws -> URL {
    guard !path.isEmpty else { throw CLIError("-o is empty: give a file path (or - for standard output)") }
    let fm = FileManager.default
    var isFolder: ObjCBool = false
    if path.hasSuffix("/") || (fm.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue) {
        throw CLIError("-o \(path) is a folder: give a file path")
    }
    let url = URL(fileURLWithPath: path)
    let parent = url.deletingLastPathComponent().path
    guard fm.fileExists(atPath: parent, isDirectory: &isFolder) else {
        throw CLIError("-o \(path): folder \(parent) does not exist")
    }
    guard isFolder.boolValue else { throw CLIError("-o \(path): \(parent) is a file, not a folder") }
    guard access(parent, W_OK) == 0 else {
        throw CLIError(
            "-o \(path): folder \(parent) is not writable (\(String(cString: strerror(errno))))", status: .diskFull)
    }
    return url
}
