import Foundation
import NIOCore

/// Receives the bytes of an upload before they become visible. In memory they collect in one
/// buffer; on disk they stream to a temp file that is renamed into place on commit and removed on
/// ``abort()``, so a client that disconnects mid-upload leaves nothing behind.
///
/// Used from one event loop at a time; not thread-safe.
final class UploadSink {
    enum Target {
        case memory(ByteBuffer)
        case file(descriptor: CInt, path: String)
        case finished
    }

    private var target: Target
    private(set) var count: Int64 = 0

    init(memoryWith allocator: ByteBufferAllocator, capacity: Int) {
        target = .memory(allocator.buffer(capacity: max(0, min(capacity, 64 << 20))))
    }

    init(temporaryFile path: String) throws(S3Error) {
        let fd = POSIX.createExclusive(path)
        guard fd >= 0 else { throw StorageFailure.error("cannot create \(path)", POSIX.lastError) }
        target = .file(descriptor: fd, path: path)
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
        case .finished:
            break
        }
    }

    /// Hands the bytes over (the buffer, or the closed temp file's path).
    func finish() -> Target {
        let result = target
        if case .file(let fd, _) = target { POSIX.closeFile(fd) }
        target = .finished
        return result
    }

    /// Drops the bytes; removes the temp file. Idempotent.
    func abort() {
        if case .file(let fd, let path) = target {
            POSIX.closeFile(fd)
            POSIX.remove(path)
        }
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
