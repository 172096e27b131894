import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The file an upload reads: opened read-only once, read by offset (`pread`) — to checksum it here, and by the
/// engine as request bodies are sent — and checked for changes (its size and modification time must stay those it
/// had when opened). Thread-safe: every read is a `pread`; ``scan(_:_:)``, which reads through the source's one
/// scratch buffer, is called by one task at a time (the upload's).
// @unchecked: the descriptor and size never change; reads are `pread`s; the scratch buffer is made and used by the
// one task that scans (see above).
final class UploadSource: @unchecked Sendable {
    let path: String
    private let descriptor: Int32
    /// The scratch buffer of ``scan(_:_:)``, made by the first scan (an upload whose checksum is known never scans).
    /// A large one is mapped pages of its own, returned to the system with the source; a small file's comes from the
    /// heap: a mapping per file cost an `mmap`, page faults and an `munmap` (with its TLB shootdown) per upload —
    /// ~50 µs of a 16 KiB upload's CPU.
    private var scratch: UnsafeMutableRawBufferPointer?
    /// Scratch buffers up to this size come from the heap.
    static let heapScratchLimit = 64 << 10
    /// The size when opened: the object's size.
    let size: Int64
    private let modified: timespec

    /// Opens the file and records its size and modification time.
    /// - Throws: ``S3Error/fileSystem(path:errno:)``.
    init(url: URL) throws(S3Error) {
        path = url.path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .fileSystem(path: path, errno: errno) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw .fileSystem(path: path, errno: code)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw .fileSystem(path: path, errno: EINVAL)
        }
        size = Int64(info.st_size)
        modified = info.st_mtim
    }

    deinit {
        close(descriptor)
        if let scratch {
            if scratch.count <= Self.heapScratchLimit {
                scratch.deallocate()
            } else {
                munmap(scratch.baseAddress, scratch.count)
            }
        }
    }

    /// The size of the scratch buffer ``scan(_:_:)`` reads through.
    static let scratchSize = 1 << 20

    /// Throws ``S3Error/fileSystem(path:errno:)`` with `ESTALE` when the file's size or modification time is no
    /// longer what it was when opened.
    func checkUnchanged() throws(S3Error) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .fileSystem(path: path, errno: errno) }
        guard Int64(info.st_size) == size, info.st_mtim.tv_sec == modified.tv_sec,
            info.st_mtim.tv_nsec == modified.tv_nsec
        else { throw .fileSystem(path: path, errno: ESTALE) }
    }

    /// The request body for `range`: read from the file by the engine as it is sent (nothing held in memory).
    /// Valid while this source lives.
    func body(_ range: Range<Int64>) -> HTTPFileBody {
        HTTPFileBody(descriptor: descriptor, offset: range.lowerBound, count: Int64(range.count))
    }

    /// Asks the kernel to read `range` ahead (so the engine's reads of it hit the page cache).
    func prefetch(_ range: Range<Int64>) {
        _ = posix_fadvise(descriptor, off_t(range.lowerBound), off_t(range.count), POSIX_FADV_WILLNEED)
    }

    /// Fills `buffer` from `offset`; a file that ends early has changed (`ESTALE`).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(S3Error) {
        var done = 0
        while done < buffer.count {
            let n = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw .fileSystem(path: path, errno: errno)
            }
            if n == 0 { throw .fileSystem(path: path, errno: ESTALE) }
            done += n
        }
    }

    /// Feeds `range` to `body` one piece at a time through the source's scratch buffer (1 MiB, or the file's
    /// size when smaller), to checksum bytes without holding them. One scan at a time.
    func scan(_ range: Range<Int64>, _ body: (UnsafeRawBufferPointer) -> Void) throws(S3Error) {
        let scratch = try scratchBuffer()
        var offset = range.lowerBound
        while offset < range.upperBound {
            let n = Int(min(Int64(scratch.count), range.upperBound - offset))
            let piece = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<n])
            try read(into: piece, at: offset)
            body(UnsafeRawBufferPointer(piece))
            offset += Int64(n)
        }
    }

    private func scratchBuffer() throws(S3Error) -> UnsafeMutableRawBufferPointer {
        if let scratch { return scratch }
        let count = Int(min(Int64(Self.scratchSize), max(4096, size)))
        if count <= Self.heapScratchLimit {
            let made = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
            scratch = made
            return made
        }
        let memory = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let memory, memory != MAP_FAILED else { throw .fileSystem(path: path, errno: ENOMEM) }
        let made = UnsafeMutableRawBufferPointer(start: memory, count: count)
        scratch = made
        return made
    }
}
