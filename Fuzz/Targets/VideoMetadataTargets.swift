import Foundation
import Video

extension FuzzCatalog {
    /// `VideoMetadataReader` on any bytes: the walk ends within its read bound, reads only ranges inside the file
    /// and never more than its caps, refuses with a typed error or answers with every field in its range.
    static let videoMetadata = FuzzTarget(
        name: "video-metadata",
        summary: "VideoMetadataReader: bounded reads inside the file, typed refusals, fields in range",
        maxLength: 8192,
        cpuMinutesGoal: 20,
        seeds: { VideoSeeds.all },
        check: { bytes throws(FuzzFailure) in
            let answer: (metadata: VideoMetadata, cost: VideoMetadataReader.Cost)
            do {
                answer = try VideoMetadataReader.read(bytes: bytes)
            } catch {
                return
            }
            let (metadata, cost) = answer
            try expect(cost.reads >= 1 && cost.reads <= VideoMetadataReader.maxReads, "\(cost.reads) reads")
            let cap =
                Int64(VideoMetadataReader.firstReadBytes + VideoMetadataReader.followingReadBytes)
                + VideoMetadataReader.maxMovieBoxBytes + 2 * Int64(VideoMetadataReader.tailReadBytes)
            try expect(cost.bytes <= cap, "\(cost.bytes) bytes read")
            try expect(metadata.duration.isFinite && metadata.duration >= 0, "duration \(metadata.duration)")
            try expect(metadata.pixelWidth >= 0 && metadata.pixelHeight >= 0, "size \(metadata)")
            try expect([0, 90, 180, 270].contains(metadata.rotation), "rotation \(metadata.rotation)")
            try expect(metadata.frameRate.isFinite && metadata.frameRate >= 0, "frame rate \(metadata.frameRate)")
            if let location = metadata.location {
                try expect(
                    abs(location.latitude) <= 90 && abs(location.longitude) <= 180, "location \(location)")
            }
            try expect(metadata.codec.map { $0.utf8.count == 4 } ?? true, "codec \(String(describing: metadata.codec))")
        })
}

/// Small movies built in code: `moov` at the head and after the media data, a fragmented one with its index, a
/// rotated track with Apple's metadata keys.
enum VideoSeeds {
    static var all: [[UInt8]] { [head, tail, fragmented] }

    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        be32(UInt32(8 + body.count)) + Array(type.utf8) + body
    }
    static func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    static let ftyp = box("ftyp", Array("isom".utf8) + be32(0x200) + Array("isomavc1".utf8))

    static var movie: [UInt8] {
        let mvhd = box("mvhd", [0, 0, 0, 0] + be32(3_000_000_000) + be32(0) + be32(600) + be32(1200) + zeros(80))
        var matrix = be32(0) + be32(0x10000) + be32(0) + be32(0xFFFF_0000) + be32(0) + be32(0)
        matrix += be32(0) + be32(0) + be32(0x4000_0000)
        let tkhd = box(
            "tkhd",
            [0, 0, 0, 3] + be32(0) + be32(0) + be32(1) + be32(0) + be32(1200) + zeros(16) + matrix
                + be32(640 << 16) + be32(480 << 16))
        let mdhd = box("mdhd", [0, 0, 0, 0] + be32(0) + be32(0) + be32(600) + be32(1200) + zeros(4))
        let hdlr = box("hdlr", [0, 0, 0, 0] + be32(0) + Array("vide".utf8) + zeros(12))
        let entry = box("avc1", zeros(24) + [2, 128, 1, 224] + zeros(50))
        let stsd = box("stsd", [0, 0, 0, 0] + be32(1) + entry)
        let stts = box("stts", [0, 0, 0, 0] + be32(1) + be32(60) + be32(20))
        let trak = box("trak", tkhd + box("mdia", mdhd + hdlr + box("minf", box("stbl", stsd + stts))))
        let key = "com.apple.quicktime.location.ISO6709"
        let keyed = box(
            "keys", [0, 0, 0, 0] + be32(1) + be32(UInt32(8 + key.utf8.count)) + Array("mdta".utf8) + Array(key.utf8))
        let item = be32(24 + 18) + be32(1) + box("data", be32(1) + be32(0) + Array("+48.8584+002.2945/".utf8))
        let meta = box("meta", box("hdlr", zeros(8) + Array("mdta".utf8) + zeros(12)) + keyed + box("ilst", item))
        return box("moov", mvhd + trak + meta)
    }

    static func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }

    static var head: [UInt8] { ftyp + movie + box("mdat", zeros(64)) }
    static var tail: [UInt8] { ftyp + box("mdat", zeros(64)) + movie }
    static var fragmented: [UInt8] {
        let trex = box("trex", [0, 0, 0, 0] + be32(1) + be32(1) + be32(20) + be32(0) + be32(0))
        var moov = movie
        moov = Array(moov.dropFirst(8))
        let withExtends = box("moov", moov + box("mvex", trex))
        let moofAt = UInt32(ftyp.count + withExtends.count)
        let tfhd = box("tfhd", [0, 0, 0, 0] + be32(1))
        let tfdt = box("tfdt", [0, 0, 0, 0] + be32(1200))
        let trun = box("trun", [0, 0, 0, 0] + be32(30))
        let moof = box("moof", box("traf", tfhd + tfdt + trun))
        let tfra = box("tfra", [0, 0, 0, 0] + be32(1) + be32(0) + be32(1) + be32(1200) + be32(moofAt) + [1, 1, 1])
        let mfro = box("mfro", [0, 0, 0, 0] + be32(UInt32(8 + tfra.count + 16)))
        return ftyp + withExtends + moof + box("mdat", zeros(32)) + box("mfra", tfra + mfro)
    }
}
