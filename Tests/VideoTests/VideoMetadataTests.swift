import Foundation
import Testing

@testable import Video

/// A file's bytes served by range, counting the reads (what a bucket's ranged GETs would be).
private final class RangeLog: @unchecked Sendable {  // used by one test task at a time
    var ranges: [Range<Int64>] = []
}

private func fixture(_ name: String) throws -> [UInt8] {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
    return [UInt8](try Data(contentsOf: url))
}

/// Reads `bytes`' metadata through ranged reads of them.
private func read(_ bytes: [UInt8], log: RangeLog = RangeLog()) async throws -> VideoMetadata {
    try await VideoMetadataReader.read(size: Int64(bytes.count)) { range in
        log.ranges.append(range)
        return Array(bytes[Int(range.lowerBound)..<Int(range.upperBound)])
    }.metadata
}

// MARK: Building boxes

private func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
    be32(UInt32(8 + body.count)) + Array(type.utf8) + body
}
private func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
private func be64(_ value: UInt64) -> [UInt8] { be32(UInt32(value >> 32)) + be32(UInt32(truncatingIfNeeded: value)) }

/// A minimal movie header: version 0, timescale and duration.
private func mvhd(timescale: UInt32, duration: UInt32) -> [UInt8] {
    box("mvhd", [0, 0, 0, 0] + be32(0) + be32(0) + be32(timescale) + be32(duration) + [UInt8](repeating: 0, count: 80))
}

@Suite struct VideoMetadataTests {
    @Test("moov after the media data (as phones write it): duration, size, codec, frame rate, date, in two reads")
    func movieBoxAtTheEnd() async throws {
        let bytes = try fixture("tail.mp4")
        let log = RangeLog()
        let metadata = try await read(bytes, log: log)
        #expect(abs(metadata.duration - 2) < 0.05, "\(metadata)")
        #expect(metadata.pixelWidth == 64 && metadata.pixelHeight == 48)
        #expect(metadata.codec == "avc1")
        #expect(metadata.frameRate == 25)
        #expect(metadata.rotation == 0)
        // The fixture is small: one read holds it. The walk past `mdat` is covered below at 2 GB.
        #expect(log.ranges.count == 1)
    }

    @Test("moov at the head (fast start) gives the same answer and the movie header's creation time")
    func movieBoxAtTheHead() async throws {
        let head = try await read(try fixture("head.mp4"))
        var tail = try await read(try fixture("tail.mp4"))
        #expect(head.creationDate == ISO8601DateFormatter().date(from: "2021-06-01T10:20:30Z"))
        tail.creationDate = head.creationDate
        #expect(head == tail)
    }

    @Test("a rotated recording: display size swapped, rotation 90, ©xyz location")
    func rotatedVideo() async throws {
        let metadata = try await read(try fixture("rotated.mov"))
        #expect(metadata.rotation == 90)
        #expect(metadata.pixelWidth == 48 && metadata.pixelHeight == 64, "\(metadata)")
        #expect(metadata.frameRate == 24)
        #expect(metadata.location == VideoLocation(latitude: 48.8584, longitude: 2.2945))
    }

    @Test("Apple's metadata keys: creation date with its zone, ISO 6709 location with altitude")
    func appleKeys() async throws {
        let metadata = try await read(try fixture("apple.mov"))
        #expect(metadata.creationDate == ISO8601DateFormatter().date(from: "2023-06-01T10:34:56Z"), "\(metadata)")
        #expect(metadata.location == VideoLocation(latitude: 37.3318, longitude: -122.0312, altitude: 12.5))
    }

    @Test("a fragmented MP4: duration and frame rate from its movie box")
    func fragmented() async throws {
        let metadata = try await read(try fixture("fragmented.mp4"))
        #expect(abs(metadata.duration - 2) < 0.05, "\(metadata)")
        #expect(metadata.pixelWidth == 64 && metadata.pixelHeight == 48)
        #expect(metadata.frameRate == 30)
    }

