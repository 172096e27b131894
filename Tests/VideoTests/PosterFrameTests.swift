import Foundation
import Images
import Testing

@testable import Video

/// A file's bytes served by range, counting what was read (what a bucket's ranged GETs would be).
private final class ReadLog: @unchecked Sendable {  // used by one decode, on its one thread
    var reads = 0
    var bytes = 0
}

private func fixtureURL(_ name: String) -> URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
}

/// What `ffmpeg` itself decodes as the first frame (turned upright, as its command line does by default): the
/// reference the poster frame is compared with.
private func ffmpegFirstFrame(_ url: URL) throws -> (width: Int, height: Int, pixels: [UInt8]) {
    let size = try run(
        "ffprobe",
        [
            "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height:stream_side_data=rotation",
            "-of", "default=nw=1", url.path,
        ])
    var fields: [String: Int] = [:]
    for line in String(decoding: size, as: UTF8.self).split(separator: "\n") {
        let parts = line.split(separator: "=")
        if parts.count == 2, let value = Int(parts[1]) { fields[String(parts[0])] = value }
    }
    let (w, h) = (fields["width"] ?? 0, fields["height"] ?? 0)
    let swaps = abs(fields["rotation"] ?? 0) % 180 == 90
    let pixels = try run(
        "ffmpeg", ["-v", "error", "-i", url.path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgba", "-"])
    return (swaps ? h : w, swaps ? w : h, pixels)
}

private func run(_ tool: String, _ arguments: [String]) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [tool] + arguments
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw ImageError.codec("\(tool) exited \(process.terminationStatus)") }
    return [UInt8](data)
}

/// The mean absolute difference of two RGBA images' colour channels.
private func meanDifference(_ image: RGBAImage, _ reference: [UInt8]) -> Double {
    var total = 0
    var count = 0
    for y in 0..<image.height {
        for x in 0..<image.width {
            for c in 0..<3 {
                total += abs(
                    Int(image.pixels[y * image.bytesPerRow + x * 4 + c]) - Int(reference[(y * image.width + x) * 4 + c])
                )
                count += 1
            }
        }
    }
    return Double(total) / Double(max(1, count))
}

private let fullSize = DecodeRequest(targetWidth: 0, targetHeight: 0, contentMode: .aspectFit, resizeMode: .none)

@Suite("Poster frames")
struct PosterFrameTests {
    @Test(
        "the first frame matches ffmpeg's own decode, moov at either end and fragmented",
        arguments: ["head.mp4", "tail.mp4", "fragmented.mp4"])
    func firstFrameMatchesTheReferenceDecode(name: String) throws {
        let url = fixtureURL(name)
        let poster = try PosterFrame.decode(fileAt: url.path, request: fullSize).image
        let reference = try ffmpegFirstFrame(url)
        #expect(poster.width == reference.width && poster.height == reference.height)
        #expect(reference.pixels.count == reference.width * reference.height * 4)
        #expect(meanDifference(poster, reference.pixels) < 3)
    }

    @Test("a rotated recording's poster is upright: its display matrix applied, as ffmpeg shows it")
    func rotatedRecordingIsUpright() throws {
        let url = fixtureURL("rotated.mov")
        let poster = try PosterFrame.decode(fileAt: url.path, request: fullSize).image
        // Stored 64x48 with a quarter turn: shown 48x64.
        #expect(poster.width == 48 && poster.height == 64)
        let reference = try ffmpegFirstFrame(url)
        #expect(reference.width == 48 && reference.height == 64)
        #expect(meanDifference(poster, reference.pixels) < 3)
        #expect(PosterFrame.orientation(clockwise: 90) == 6)
        #expect(PosterFrame.orientation(clockwise: 270) == 8)
    }

    @Test("sized like a photo's thumbnail: aspect fit inside the target")
    func sizedLikeAThumbnail() throws {
        let request = DecodeRequest(targetWidth: 32, targetHeight: 32, contentMode: .aspectFit)
        let poster = try PosterFrame.decode(fileAt: fixtureURL("tail.mp4").path, request: request).image
        #expect(poster.width == 32 && poster.height == 24)
    }

