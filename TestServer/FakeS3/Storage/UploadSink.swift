import Foundation
import NIOCore

/// Receives the bytes of an upload before they become visible. In memory they collect in one
/// buffer; on disk they stream to a temp file that is renamed into place on commit and removed on
/// ``abort()``, so a client that disconnects mid-upload leaves nothing behind. A multipart part may instead go to
/// its slot in its upload's one file (``MultipartUploads/reserveSlot(_:bucket:key:number:size:directory:)``).
///
/// Used from one event loop at a time; not thread-safe.
final class UploadSink {
    enum Target {
        case memory(ByteBuffer)
        case file(descriptor: CInt, path: String)
        /// A part written at `offset` of its upload's slot file (at most `capacity` bytes).
        case slot(descriptor: CInt, path: String, offset: Int64, capacity: Int64)
        case finished
    }

    private var target: Target
    private(set) var count: Int64 = 0
    /// Gives a slot back when its part is abandoned.
    private var releaseSlot: (() -> Void)?

    init(memoryWith allocator: ByteBufferAllocator, capacity: Int) {
        target = .memory(allocator.buffer(capacity: max(0, min(capacity, 64 << 20))))
    }

    init(temporaryFile path: String) throws(S3Error) {
        let fd = POSIX.createExclusive(path)
        guard fd >= 0 else { throw StorageFailure.error("cannot create \(path)", POSIX.lastError) }
        target = .file(descriptor: fd, path: path)
    }

    /// Writes a part into its reserved slot of `path` (opened, created when missing); `release` gives the slot back
    /// if the part is abandoned.
    init(slotIn path: String, offset: Int64, capacity: Int64, release: @escaping () -> Void) throws(S3Error) {
        let fd = POSIX.openForUpdating(path)
        guard fd >= 0 else {
            release()
            throw StorageFailure.error("cannot open \(path)", POSIX.lastError)
        }
        target = .slot(descriptor: fd, path: path, offset: offset, capacity: capacity)
        releaseSlot = release
    }

    /// Takes over an open file holding `count` bytes (an object assembled in place).
    init(adopting descriptor: CInt, path: String, count: Int64) {
        target = .file(descriptor: descriptor, path: path)
        self.count = count
    }

    /// Appends bytes.
    func write(_ buffer: ByteBuffer) throws(S3Error) {
        count += Int64(buffer.readableBytes)
        switch target {
        case .memory(var stored):
            target = .finished
            stored.writeImmutableBuffer(buffer)
            target = .memory(stored)
        case .file(let fd, let path):
            let ok = buffer.withUnsafeReadableBytes { POSIX.writeAll(fd, $0) }
            if !ok { throw StorageFailure.error("cannot write \(path)", POSIX.lastError) }
        case .slot(let fd, let path, let offset, let capacity):
            let start = count - Int64(buffer.readableBytes)
            guard count <= capacity else { throw StorageFailure.error("a part outgrew its slot in \(path)", EFBIG) }
            let ok = buffer.withUnsafeReadableBytes { POSIX.writeAll(fd, $0, at: offset + start) }
            if !ok { throw StorageFailure.error("cannot write \(path)", POSIX.lastError) }
        case .finished:
            break
        }
    }

    /// Hands the bytes over (the buffer, or the closed temp file's path).
    func finish() -> Target {
        let result = target
        switch target {
        case .file(let fd, _), .slot(let fd, _, _, _): POSIX.closeFile(fd)
        case .memory, .finished: break
        }
        target = .finished
        releaseSlot = nil
        return result
    }

    /// Drops the bytes; removes the temp file. Idempotent.
    func abort() {
        switch target {
        case .file(let fd, let path):
            POSIX.closeFile(fd)
            POSIX.remove(path)
        case .slot(let fd, _, _, _):
            // The slot's bytes stay in the shared file, unused: no part records them.
            POSIX.closeFile(fd)
            releaseSlot?()
        case .memory, .finished: break
        }
        releaseSlot = nil
        target = .finished
    }
}

/// Turns an I/O failure into the `InternalError` a client sees.
enum StorageFailure {
    static func error(_ what: String, _ code: CInt) -> S3Error {
        S3Error(
            status: 500, code: "InternalError",
            message: "We encountered an internal error: \(what): \(POSIX.describe(code)).")
    }
}
