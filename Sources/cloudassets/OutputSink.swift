import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where `get -o` and `image -o` write: standard output, or a path written as ``OutputTarget`` says.
///
/// A new or replaced file is written to a temporary file beside it and renamed over the path at the end, so an
/// interrupted or failed command never leaves a half-written file under the name asked for; the replaced file's
/// permission bits are kept. A link is written through to its target; a file with other hard links is written in
/// place (truncated only when the first byte is written, so a command that fails before writing keeps it whole);
/// a character device or a FIFO is opened and written directly. Write errors are reported with their status (a
/// full disk: ``ExitStatus/diskFull``). Memory stays bounded: data is written as it comes, and a local original is
/// copied by the kernel (`copy_file_range`) where it can be.
/// Used by one task at a time: `get -o` takes exactly one asset.
// @unchecked: used by one task at a time (see above); `fd`, `target` and `tempPath` never change.
final class OutputSink: @unchecked Sendable {
    private let fd: Int32
    /// nil: standard output.
    private let target: OutputTarget?
    private let tempPath: String?
    /// Whether an in-place file was truncated yet (at the first byte written).
    private var truncated = false
    private var committed = false
    /// Whether the temporary file is one handed over whole (``adopt(_:)``), not the one `fd` writes.
    private var adopted = false

    /// Standard output (`-`), or the path checked and opened (a temporary file created beside it).
    /// - Parameters:
    ///   - output: A file path, or `-` for standard output.
    ///   - libraryFolder: The library's folder: an output inside it is refused (a link's target included).
    /// - Throws: ``CLIError`` when the path is inside the library or cannot be opened or created.
    init(output: String, libraryFolder: URL) throws {
        if output == "-" {
            fd = STDOUT_FILENO
            target = nil
            tempPath = nil
            return
        }
        let target = try validateOutputPath(output)
        try Self.refuseInside(libraryFolder, URL(fileURLWithPath: target.path))
        var temp: String?
        let opened: Int32
        switch target {
        case .replace(let path, let mode):
            let url = URL(fileURLWithPath: path)
            let name = url.deletingLastPathComponent().path + "/.\(url.lastPathComponent).cloudassets-\(getpid()).tmp"
            opened = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard opened >= 0 else { throw outputError(output, errno) }
            // The replaced file's permission bits, exactly (not reduced by the umask).
            if let mode, fchmod(opened, mode) != 0 {
                let code = errno
                close(opened)
                unlink(name)
                throw outputError(output, code)
            }
            temp = name
        case .inPlace(let path):
            // No O_TRUNC: truncated at the first byte written, so a command that fails before keeps the file whole.
            opened = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
            guard opened >= 0 else { throw outputError(output, errno) }
        case .direct(let path):
            // A FIFO's open waits for its reader. Links are followed: `/dev/stdout` is one.
            opened = open(path, O_WRONLY | O_CLOEXEC)
            guard opened >= 0 else { throw outputError(output, errno) }
        }
        fd = opened
        self.target = target
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

    /// What error messages name.
    private var shownName: String { target?.path ?? "standard output" }

    /// Truncates an in-place file before its first byte is written.
    private func prepare() throws {
        guard case .inPlace = target, !truncated else { return }
        guard ftruncate(fd, 0) == 0 else { throw outputError(shownName, errno) }
        truncated = true
    }

    /// Writes all of `data` (standard output: as it comes).
    func write(_ data: Data) throws {
        try prepare()
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw outputError(shownName, errno)
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
        try prepare()
        do {
            try LocalFile.copyContents(from: source, to: fd)
        } catch {
            switch error {
            case .reading(let code): throw CLIError("cannot read \(url.path): \(String(cString: strerror(code)))")
            case .writing(let code): throw outputError(shownName, code)
            }
        }
    }

    /// A path beside the output where a whole file may be written and then handed over (``adopt(_:)``): nothing
    /// is there; nil for standard output, a device or a FIFO.
    func stagingURL() -> URL? {
        switch target {
        case nil, .direct?: return nil
        case .replace(let path, _)?, .inPlace(let path)?:
            let url = URL(fileURLWithPath: path)
            return url.deletingLastPathComponent().appendingPathComponent(
                ".\(url.lastPathComponent).cloudassets-\(getpid())-\(UUID().uuidString.prefix(8)).download")
        }
    }

    /// Takes the complete file at `staging` (a ``stagingURL()``) as the output: renamed into place of the
    /// temporary file (a replaced file's permission bits applied), or copied into an in-place file and removed.
    func adopt(_ staging: URL) throws {
        switch target {
        case nil, .direct?:
            try copy(from: staging)
            unlink(staging.path)
        case .inPlace?:
            try copy(from: staging)
            unlink(staging.path)
        case .replace(let path, let mode)?:
            // The empty temporary file goes first: a rename over an existing file makes ext4 write the renamed
            // file's data back at once (`auto_da_alloc`), half a second for 1 GiB.
            if let tempPath { unlink(tempPath) }
            guard let tempPath, rename(staging.path, tempPath) == 0 else {
                let code = errno
                unlink(staging.path)
                throw outputError(path, code)
            }
            adopted = true
            if let mode, chmod(tempPath, mode) != 0 { throw outputError(path, errno) }
        }
    }

    /// Ends the output: a replaced file appears under its name — flushed to the disk first when it replaces an
    /// existing file (a crash then leaves the old file or the new one, never an empty one; a new file is as
    /// durable as any program's); an in-place file is truncated if nothing was written, and flushed; a device or
    /// FIFO has nothing more to do.
    func commit() throws {
        switch target {
        case nil, .direct?:
            break
        case .inPlace?:
            try prepare()
            guard fsync(fd) == 0 else { throw outputError(shownName, errno) }
        case .replace(let path, let mode)?:
            guard let tempPath else { throw outputError(path, EINVAL) }
            if mode != nil {
                let synced = adopted ? open(tempPath, O_RDONLY | O_CLOEXEC) : fd
                defer { if adopted && synced >= 0 { close(synced) } }
                guard synced >= 0, fsync(synced) == 0 else { throw outputError(path, errno) }
            }
            guard rename(tempPath, path) == 0 else { throw outputError(path, errno) }
        }
        committed = true
    }

    deinit {
        if fd != STDOUT_FILENO { close(fd) }
        if !committed, let tempPath { unlink(tempPath) }
    }
}
