import Dispatch
import Essentials
import Foundation
import Images
import Video

extension ImageBridge {
    /// Where a video's bytes come from, for its poster frame.
    enum VideoSource: Sendable {
        /// A local file (the verified original).
        case file(URL)
        /// A file of `size` bytes read by range: each read may suspend (the library's ranged reads, which fetch
        /// what is not cached and keep it).
        case ranges(size: Int64, read: @Sendable (Range<Int64>) async throws -> Data)
    }

    /// A video's poster frame (``PosterFrame``: its first frame, upright, of `request`'s size), decoded on the
    /// decode queue in one of the decode slots, never on the cooperative pool. Read by range, the bytes come in
    /// ``RangeWindows`` — the container's boxes and the first keyframe's packets, a few reads.
    /// - Returns: The image, its statistics, and how many bytes were read by range (0 from a file).
    static func posterFrame(_ source: VideoSource, request: DecodeRequest) async throws
        -> (image: AssetImage, statistics: DecodeStatistics, bytesRead: Int64)
    {
        try await offPool { isCancelled in
            switch source {
            case .file(let url):
                let (image, statistics) = try PosterFrame.decode(
                    fileAt: url.path, request: request, isCancelled: isCancelled)
                return (AssetImage(image), statistics, 0)
            case .ranges(let size, let read):
                let windows = RangeWindows(size: size, read: read)
                let (image, statistics) = try PosterFrame.decode(
                    size: size, request: request, isCancelled: isCancelled, read: windows.read)
                return (AssetImage(image), statistics, windows.bytesRead)
            }
        }
    }
}

/// The reads of one poster decode, answered from a few windows of the file: libavformat reads 64 KiB at a time,
/// and a window read from the bucket is at least ``firstWindow`` long, doubling (to ``largestWindow``) while the
/// reads follow one another, so a `moov` or a keyframe of a few MiB costs a few requests, and a read back at the
/// file's head (the first keyframe, after the `moov` at its end) finds the head's window still held.
///
/// Used by one decode, on the decode queue's thread that runs it (which its reads block: never the cooperative
/// pool's).
final class RangeWindows {
    static let firstWindow: Int64 = 256 << 10
    static let largestWindow: Int64 = 8 << 20
    /// Windows held at once.
    static let heldWindows = 3

    private let size: Int64
    private let fetch: @Sendable (Range<Int64>) async throws -> Data
    /// The held windows, the most recently used last.
    private var windows: [(start: Int64, bytes: Data)] = []
    private var nextLength = firstWindow
    /// Bytes of all the windows read.
    private(set) var bytesRead: Int64 = 0

    init(size: Int64, read: @escaping @Sendable (Range<Int64>) async throws -> Data) {
        self.size = size
        self.fetch = read
    }

    /// Copies the bytes at `offset` into `buffer` (as many as one window holds from there); 0 at the end.
    func read(_ offset: Int64, _ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < size, !buffer.isEmpty else { return 0 }
        let index = try windowIndex(holding: offset, wanting: Int64(buffer.count))
        let window = windows.remove(at: index)
        windows.append(window)
        let from = Int(offset - window.start)
        let count = min(buffer.count, window.bytes.count - from)
        window.bytes.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[from..<from + count]))
        }
        return count
    }

    private func windowIndex(holding offset: Int64, wanting: Int64) throws -> Int {
        if let index = windows.firstIndex(where: { offset >= $0.start && offset < $0.start + Int64($0.bytes.count) }) {
            return index
        }
        // A read right after the last window's end continues it: the next window is longer.
        let follows = windows.last.map { $0.start + Int64($0.bytes.count) == offset } ?? false
        nextLength = follows ? min(nextLength * 2, Self.largestWindow) : Self.firstWindow
        let range = offset..<min(size, offset + max(nextLength, wanting))
        let bytes = try Self.wait { [fetch] in try await fetch(range) }
        // The library's ranged reads give the whole range, clamped to the size it knows.
        guard bytes.count == range.count else { throw ImageError.truncated }
        bytesRead += Int64(bytes.count)
        if windows.count == Self.heldWindows { windows.removeFirst() }
        windows.append((offset, bytes))
        return windows.count - 1
    }

    /// Waits, on this thread (the decode queue's, never the pool's), for an async operation run as a task.
    private static func wait<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = LockedBox<Result<T, any Error>?>(nil)
        Task {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await operation()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0 }!.get()
    }
}
