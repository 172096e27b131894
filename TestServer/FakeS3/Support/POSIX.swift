#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin, EINTR-safe wrappers around the file system calls storage uses.
enum POSIX {
    /// Writes all bytes; false on error (errno set).
    static func writeAll(_ fd: CInt, _ raw: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < raw.count {
            let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    /// Writes all bytes at `offset`; false on error (errno set).
    static func writeAll(_ fd: CInt, _ raw: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
        var done = 0
        while done < raw.count {
            let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            done += n
        }
        return true
    }

    /// Reads up to `raw.count` bytes at `offset`; returns the count (0 at end of file) or -1.
    static func read(_ fd: CInt, into raw: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
        while true {
            let n = pread(fd, raw.baseAddress, raw.count, off_t(offset))
            if n < 0 && errno == EINTR { continue }
            return n
        }
    }

    static func openForReading(_ path: String) -> CInt { open(path, O_RDONLY | O_CLOEXEC) }
    static func createExclusive(_ path: String) -> CInt { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
    static func openForUpdating(_ path: String) -> CInt { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
    /// A second name for a file (not following a link at `from`).
    static func hardLink(_ from: String, _ to: String) -> Bool { linkat(AT_FDCWD, from, AT_FDCWD, to, 0) == 0 }
    static func truncate(_ fd: CInt, _ size: Int64) -> Bool { ftruncate(fd, off_t(size)) == 0 }
    static func closeFile(_ fd: CInt) { _ = close(fd) }
    static func remove(_ path: String) { _ = unlink(path) }
    static func rename(_ from: String, _ to: String) -> Bool {
        #if canImport(Glibc)
            Glibc.rename(from, to) == 0
        #else
            Darwin.rename(from, to) == 0
        #endif
    }
    static var lastError: CInt { errno }
    static func describe(_ code: CInt) -> String { String(cString: strerror(code)) }
}
