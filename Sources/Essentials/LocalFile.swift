import CFileIO
package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Whole-file reads, writes and copies that open every descriptor close-on-exec.
///
/// Foundation's `Data(contentsOf:)`, `Data.write(to:)`, `FileHandle` and `FileManager.copyItem` open files without
/// `O_CLOEXEC` on Linux. A library runs inside someone else's process: when that process starts a child (with
/// `posix_spawn`, or with Foundation's `Process`, which closes the descriptors it saw a moment before spawning),
/// a descriptor the library opened at that moment on another thread lives on in the child — keeping a deleted file's
/// space, a file system busy (no read-only remount, no unmount) and the library's files open in a stranger's
/// program. Every file the library opens goes through here (or through `open` with `O_CLOEXEC`).
///
/// Errors are Foundation's: a `CocoaError` with the path (`NSFilePathErrorKey`) and the `POSIXError` behind it
/// (`NSUnderlyingErrorKey`), so callers that map file errors keep doing so.
package enum LocalFile {
    /// Opens `path` with `flags | O_CLOEXEC`, retrying on `EINTR`.
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644, writing: Bool = false) throws
        -> Int32
    {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw error(errno, path: path, writing: writing) }
        }
    }

    /// The whole file, or its first `limit` bytes when it is longer.
    package static func read(_ url: URL, limit: Int = .max) throws -> Data {
        let fd = try open(url.path, O_RDONLY)
        defer { close(fd) }
        var info = stat()
        let size = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG ? Int(info.st_size) : 0
        var data = Data(capacity: min(limit, max(size, 0)) + (size < limit ? 1 : 0))
        var buffer = [UInt8](repeating: 0, count: min(max(size + 1, 4096), 1 << 20, max(limit, 1)))
        while data.count < limit {
            let wanted = min(buffer.count, limit - data.count)
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw error(errno, path: url.path, writing: false) }
            if n == 0 { break }
            data.append(contentsOf: buffer[0..<n])
        }
        return data
    }

    /// `count` bytes at `offset`, or fewer when the file ends before them. A read of a MiB or more gets pages of its
    /// own, given back to the system when the data is released (never kept in a thread's heap: a process that reads
    /// a large range piece by piece on many threads holds one piece per piece in flight, not one per thread).
    package static func read(_ url: URL, offset: Int64, count: Int) throws -> Data {
        let fd = try open(url.path, O_RDONLY)
        defer { close(fd) }
        var data = count >= 1 << 20 ? pages(count) : Data(count: count)
        var done = 0
        while done < count {
            let n = data.withUnsafeMutableBytes {
                pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw error(errno, path: url.path, writing: false) }
            if n == 0 { break }
            done += n
        }
        return done == count ? data : data.prefix(done)
    }

    /// `count` zero bytes in an anonymous mapping of their own (`Data(count:)` when the mapping cannot be had).
    private static func pages(_ count: Int) -> Data {
        guard let base = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            base != MAP_FAILED
        else { return Data(count: count) }
        return Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, size in munmap(pointer, size) })
    }

    /// Writes `data` to `url`, creating the file or truncating what is there; with `exclusive`, refuses a name that
    /// exists (`EEXIST`) and never follows a link. A failed write leaves what it wrote (the caller removes it).
    package static func write(_ data: some DataProtocol, to url: URL, exclusive: Bool = false) throws {
        let flags = O_WRONLY | O_CREAT | (exclusive ? O_EXCL | O_NOFOLLOW : O_TRUNC)
        let fd = try open(url.path, flags, writing: true)
        defer { close(fd) }
        try writeAll(fd, data, path: url.path)
    }

    /// Replaces `url` with `data` atomically: written under a temporary name of its own beside it (a dot name with
    /// this process's id and a random part, created exclusively), then renamed over it. A reader sees the old file
    /// or the new one; a failure removes the temporary file and leaves the old one.
    package static func replace(_ url: URL, with data: some DataProtocol) throws {
        let folder = url.deletingLastPathComponent()
        let temp = folder.appendingPathComponent(
            ".\(url.lastPathComponent).\(getpid())-\(UInt32.random(in: .min ... .max)).tmp", isDirectory: false)
        do {
            try write(data, to: temp, exclusive: true)
            guard rename(temp.path, url.path) == 0 else { throw error(errno, path: url.path, writing: true) }
        } catch {
            unlink(temp.path)
            throw error
        }
    }

    /// Copies the file at `source` to a new file `target` (never replacing what is there: `EEXIST`): in the kernel
    /// where it can (`copy_file_range`, a clone on file systems that have one), else through a 1 MiB buffer. A
    /// failure removes the partial target.
    package static func copy(_ source: URL, to target: URL) throws {
        let input = try open(source.path, O_RDONLY)
        defer { close(input) }
        let output = try open(target.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, writing: true)
        var closed = false
        defer { if !closed { close(output) } }
        do {
            do {
                try copyContents(from: input, to: output)
            } catch {
                switch error {
                case .reading(let code): throw Self.error(code, path: source.path, writing: false)
                case .writing(let code): throw Self.error(code, path: target.path, writing: true)
                }
            }
            closed = true
            guard close(output) == 0 else { throw error(errno, path: target.path, writing: true) }
        } catch {
            unlink(target.path)
            throw error
        }
    }

    /// Why ``copyContents(from:to:)`` stopped: reading the source or writing the target failed (the `errno`).
    package enum CopyFailure: Error {
        case reading(Int32)
        case writing(Int32)
    }

    /// Copies everything from `input`'s offset to `output`'s: in the kernel where it can (`copy_file_range`, a
    /// clone on file systems that have one), else — another file system, a pipe — through a 1 MiB buffer from
    /// where the kernel stopped.
    package static func copyContents(from input: Int32, to output: Int32) throws(CopyFailure) {
        while true {
            let n = cfileio_copy_range(input, output, 1 << 30)
            if n > 0 { continue }
            if n == 0 { return }
            if errno == EINTR { continue }
            if [EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, EBADF].contains(errno) { break }  // not in the kernel: by hand
            throw .writing(errno)
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw .reading(errno) }
            if n == 0 { return }
            var done = 0
            while done < n {
                let written = buffer.withUnsafeBytes { Glibc.write(output, $0.baseAddress! + done, n - done) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { throw .writing(written < 0 ? errno : EIO) }
                done += written
            }
        }
    }

    /// Writes each patch at its offset in the existing file at `url` (which does not grow past what the patches
    /// reach), then flushes it to the disk when `synchronize` is set.
    package static func patch(_ url: URL, with patches: [(offset: Int, bytes: [UInt8])], synchronize: Bool) throws {
        let fd = try open(url.path, O_WRONLY, writing: true)
        defer { close(fd) }
        for patch in patches {
            var done = 0
            while done < patch.bytes.count {
                let n = patch.bytes.withUnsafeBytes {
                    pwrite(fd, $0.baseAddress! + done, $0.count - done, off_t(patch.offset + done))
                }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw error(n < 0 ? errno : EIO, path: url.path, writing: true) }
                done += n
            }
        }
        if synchronize && fsync(fd) != 0 { throw error(errno, path: url.path, writing: true) }
    }

    private static func writeAll(_ fd: Int32, _ data: some DataProtocol, path: String) throws {
        for region in data.regions {
            try region.withUnsafeBytes { bytes in
                var done = 0
                while done < bytes.count {
                    let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { throw error(n < 0 ? errno : EIO, path: path, writing: true) }
                    done += n
                }
            }
        }
    }

    /// What went wrong with a file, in a few words (`strerror` of the POSIX code behind `error`), else `otherwise`.
    package static func reason(_ error: any Error, otherwise: String) -> String {
        // `as? NSError` does not bridge a Swift error kept in `userInfo` on Linux; `as? any Error` then `as NSError`
        // does.
        let underlying = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        guard let underlying, underlying.domain == NSPOSIXErrorDomain else { return otherwise }
        return String(cString: strerror(Int32(underlying.code)))
    }

    /// A Foundation file error for `code` at `path`, as Foundation's own calls would throw it.
    package static func error(_ code: Int32, path: String, writing: Bool) -> CocoaError {
        let cocoa: CocoaError.Code =
            switch code {
            case ENOENT: writing ? .fileNoSuchFile : .fileReadNoSuchFile
            case EEXIST: .fileWriteFileExists
            case EACCES, EPERM: writing ? .fileWriteNoPermission : .fileReadNoPermission
            case ENOSPC, EDQUOT: .fileWriteOutOfSpace
            case EROFS: .fileWriteVolumeReadOnly
            default: writing ? .fileWriteUnknown : .fileReadUnknown
            }
        return CocoaError(
            cocoa,
            userInfo: [
                NSFilePathErrorKey: path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO),
            ])
    }
}