    @Test("2 GB with moov at the end: three reads, under a MiB, the media data never read")
    func largeFileMovieAtTheEnd() async throws {
        // ftyp, a 2 GB mdat (64-bit size), then the fixture's moov padded to 600 KiB (past the second read).
        let fixtureBytes = try fixture("tail.mp4")
        let moovAt = 32 + 8 + 3998
        let moov = Array(fixtureBytes[moovAt...])
        let padded = box("moov", Array(moov[8...]) + box("free", [UInt8](repeating: 0, count: 600 << 10)))
        let ftyp = Array(fixtureBytes[0..<32])
        let mdatSize: UInt64 = 2 << 30
        let mdatHeader = be32(1) + Array("mdat".utf8) + be64(mdatSize)
        let moovOffset = Int64(ftyp.count) + Int64(mdatSize)
        let size = moovOffset + Int64(padded.count)
        let log = RangeLog()
        let (metadata, cost) = try await VideoMetadataReader.read(size: size) { range in
            log.ranges.append(range)
            return (range.lowerBound..<range.upperBound).map { offset -> UInt8 in
                if offset < Int64(ftyp.count) { return ftyp[Int(offset)] }
                if offset < Int64(ftyp.count) + 16 { return mdatHeader[Int(offset) - ftyp.count] }
                if offset >= moovOffset { return padded[Int(offset - moovOffset)] }
                return 0xAB
            }
        }
        #expect(abs(metadata.duration - 2) < 0.05)
        #expect(cost.reads == 3, "\(log.ranges)")
        #expect(cost.bytes < 1 << 20, "\(cost.bytes)")
        #expect(log.ranges.allSatisfy { $0.lowerBound < 64 << 10 || $0.lowerBound >= moovOffset }, "\(log.ranges)")
    }

    @Test("hostile boxes are refused with a typed error, in bounded reads and time")
    func hostileBoxes() async throws {
        let ftyp = box("ftyp", Array("isom".utf8) + be32(0))
        let stts = box("stts", [0, 0, 0, 0] + be32(1_000_000_000) + be32(1) + be32(1))
        let track = box("trak", box("mdia", box("minf", box("stbl", stts))))
        let lyingSampleTable = box("moov", mvhd(timescale: 600, duration: 600) + track)
        let cases: [(String, [UInt8])] = [
            ("a box past the end", ftyp + be32(4096) + Array("mdat".utf8)),
            ("a box shorter than its header", ftyp + be32(4) + Array("free".utf8) + [0, 0, 0, 0]),
            ("a 64-bit size past the end", ftyp + be32(1) + Array("mdat".utf8) + be64(UInt64.max)),
            ("no moov", ftyp + box("free", [0, 0, 0, 0])),
            ("not a movie", Array("GIF89a and some more bytes".utf8)),
            ("stts claims a billion entries", ftyp + lyingSampleTable),
            (
                "a child box past its parent",
                ftyp + box("moov", mvhd(timescale: 600, duration: 600) + be32(1 << 20) + Array("trak".utf8))
            ),
            ("a moov too large", ftyp + be32(1) + Array("moov".utf8) + be64(1 << 40)),
        ]
        for (name, bytes) in cases {
            let log = RangeLog()
            await #expect(throws: VideoMetadataError.self, "\(name)") { _ = try await read(bytes, log: log) }
            #expect(log.ranges.count <= VideoMetadataReader.maxReads, "\(name)")
        }
        // Ten thousand tiny top-level boxes: refused after the walk's bound, not read one by one.
        let many = ftyp + Array((0..<10_000).map { _ in box("free", []) }.joined())
        let log = RangeLog()
        await #expect(throws: VideoMetadataError.self) { _ = try await read(many, log: log) }
        #expect(log.ranges.count <= VideoMetadataReader.maxReads)
    }

    @Test("a movie with nothing but its header: duration known, no video track, nothing made up")
    func headerOnly() async throws {
        let bytes = box("ftyp", Array("qt  ".utf8) + be32(0)) + box("moov", mvhd(timescale: 1000, duration: 1500))
        let metadata = try await read(bytes)
        #expect(metadata == VideoMetadata(duration: 1.5))
    }

    @Test("ISO 6709 and ISO 8601 text as phones write it, and what is refused")
    func textFields() {
        #expect(VideoLocation(iso6709: "+37.3318-122.0312/") == VideoLocation(latitude: 37.3318, longitude: -122.0312))
        #expect(VideoLocation(iso6709: "-33.8688+151.2093+058.000CRSWGS_84/")?.altitude == 58)
        #expect(VideoLocation(iso6709: "+91.0+000.0/") == nil)
        #expect(VideoLocation(iso6709: "37.3,-122.0") == nil)
        #expect(VideoLocation(iso6709: "") == nil)
        #expect(MovieBox.date(iso8601: "2023-06-01T12:34:56+0200") == MovieBox.date(iso8601: "2023-06-01T10:34:56Z"))
        #expect(MovieBox.date(iso8601: "2023-06-01T12:34:56-07:00") == MovieBox.date(iso8601: "2023-06-01T19:34:56Z"))
        #expect(MovieBox.date(iso8601: "2023-13-01T12:34:56Z") == nil)
        #expect(MovieBox.date(iso8601: "yesterday") == nil)
        #expect(MovieBox.date(since1904: 0) == nil)
    }

    @Test("a local file reads the same as its ranges")
    func localFile() async throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Fixtures/apple.mov")
        let fromFile = try VideoMetadataReader.read(file: url).metadata
        #expect(fromFile == (try await read(try fixture("apple.mov"))))
    }
}
