import CFileIO
import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Streams a body into a `.part` file, written strictly in order, hashed as it goes.
///
/// The engine thread writes each run of body bytes straight from libcurl's buffer with `pwrite(2)` (as curl
/// itself does: no copy, no hand-off) and feeds cheap hashes (CRC-32C, CRC-32) inline. Expensive hashes (MD5,
/// SHA-256) run on a serial worker queue instead, over copies of the bytes in large chunks, so that they overlap
/// with receiving; at most ``maxInFlight`` chunks wait for the worker, beyond that the transfer is paused
/// (libcurl keeps the bytes) and resumed by the worker as soon as a chunk is free — memory stays flat whatever
/// the object's size. A body that fits in one chunk is hashed as it arrives instead, or kept whole for an
/// ``MD5Batch`` when MD5 is the check. The worker queue also opens the file (``open(truncate:)``, or
/// ``openNow(truncate:)`` from a block given to ``perform(_:)``), starts writeback every ``writebackBatch``
/// bytes and hands the file to the ``FileSyncGroup`` (which syncs it with other files finishing at the same
/// time, on a thread of the same pool), so no file-system wait holds a thread of the caller's pool.
///
/// Threading: ``accept(_:)``, ``flush()``, ``attach(_:_:)`` run on the engine thread during an attempt;
/// ``restart(hasher:)`` and ``seek(to:hasher:)`` run either there or between attempts; ``written`` and
/// ``hasher`` are read between attempts, after ``drain()``. Attempts of one writer never overlap.
// @unchecked: confined as the comment above says (attempts never overlap); what the worker queue shares is in
// `shared`, a LockedBox.
final class PartFileWriter: @unchecked Sendable {
    let path: String
    /// Set by ``open(truncate:)`` before any write; closed on deinit.
    private(set) var fd: Int32 = -1
    let chunkSize: Int
    let maxInFlight: Int
    private let queue: DispatchQueue

    private struct Shared {
        /// Chunks handed to the worker and not yet hashed.
        var inFlight = 0
        var free: [ChunkBox] = []
        var pausedTransfer: (HTTPEngine, HTTPTransferID)?
        var writeError: Int32?
    }
    private let shared = LockedBox(Shared())

    // Engine thread during an attempt; the job between attempts.
    private var current: UnsafeMutableRawBufferPointer?
    private var fill = 0
    private var transfer: (HTTPEngine, HTTPTransferID)?
    /// Bytes written by this attempt (since the last ``restart(hasher:)``/``seek(to:hasher:)``/``resume``).
    private(set) var written: Int64 = 0
    /// The hasher of the bytes written since the last restart; read after ``drain()``.
    private(set) var hasher: IntegrityHasher?
    /// Whether ``hasher`` runs on the worker queue (MD5, SHA-256) rather than inline.
    private var hashOnWorker = false
    /// Where the next byte lands.
    private var nextOffset: Int64 = 0
    /// No byte lies at or beyond this offset in the file (so that emptying an empty file costs no syscall).
    private var fileEnd: Int64 = 0
    /// Bytes written since writeback was last started, and where they begin.
    private var unflushed: (start: Int64, count: Int64) = (0, 0)
    /// Writeback starts once this much is written: the final `fsync` then waits for little more than the tail
    /// (writing a 1 GiB file back takes about half a second here, which would otherwise all come at the end).
    static let writebackBatch: Int64 = 8 << 20

    /// Whether the file's sync may be a `syncfs` shared with other files (``FileSyncGroup``).
    let allowsFileSystemSync: Bool

    /// Whether the file is synced before its rename (``DownloadRequest/durable``).
    let durable: Bool

    /// A writer for `path`; nothing touches the file system until ``open(truncate:)``.
    init(
        path: String, chunkSize: Int = 1 << 20, maxInFlight: Int = 4, allowsFileSystemSync: Bool = false,
        durable: Bool = true
    ) {
        self.path = path
        self.durable = durable
        self.allowsFileSystemSync = allowsFileSystemSync
        self.chunkSize = chunkSize
        self.maxInFlight = maxInFlight
        // The utility pool (as many threads as cores, plus more when they block in the file system) rather than a
        // queue of its own on the overcommitting pool, which starts a thread per busy writer: with 16 small
        // downloads finishing at once that meant ~16 threads and two context switches per file. Its own pool,
        // not the default one Swift tasks run on, so an fsync that waits never holds a task's thread.
        queue = DispatchQueue(label: "PartFileWriter", target: .global(qos: .utility))
    }

    deinit {
        if fd >= 0 { close(fd) }
        if let current { current.deallocate() }
        shared.withLock { state in
            for chunk in state.free { chunk.buffer.deallocate() }
        }
    }

    /// The first write error, if any.
    var writeError: Int32? { shared.withLock { $0.writeError } }

