import CVideo
package import Images

#if canImport(Glibc)
    import Glibc
#endif

/// One frame of a video, decoded by FFmpeg (libavformat, libavcodec, libswscale: Debian's libav* libraries, loaded
/// on first use), sized and turned upright as a photo's decode is.
///
/// The container is read through a read function, so a caller can answer from a local file or from byte ranges of
/// a remote object: libavformat asks for the boxes it needs (`ftyp`, `moov` wherever it lies) and the packets of
/// the frames it decodes, and nothing else. A decode runs on the calling thread, which the reads block (never call
/// it on the cooperative pool); one decoder thread, at most ``maxPackets`` packets.
package enum PosterFrame {
    /// Packets decoded before the video is refused (a keyframe comes first in every stream a camera writes).
    package static let maxPackets = 256

    /// Whether the libraries can be loaded (loading them the first time).
    package static var isAvailable: Bool { cvideo_available() == 1 }

    /// The first frame shown at or after `seconds` (0: the video's first frame), of `request`'s size, turned
    /// upright by the stream's display matrix.
    /// - Parameters:
    ///   - size: The file's length.
    ///   - read: Fills the buffer with the file's bytes at an offset; returns how many (fewer only at the end).
    ///     Its errors end the decode and are rethrown as they are.
    /// - Throws: `ImageError` — `.codec` when FFmpeg cannot be loaded or memory is short, `.corrupt` for bytes that
    ///   are not a video it decodes, `.tooLarge` for a frame above `request.maxPixels` (refused before its pixels
    ///   are converted), `.cancelled`; or `read`'s error.
    package static func decode(
        size: Int64, request: DecodeRequest, seconds: Double = 0, isCancelled: @escaping () -> Bool = { false },
        read: @escaping (Int64, UnsafeMutableRawBufferPointer) throws -> Int
    ) throws -> (image: RGBAImage, statistics: DecodeStatistics) {
        let context = ReadContext(read: read, isCancelled: isCancelled)
        let opaque = Unmanaged.passRetained(context)
        defer { opaque.release() }
        var source = cvideo_source(
            context: opaque.toOpaque(),
            read: { context, offset, buffer, length in
                let reader = Unmanaged<ReadContext>.fromOpaque(context!).takeUnretainedValue()
                do {
                    let count = try reader.read(
                        offset, UnsafeMutableRawBufferPointer(start: buffer, count: Int(length)))
                    return Int64(count)
                } catch {
                    reader.error = error
                    return -1
                }
            },
            is_cancelled: { context in
                Unmanaged<ReadContext>.fromOpaque(context!).takeUnretainedValue().isCancelled() ? 1 : 0
            },
            size: size)
        var frame: OpaquePointer?
        var width: Int32 = 0
        var height: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let result = cvideo_poster(
            &source, seconds, Int64(request.maxPixels), Int32(maxPackets), &frame, &width, &height, &message,
            message.count)
        defer { cvideo_frame_free(frame) }
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if let error = context.error { throw error }
        if isCancelled() { throw ImageError.cancelled }
        switch Int(result) {
        case Int(CVIDEO_OK): break
        case Int(CVIDEO_TOO_LARGE):
            throw ImageError.tooLarge(width: Int(width), height: Int(height), limit: request.maxPixels)
        case Int(CVIDEO_UNAVAILABLE), Int(CVIDEO_NO_MEMORY): throw ImageError.codec("video: \(text)")
        case Int(CVIDEO_READ_FAILED): throw ImageError.truncated
        default: throw ImageError.corrupt("video: \(text)")
        }
        guard let frame else { throw ImageError.corrupt("video: no frame") }
        var frameWidth: Int32 = 0
        var frameHeight: Int32 = 0
        var stride: Int32 = 0
        var rotation: Int32 = 0
        guard let pixels = cvideo_frame_pixels(frame, &frameWidth, &frameHeight, &stride, &rotation) else {
            throw ImageError.corrupt("video: no pixels")
        }
        let rows = Int(stride) * Int(frameHeight)
        return try ImageDecoder.fit(
            UnsafeRawBufferPointer(start: pixels, count: rows), width: Int(frameWidth), height: Int(frameHeight),
            bytesPerRow: Int(stride), orientation: orientation(clockwise: Int(rotation)), request: request,
            isCancelled: isCancelled)
    }

    /// The poster frame of a local file, read with `pread` through a descriptor of its own (close-on-exec).
    package static func decode(
        fileAt path: String, request: DecodeRequest, seconds: Double = 0, isCancelled: @escaping () -> Bool = { false }
    ) throws -> (image: RGBAImage, statistics: DecodeStatistics) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ImageError.codec("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw ImageError.codec("\(path) is not a regular file")
        }
        return try decode(size: Int64(info.st_size), request: request, seconds: seconds, isCancelled: isCancelled) {
            offset, buffer in
            while true {
                let count = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
                if count >= 0 { return count }
                guard errno == EINTR else { throw ImageError.truncated }
            }
        }
    }

    /// The EXIF orientation that turns a frame upright, for a display rotation in clockwise degrees.
    package static func orientation(clockwise degrees: Int) -> Int {
        switch degrees {
        case 90: 6
        case 180: 3
        case 270: 8
        default: 1
        }
    }

    /// What the C callbacks reach: the caller's read, its cancellation check, and the read's first error.
    private final class ReadContext {
        let read: (Int64, UnsafeMutableRawBufferPointer) throws -> Int
        let isCancelled: () -> Bool
        var error: (any Error)?

        init(read: @escaping (Int64, UnsafeMutableRawBufferPointer) throws -> Int, isCancelled: @escaping () -> Bool) {
            self.read = read
            self.isCancelled = isCancelled
        }
    }
}
