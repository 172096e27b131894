import CFileIO
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Streams a body into a `.part` file off the engine thread.
///
/// The engine thread only copies each run of bytes into a large chunk buffer (``accept(_:)``); a serial
/// worker queue writes full chunks with `pwrite(2)` at their offset and feeds the hashes, so hashing never
/// slows the curl thread. At most ``maxInFlight`` chunks wait for the worker; beyond that the transfer is
/// paused (libcurl keeps the bytes) and resumed by the worker as soon as a chunk is free — so memory stays
/// flat whatever the object's size.
final class PartFileWriter: @unchecked Sendable {
    let path: String
    /// Set on the worker queue by ``open(truncate:)``; used only there (and closed on deinit).
    private(set) var fd: Int32 = -1
    let chunkSize: Int
    let maxInFlight: Int
    private let queue: DispatchQueue

    private struct Shared {
        var inFlight = 0
        var free: [UnsafeMutableRawBufferPointer] = []
        var pausedTransfer: (HTTPEngine, HTTPTransferID)?
        var writeError: Int32?
    }
    private let shared = Locked(Shared())

    // Engine thread only.
    private var current: UnsafeMutableRawBufferPointer?
    private var fill = 0
    private var transfer: (HTTPEngine, HTTPTransferID)?

    // Worker queue only (read by others only after ``drain()``).
    private(set) var written: Int64 = 0
    private(set) var hasher: IntegrityHasher?
    /// Where the next chunk lands; equals the file offset of the attempt's next byte.
    private var nextOffset: Int64 = 0
    /// Bytes written since writeback was last started, and where they begin.
    private var unflushed: (start: Int64, count: Int64) = (0, 0)
    /// Writeback starts once this much is written: the final `fsync` then waits for little more than the tail
    /// (writing a 1 GiB file back takes about half a second here, which would otherwise all come at the end).
    static let writebackBatch: Int64 = 8 << 20

    /// A writer for `path`; nothing touches the file system until ``open(truncate:)``.
    init(path: String, chunkSize: Int = 1 << 20, maxInFlight: Int = 4) {
        self.path = path
        self.chunkSize = chunkSize
        self.maxInFlight = maxInFlight
        queue = DispatchQueue(label: "PartFileWriter")
    }