    // MARK: Worker-queue operations (each returns once done)

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    /// Opens (creating if needed) the file for reading and writing, on the worker queue: creating a file can
    /// block for a long time (inode allocation), and that must not hold a thread of the caller's pool.
    /// - Parameter truncate: Start from an empty file (nothing on disk belongs to a known version).
    /// - Returns: The size of the file as opened.
    func open(truncate: Bool) async -> Result<Int64, S3Error> {
        await onQueue { [self] in openNow(truncate: truncate) }
    }

    /// ``open(truncate:)`` on the calling thread, for a thread that may wait for the file system (a writer's
    /// queue, never the caller's pool). Before any other use of the writer.
    func openNow(truncate: Bool) -> Result<Int64, S3Error> {
        let fd = openFile(path, O_RDWR | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0))
        guard fd >= 0 else { return .failure(.fileSystem(path: path, errno: errno)) }
        self.fd = fd
        var st = stat()
        let size = truncate ? 0 : fstat(fd, &st) == 0 ? Int64(st.st_size) : 0
        fileEnd = size
        return .success(size)
    }

    /// Waits until every chunk handed to the worker so far has been hashed.
    func drain() async {
        guard shared.withLock({ $0.inFlight > 0 }) else { return }
        await onQueue {}
    }

    /// Keeps the first `length` bytes, re-reading them through a fresh hasher (after a restart of the
    /// process, when the hash state of the earlier run is gone). Between attempts only.
    func resume(keeping length: Int64, hasher: IntegrityHasher?) async -> Result<Void, S3Error> {
        let result: Result<Void, S3Error> = await onQueue { [self] in
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
            return .success(())
        }
        if case .success = result {
            use(hasher)
            written = length
            nextOffset = length
            fileEnd = length
        }
        return result
    }

    /// Discards everything: the file becomes empty and hashing starts over with `hasher`.
    func restart(hasher: IntegrityHasher?) {
        if fileEnd > 0 {
            if ftruncate(fd, 0) != 0 {
                let code = errno
                shared.withLock { $0.writeError = code }
            }
            fileEnd = 0
        }
        hasher?.reset()
        use(hasher)
        written = 0
        nextOffset = 0
    }

    /// Positions the next write at `offset` without truncating (ranged writes into a sparse file); ``written``
    /// then counts from there.
    func seek(to offset: Int64, hasher: IntegrityHasher? = nil) {
        hasher?.reset()
        use(hasher)
        nextOffset = offset
        written = 0
    }

    private func use(_ hasher: IntegrityHasher?) {
        if let current { current.deallocate() }
        current = nil
        fill = 0
        self.hasher = hasher
        hashOnWorker = hasher.map { !$0.checks.isDisjoint(with: [.md5, .sha256]) } ?? false
    }

    /// Told (engine thread, at a response's head) how many body bytes follow: a body that fits in one chunk is
    /// hashed inline as it arrives — the worker could not overlap anything with it, and copying it into a
    /// chunk-sized buffer would cost more than the hash.
    func expectBody(length: Int64) {
        guard hashOnWorker, length <= Int64(chunkSize), fill == 0, current == nil,
            shared.withLock({ $0.inFlight == 0 })
        else { return }
        hashOnWorker = false
        // A small body's MD5 is better still computed with others that finish with it (``MD5Batch``).
        hasher?.keepBodyForBatchedMD5(length: length)
    }

    /// Syncs the file (in a ``FileSyncGroup`` with other files finishing now), after every block handed to the
    /// worker queue so far; the only way a `.part` becomes eligible for its final name.
    func sync() async -> Result<Void, S3Error> { await commit(renamingTo: nil) }

    /// Syncs the file, then renames it to `destination` (see ``sync()``).
    func syncAndRename(to destination: String) async -> Result<Void, S3Error> {
        await commit(renamingTo: destination)
    }

    private func commit(renamingTo destination: String?) async -> Result<Void, S3Error> {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                commitNow(renamingTo: destination) { continuation.resume(returning: $0) }
            }
        }
    }

    /// Runs `body` on the worker queue after every chunk, open and writeback handed to it so far.
    func perform(_ body: @escaping @Sendable () -> Void) { queue.async(execute: body) }

    /// Syncs the file, then renames it to `destination` (nil: sync only), in the shared ``FileSyncGroup``;
    /// `completion` runs on the thread that syncs the group (this one when no group was in progress). Only from a
    /// block given to ``perform(_:)`` (after the writes the sync must cover).
    func commitNow(
        renamingTo destination: String?, completion: @escaping @Sendable (Result<Void, S3Error>) -> Void
    ) {
        guard durable else {
            // Verified: named at once, written back by the page cache like any program's file.
            if let destination, Glibc.rename(path, destination) != 0 {
                completion(.failure(.fileSystem(path: destination, errno: errno)))
            } else {
                completion(.success(()))
            }
            return
        }
        // The item keeps the writer, and so its descriptor, alive until the file is synced.
        FileSyncGroup.shared.commit(
            FileSyncGroup.Item(
                fd: fd, path: path, destination: destination, allowsFileSystemSync: allowsFileSystemSync
            ) { [self] result in
                withExtendedLifetime(self) { completion(result) }
            })
    }

    /// Holds the worker queue until the returned closure is called (tests: to make chunks wait).
    func holdWorkerForTesting() -> @Sendable () -> Void {
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        return { gate.signal() }
    }

    // MARK: Engine-thread operations

    /// Tells the writer which transfer feeds it (to resume it after a backpressure pause).
    func attach(_ engine: HTTPEngine, _ id: HTTPTransferID) { transfer = (engine, id) }

    /// Takes a run of body bytes (engine thread): writes them at their place and hashes them (inline, or by
    /// handing a copy to the worker); pauses the transfer when too many chunks wait for the worker.
    func accept(_ bytes: UnsafeRawBufferPointer) -> HTTPBodyDisposition {
        let verdict = shared.withLock { state -> HTTPBodyDisposition in
            if state.writeError != nil { return .abort }
            if hashOnWorker && state.inFlight >= maxInFlight {
                state.pausedTransfer = transfer
                return .pause
            }
            return .consumed
        }
        guard case .consumed = verdict, bytes.count > 0 else { return verdict }
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(nextOffset + Int64(done)))
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                shared.withLock { $0.writeError = code }
                return .abort
            }
            done += n
        }
        startWritebackIfDue(wroteAt: nextOffset, count: Int64(bytes.count))
        nextOffset += Int64(bytes.count)
        fileEnd = max(fileEnd, nextOffset)
        written += Int64(bytes.count)
        if hashOnWorker {
            copyForWorker(bytes)
        } else {
            hasher?.update(bytes)
        }
        return .consumed
    }

    /// Hashes the partly filled chunk (engine thread, at the end of an attempt): inline when the worker has
    /// nothing queued (a body smaller than a chunk then costs no hand-off at all), else after the queued chunks.
    func flush() {
        guard fill > 0, let chunk = current else { return }
        if shared.withLock({ $0.inFlight == 0 }) {
            hasher?.update(UnsafeRawBufferPointer(rebasing: chunk[0..<fill]))
            fill = 0
        } else {
            submitCurrent()
        }
    }

    private func copyForWorker(_ bytes: UnsafeRawBufferPointer) {
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
    }

    private func takeBuffer() -> UnsafeMutableRawBufferPointer {
        shared.withLock { $0.free.popLast() }?.buffer
            ?? UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 64)
    }

    private func submitCurrent() {
        guard let chunk = current, let hasher else { return }
        let count = fill
        current = nil
        fill = 0
        shared.withLock { $0.inFlight += 1 }
        let box = ChunkBox(chunk)
        queue.async { [self] in self.hash(box.buffer, count: count, into: hasher) }
    }

    /// Every ``writebackBatch`` bytes of contiguous writes, asks the kernel (from the worker queue) to start
    /// writing them to the disk — an optimisation only: the final sync remains the guarantee, so errors are ignored.
    private func startWritebackIfDue(wroteAt offset: Int64, count: Int64) {
        guard durable else { return }
        if unflushed.count == 0 || unflushed.start + unflushed.count != offset { unflushed = (offset, 0) }
        unflushed.count += count
        guard unflushed.count >= Self.writebackBatch else { return }
        let range = unflushed
        unflushed = (range.start + range.count, 0)
        queue.async { [self] in _ = cfileio_start_writeback(fd, range.start, range.count) }
    }

    // MARK: Worker queue

    private func hash(_ chunk: UnsafeMutableRawBufferPointer, count: Int, into hasher: IntegrityHasher) {
        hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
        let resume = shared.withLock { state -> (HTTPEngine, HTTPTransferID)? in
            state.inFlight -= 1
            if state.free.count < maxInFlight { state.free.append(ChunkBox(chunk)) } else { chunk.deallocate() }
            defer { state.pausedTransfer = nil }
            return state.pausedTransfer
        }
        if let (engine, id) = resume { engine.resume(id) }
    }
}

/// `open(2)` with mode 0644 (a free function: inside ``PartFileWriter`` the name `open` is the method).
private func openFile(_ path: String, _ flags: Int32) -> Int32 { open(path, flags, 0o644) }

/// Carries a chunk pointer to the worker queue and the free list.
// @unchecked: a chunk has one owner at a time (the network thread, the worker queue, or the free list under the lock).
private struct ChunkBox: @unchecked Sendable {
    let buffer: UnsafeMutableRawBufferPointer
    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }
}