    @Test("read through ranges: the same frame, and the read function's error ends the decode as it is")
    func readThroughRanges() throws {
        let bytes = [UInt8](try Data(contentsOf: fixtureURL("tail.mp4")))
        let log = ReadLog()
        let poster = try PosterFrame.decode(size: Int64(bytes.count), request: fullSize) { offset, buffer in
            log.reads += 1
            let count = min(buffer.count, bytes.count - Int(offset))
            bytes.withUnsafeBytes {
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count]))
            }
            log.bytes += count
            return count
        }.image
        let fromFile = try PosterFrame.decode(fileAt: fixtureURL("tail.mp4").path, request: fullSize).image
        #expect(poster.pixels == fromFile.pixels)
        #expect(log.reads > 0)

        struct Offline: Error {}
        #expect(throws: Offline.self) {
            _ = try PosterFrame.decode(size: Int64(bytes.count), request: fullSize) { _, _ in throw Offline() }
        }
    }

    @Test("not a video, a frame above the pixel limit, a cancelled decode: typed errors")
    func typedErrors() throws {
        let garbage = [UInt8](repeating: 0x41, count: 4096)
        #expect(throws: ImageError.self) {
            _ = try PosterFrame.decode(size: Int64(garbage.count), request: fullSize) { offset, buffer in
                let count = min(buffer.count, garbage.count - Int(offset))
                garbage.withUnsafeBytes {
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count]))
                }
                return count
            }
        }
        var small = fullSize
        small.maxPixels = 1000
        #expect(throws: ImageError.tooLarge(width: 64, height: 48, limit: 1000)) {
            _ = try PosterFrame.decode(fileAt: fixtureURL("head.mp4").path, request: small)
        }
        #expect(throws: ImageError.cancelled) {
            _ = try PosterFrame.decode(fileAt: fixtureURL("head.mp4").path, request: fullSize, isCancelled: { true })
        }
        // Valid boxes whose media data is not H.264 (the demo's and the fuzz seeds' movie): refused, bounded.
        let placeholder = SyntheticMovie.make(
            duration: 2, width: 64, height: 48, frameRate: 30, mediaBytes: 256 << 10, movieLast: true)
        #expect(throws: ImageError.self) {
            _ = try PosterFrame.decode(size: Int64(placeholder.count), request: fullSize) { offset, buffer in
                let count = min(buffer.count, placeholder.count - Int(offset))
                placeholder.withUnsafeBytes {
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count]))
                }
                return count
            }
        }
    }
}

@Suite("Movies built in code")
struct SyntheticMovieTests {
    static func decode(_ movie: [UInt8], request: DecodeRequest = fullSize, seconds: Double = 0, log: ReadLogBox? = nil)
        throws -> RGBAImage
    {
        try PosterFrame.decode(size: Int64(movie.count), request: request, seconds: seconds) { offset, buffer in
            let count = min(buffer.count, movie.count - Int(offset))
            movie.withUnsafeBytes {
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count]))
            }
            log?.ranges.append(offset..<offset + Int64(count))
            return count
        }.image
    }

    @Test(
        "a decodable movie's frames are the pictures written, moov at either end, cropped to an odd size of blocks",
        arguments: [true, false])
    func decodableMovieShowsItsPictures(movieLast: Bool) throws {
        let movie = SyntheticMovie.make(
            duration: 6, width: 96, height: 56, frameRate: 10, mediaBytes: 2 << 20, movieLast: movieLast,
            decodable: true)
        let metadata = try VideoMetadataReader.read(bytes: movie).metadata
        #expect(metadata.pixelWidth == 96 && metadata.pixelHeight == 56 && abs(metadata.duration - 6) < 0.01)
        let first = try Self.decode(movie)
        #expect(first.width == 96 && first.height == 56)
        // Each pixel within rounding of the colour written (YCbCr 4:2:0 and back: chroma is shared by 2x2 pixels,
        // so compare where the gradient is flat enough: every pixel, with a tolerance).
        var worst = 0
        for y in 0..<56 where abs(y - 14) > 4 {
            for x in 0..<96 {
                let want = SyntheticMovie.colour(x: x, y: y, width: 96, height: 56, look: 0)
                let at = y * first.bytesPerRow + x * 4
                worst = max(
                    worst, abs(Int(first.pixels[at]) - Int(want.red)), abs(Int(first.pixels[at + 1]) - Int(want.green)),
                    abs(Int(first.pixels[at + 2]) - Int(want.blue)))
            }
        }
        #expect(worst <= 8, "largest channel error \(worst)")
        // Four seconds in: the third keyframe's picture (look 2), not the first's.
        let later = try Self.decode(movie, seconds: 4.05)
        let want = SyntheticMovie.colour(x: 48, y: 40, width: 96, height: 56, look: 2)
        let at = 40 * later.bytesPerRow + 48 * 4
        #expect(abs(Int(later.pixels[at]) - Int(want.red)) <= 8 && abs(Int(later.pixels[at + 2]) - Int(want.blue)) <= 8)
    }

    @Test("a poster of a large decodable movie reads its head and its movie box, not its media data")
    func posterReadsLittle() throws {
        let movie = SyntheticMovie.make(
            duration: 20, width: 64, height: 48, frameRate: 10, mediaBytes: 16 << 20, movieLast: true,
            decodable: true)
        let log = ReadLogBox()
        _ = try Self.decode(movie, log: log)
        let read = log.ranges.reduce(0) { $0 + $1.count }
        #expect(read < 1 << 20, "\(read) bytes read of \(movie.count)")
    }
}

/// Ranges a decode read.
final class ReadLogBox: @unchecked Sendable {  // used by one decode, on its one thread
    var ranges: [Range<Int64>] = []
}

@Test("a Live Photo's movie gives its content identifier; one of another form is absent")
func movieContentIdentifier() throws {
    let movie = SyntheticMovie.make(
        duration: 3, width: 64, height: 48, frameRate: 10, mediaBytes: 4096, movieLast: true,
        contentIdentifier: "9c1b0a6e-3f52-4d7b-8e21-5a6c0d4e7f10")
    #expect(
        try VideoMetadataReader.read(bytes: movie).metadata.contentIdentifier == "9C1B0A6E-3F52-4D7B-8E21-5A6C0D4E7F10")
    let odd = SyntheticMovie.make(
        duration: 3, width: 64, height: 48, frameRate: 10, mediaBytes: 4096, movieLast: true,
        contentIdentifier: "not/an id")
    #expect(try VideoMetadataReader.read(bytes: odd).metadata.contentIdentifier == nil)
}
