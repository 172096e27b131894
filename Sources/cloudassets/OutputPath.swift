import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What `-o PATH` names, and so how ``OutputSink`` writes it. The rules (also in `help get` and `help image`):
///
/// - a new file, or an existing regular file with one link: written to a temporary file beside it and renamed
///   over it at the end, so the name never holds a half-written file; an existing file's permission bits are
///   kept (a 0600 file stays 0600);
/// - a symbolic link: written through to the file it points to (resolved fully, then these rules apply to that
///   file; a link to a pipe with no path, such as `/dev/stdout`, is opened through the link); a link to nothing is
///   refused;
/// - a regular file with other hard links: written in place (truncated when the first byte is written), so every
///   link sees the new bytes; an interrupted write leaves it partly written;
/// - a character device (`/dev/null`, `/dev/full`) or a FIFO: opened and written directly, never replaced;
///   a write error (a full disk) is reported;
/// - a folder, a block device or a socket: refused.
enum OutputTarget: Equatable {
    /// Written to a temporary file beside `path`, then renamed over it. `mode`: the permission bits of the file
    /// it replaces (nil: a new file).
    case replace(path: String, mode: mode_t?)
    /// A regular file with other hard links: written in place.
    case inPlace(path: String)
    /// A character device or a FIFO: opened and written directly.
    case direct(path: String)

    /// The path written (the link's target for a link).
    var path: String {
        switch self {
        case .replace(let path, _), .inPlace(let path), .direct(let path): path
        }
    }
}

/// Checks `-o PATH` before anything is downloaded, so a bad path is one readable line instead of a Foundation
/// error after the download, and says how it will be written (``OutputTarget``). Nothing is created. `-`
/// (standard output) is not a path: callers handle it before calling this.
/// - Returns: How the path is written.
/// - Throws: `CLIError` with status ``ExitStatus/usage``, ``ExitStatus/refused`` for a block device, or
///   ``ExitStatus/diskFull`` when the file or its folder cannot be written.
func validateOutputPath(_ path: String) throws -> OutputTarget {
    guard !path.isEmpty else { throw CLIError("-o is empty: give a file path (or - for standard output)") }
    if path.hasSuffix("/") { throw CLIError("-o \(path) is a folder: give a file path") }
    var status = stat()
    guard lstat(path, &status) == 0 else {
        guard errno == ENOENT else { throw outputError(path, errno) }
        return .replace(path: try writableFolder(of: path, for: path), mode: nil)
    }
    switch status.st_mode & S_IFMT {
    case S_IFLNK:
        guard let resolved = realpath(path, nil) else {
            // A link to an open pipe or terminal with no path of its own (`/dev/stdout` → /proc/self/fd/1 →
            // `pipe:[…]`): written directly through the link.
            var followed = stat()
            if stat(path, &followed) == 0, [S_IFIFO, S_IFCHR].contains(followed.st_mode & S_IFMT) {
                guard access(path, W_OK) == 0 else { throw outputError(path, errno) }
                return .direct(path: path)
            }
            let reason = errno == ELOOP ? "a loop of links" : "a link to something that does not exist"
            throw CLIError("-o \(path) is \(reason): give the path of a file")
        }
        defer { free(resolved) }
        // Resolved fully (no link left in it): the rules apply to the file the link points to.
        return try validateOutputPath(String(cString: resolved))
    case S_IFDIR:
        throw CLIError("-o \(path) is a folder: give a file path")
    case S_IFREG where status.st_nlink > 1:
        guard access(path, W_OK) == 0 else { throw outputError(path, errno) }
        return .inPlace(path: path)
    case S_IFREG:
        return .replace(path: try writableFolder(of: path, for: path), mode: status.st_mode & 0o7777)
    case S_IFCHR, S_IFIFO:
        guard access(path, W_OK) == 0 else { throw outputError(path, errno) }
        return .direct(path: path)
    case S_IFBLK:
        throw CLIError("-o \(path) is a block device (a disk): refusing to write over it", status: .refused)
    default:
        throw CLIError("-o \(path) is a socket or other special file: give a file path")
    }
}

/// `path` again, once its folder is known to exist, be a folder and be writable (a temporary file is made
/// there).
private func writableFolder(of path: String, for shown: String) throws -> String {
    let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder) else {
        throw CLIError("-o \(shown): folder \(parent) does not exist")
    }
    guard isFolder.boolValue else { throw CLIError("-o \(shown): \(parent) is a file, not a folder") }
    guard access(parent, W_OK) == 0 else {
        throw CLIError(
            "-o \(shown): folder \(parent) is not writable (\(String(cString: strerror(errno))))", status: .diskFull)
    }
    return path
}

/// One line for a failed open, read or write of an output, with the status of its `errno`: a full disk, a
/// read-only file system or a denied permission is ``ExitStatus/diskFull``.
func outputError(_ path: String, _ code: Int32, _ verb: String = "cannot write") -> CLIError {
    let status: ExitStatus =
        [ENOSPC, EDQUOT, EFBIG, EROFS, EACCES, EPERM, EIO].contains(code) ? .diskFull : .unexpected
    return CLIError("\(verb) \(path): \(String(cString: strerror(code)))", status: status)
}
