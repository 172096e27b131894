import CFileIO
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where `get -o` writes: standard output, or a file that appears only when complete.
///
/// A file is written to a temporary file beside it and renamed over the path at the end, so an interrupted or
/// failed `get` never leaves a half-written file under the name asked for (and never writes through a link that
/// has that name: the rename replaces the link itself). Memory stays bounded: data is written as it comes, and a
/// local original is copied by the kernel (`copy_file_range`).
/// Used by one task at a time: `get -o` takes exactly one asset.
// @unchecked: used by one task at a time (see above); `fd` and the paths never change.
final class OutputSink: @unchecked Sendable {
    private let fd: Int32
    private let finalPath: String?
    private let tempPath: String?
    private var committed = false

    /// - Parameters:
    ///   - output: A file path, or `-` for standard output.
    ///   - libraryFolder: The library's folder: an output inside it is refused.
    /// - Throws: ``CLIError`` when the path is inside the library or cannot be created.
    init(output: String, libraryFolder: URL) throws {
        if output == "-" {
            fd = STDOUT_FILENO
            finalPath = nil
            tempPath = nil
            return
        }
        let url = URL(fileURLWithPath: output)
        try Self.refuseInside(libraryFolder, url)
        let folder = url.deletingLastPathComponent().path
        let temp = folder + "/.\(url.lastPathComponent).cloudassets-\(getpid()).tmp"
        let opened = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard opened >= 0 else { throw CLIError("cannot write \(output): \(String(cString: strerror(errno)))") }
        fd = opened
        finalPath = url.path
        tempPath = temp
    }

    /// Refuses an output path whose folder is the library's folder or inside it (after resolving links and
    /// `.`/`..`): writing there could replace the catalog or a cached original.
    static func refuseInside(_ libraryFolder: URL, _ output: URL) throws {
        guard let library = realPath(libraryFolder.path),
            let parent = realPath(output.deletingLastPathComponent().path)
        else { return }  // a folder that does not exist is reported when the file is created
        if parent == library || parent.hasPrefix(library.hasSuffix("/") ? library : library + "/") {
            throw CLIError(
                "-o \(output.path) is inside the library folder \(libraryFolder.path); write the copy somewhere else",
                status: .refused)
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Writes all of `data` (standard output: as it comes).
    func write(_ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw CLIError(
                        "cannot write \(finalPath ?? "standard output"): \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }
    }

    /// Copies a whole file: in the kernel where it can (`copy_file_range`, a clone on file systems that have
    /// one), else through a 1 MiB buffer.
    func copy(from url: URL) throws {
        let source = open(url.path, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw CLIError("cannot read \(url.path): \(String(cString: strerror(errno)))") }
        defer { close(source) }
        while true {
            let n = cfileio_copy_range(source, fd, 1 << 30)
            if n > 0 { continue }
            if n == 0 { return }
            if errno == EINTR { continue }
            if [EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, EBADF].contains(errno) { break }  // not in the kernel: by hand
            throw CLIError("cannot write \(finalPath ?? "standard output"): \(String(cString: strerror(errno)))")
        }
        var buffer = Data(count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw CLIError("cannot read \(url.path): \(String(cString: strerror(errno)))") }
            if n == 0 { return }
            try write(buffer.prefix(n))
        }
    }

    /// Makes the file appear under its name (flushed to the disk first).
    func commit() throws {
        guard let finalPath, let tempPath else { return }
        guard fsync(fd) == 0, rename(tempPath, finalPath) == 0 else {
            throw CLIError("cannot write \(finalPath): \(String(cString: strerror(errno)))")
        }
        committed = true
    }

    deinit {
        if fd != STDOUT_FILENO { close(fd) }
        if !committed, let tempPath { unlink(tempPath) }
    }
}
