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

/// Small movies built in code (``SyntheticMovie``): `moov` at the head and after the media data with Apple's keys
/// and a rotation, and a fragmented one with its index.
enum VideoSeeds {
    static var all: [[UInt8]] {
        [
            SyntheticMovie.make(
                duration: 2, width: 640, height: 480, frameRate: 30, mediaBytes: 64, movieLast: false,
                creationDate: "2023-06-01T12:34:56+0200", location: "+48.8584+002.2945/", rotated: true),
            SyntheticMovie.make(
                duration: 2, width: 640, height: 480, frameRate: 30, mediaBytes: 64, movieLast: true,
                location: "+37.3318-122.0312+012.500/"),
            fragmented,
        ]
    }

    /// A movie whose samples are in one fragment after its `moov` (which says nothing of its length), with the
    /// fragment index (`mfra`) at the end.
    static var fragmented: [UInt8] {
        let box = SyntheticMovie.box
        let be32 = SyntheticMovie.be32
        let plain = SyntheticMovie.make(
            duration: 2, width: 640, height: 480, frameRate: 30, mediaBytes: 0, movieLast: false)
        // ftyp (20 bytes), then moov: its body, with the fragments' defaults added.
        let ftyp = Array(plain[0..<20])
        let moovSize = Int(plain[20]) << 24 | Int(plain[21]) << 16 | Int(plain[22]) << 8 | Int(plain[23])
        let trex = box("trex", [0, 0, 0, 0] + be32(1) + be32(1) + be32(20) + be32(0) + be32(0))
        let moov = box("moov", Array(plain[28..<20 + moovSize]) + box("mvex", trex))
        let moofAt = ftyp.count + moov.count
        let moof = box(
            "moof",
            box(
                "traf",
                box("tfhd", [0, 0, 0, 0] + be32(1)) + box("tfdt", [0, 0, 0, 0] + be32(1200))
                    + box("trun", [0, 0, 0, 0] + be32(30))))
        let tfra = box("tfra", [0, 0, 0, 0] + be32(1) + be32(0) + be32(1) + be32(1200) + be32(moofAt) + [1, 1, 1])
        let mfro = box("mfro", [0, 0, 0, 0] + be32(8 + tfra.count + 16))
        return ftyp + moov + moof + box("mdat", [UInt8](repeating: 0, count: 32)) + box("mfra", tfra + mfro)
    }
}