    /// Opens (creating if needed) the file for reading and writing, on the worker queue: creating a file can
    /// block for a long time (inode allocation), and that must not hold a thread of the caller's pool.
    /// - Parameter truncate: Start from an empty file (nothing on disk belongs to a known version).
    /// - Returns: The size of the file as opened.
    func open(truncate: Bool) async -> Result<Int64, S3Error> {
        await onQueue { [self] in
            let fd = openFile(path, O_RDWR | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0))
            guard fd >= 0 else { return .failure(.fileSystem(path: path, errno: errno)) }
            self.fd = fd
            var st = stat()
            return .success(fstat(fd, &st) == 0 ? Int64(st.st_size) : 0)
        }
    }

    deinit {
        if fd >= 0 { close(fd) }
        if let current { current.deallocate() }
        shared.withLock { state in
            for buffer in state.free { buffer.deallocate() }
        }
    }

    // MARK: Worker-queue operations (each returns once done)

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    /// Waits for every chunk handed over so far to be written and hashed.
    func drain() async { await onQueue {} }

    /// Keeps the first `length` bytes, re-reading them through a fresh hasher (after a restart of the
    /// process, when the hash state of the earlier run is gone).
    func resume(keeping length: Int64, hasher: IntegrityHasher?) async -> Result<Void, S3Error> {
        await onQueue { [self] in
            guard ftruncate(fd, off_t(length)) == 0 else { return .failure(.fileSystem(path: path, errno: errno)) }
            hasher?.reset()
            if let hasher {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
                defer { buffer.deallocate() }
                var offset: Int64 = 0
                while offset < length {
                    let n = pread(fd, buffer.baseAddress, min(chunkSize, Int(length - offset)), off_t(offset))
                    guard n > 0 else { return .failure(.fileSystem(path: path, errno: n < 0 ? errno : EIO)) }
                    hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                    offset += Int64(n)
                }
            }
            self.hasher = hasher
            written = length
            nextOffset = length
            return .success(())
        }
    }

    /// Discards everything: the file becomes empty and hashing starts over with `hasher`.
    /// Ordered after every chunk handed over before it.
    func restart(hasher: IntegrityHasher?) {
        queue.async { [self] in
            if ftruncate(fd, 0) != 0 { shared.withLock { $0.writeError = errno } }
            hasher?.reset()
            self.hasher = hasher
            written = 0
            nextOffset = 0
        }
    }

    /// Positions the next chunk at `offset` without truncating (ranged writes into a sparse file); ``written``
    /// then counts from there. Ordered after every chunk handed over before it.
    func seek(to offset: Int64, hasher: IntegrityHasher? = nil) {
        queue.async { [self] in
            hasher?.reset()
            self.hasher = hasher
            nextOffset = offset
            written = 0
        }
    }

    /// `fsync(2)`; the only way a `.part` becomes eligible for its final name.
    func sync() async -> Result<Void, S3Error> {
        await onQueue { [self] in fsync(fd) == 0 ? .success(()) : .failure(.fileSystem(path: path, errno: errno)) }
    }

    /// `fsync(2)`, then renames the file to `destination` — in one visit to the worker queue, after every chunk.
    func syncAndRename(to destination: String) async -> Result<Void, S3Error> {
        await onQueue { [self] in
            guard fsync(fd) == 0 else { return .failure(.fileSystem(path: path, errno: errno)) }
            guard rename(path, destination) == 0 else { return .failure(.fileSystem(path: destination, errno: errno)) }
            return .success(())
        }
    }

    /// The first write error, if any.
    var writeError: Int32? { shared.withLock { $0.writeError } }

    // MARK: Engine-thread operations

    /// Tells the writer which transfer feeds it (to resume it after a backpressure pause).
    func attach(_ engine: HTTPEngine, _ id: HTTPTransferID) { transfer = (engine, id) }

    /// Takes a run of body bytes (engine thread). Copies them into the current chunk, handing full chunks to
    /// the worker; pauses the transfer when too many chunks are waiting.
    func accept(_ bytes: UnsafeRawBufferPointer) -> HTTPBodyDisposition {
        let verdict = shared.withLock { state -> HTTPBodyDisposition in
            if state.writeError != nil { return .abort }
            if state.inFlight >= maxInFlight {
                state.pausedTransfer = transfer
                return .pause
            }
            return .consumed
        }
        guard case .consumed = verdict else { return verdict }
        var offset = 0
        while offset < bytes.count {
            let chunk = current ?? takeBuffer()
            current = chunk
            let n = min(chunk.count - fill, bytes.count - offset)
            (chunk.baseAddress! + fill).copyMemory(from: bytes.baseAddress! + offset, byteCount: n)
            fill += n
            offset += n
            if fill == chunk.count { submitCurrent() }
        }
        return .consumed
    }

    /// Hands the partly filled chunk to the worker (engine thread, at the end of an attempt).
    func flush() {
        if fill > 0 { submitCurrent() }
    }

    private func takeBuffer() -> UnsafeMutableRawBufferPointer {
        shared.withLock { $0.free.popLast() }
            ?? UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 64)
    }

    private func submitCurrent() {
        guard let chunk = current else { return }
        let count = fill
        current = nil
        fill = 0
        shared.withLock { $0.inFlight += 1 }
        let box = ChunkBox(chunk)
        queue.async { [self] in self.write(box.buffer, count: count) }
    }

    private func write(_ chunk: UnsafeMutableRawBufferPointer, count: Int) {
        let failed = shared.withLock { $0.writeError != nil }
        if !failed {
            var done = 0
            while done < count {
                let n = pwrite(fd, chunk.baseAddress! + done, count - done, off_t(nextOffset + Int64(done)))
                if n < 0 {
                    if errno == EINTR { continue }
                    let code = errno
                    shared.withLock { $0.writeError = code }
                    break
                }
                done += n
            }
            if done == count {
                hasher?.update(UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
                startWritebackIfDue(wroteAt: nextOffset, count: Int64(count))
                nextOffset += Int64(count)
                written += Int64(count)
            }
        }
        let resume = shared.withLock { state -> (HTTPEngine, HTTPTransferID)? in
            state.inFlight -= 1
            if state.free.count < maxInFlight { state.free.append(chunk) } else { chunk.deallocate() }
            defer { state.pausedTransfer = nil }
            return state.pausedTransfer
        }
        if let (engine, id) = resume { engine.resume(id) }
    }
}

extension PartFileWriter {
    /// Worker queue: counts a write and, every ``writebackBatch`` bytes of contiguous writes, asks the kernel to
    /// start writing them to the disk (an optimisation only: `fsync` remains the guarantee, so errors are ignored).
    fileprivate func startWritebackIfDue(wroteAt offset: Int64, count: Int64) {
        if unflushed.count == 0 || unflushed.start + unflushed.count != offset { unflushed = (offset, 0) }
        unflushed.count += count
        if unflushed.count >= Self.writebackBatch {
            _ = cfileio_start_writeback(fd, unflushed.start, unflushed.count)
            unflushed = (unflushed.start + unflushed.count, 0)
        }
    }
}

/// `open(2)` with mode 0644 (a free function: inside ``PartFileWriter`` the name `open` is the method).
private func openFile(_ path: String, _ flags: Int32) -> Int32 { open(path, flags, 0o644) }

/// Carries a chunk pointer to the worker queue.
private struct ChunkBox: @unchecked Sendable {
    let buffer: UnsafeMutableRawBufferPointer
    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }
}
