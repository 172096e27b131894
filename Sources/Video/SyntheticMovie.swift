/// A QuickTime/MP4 container built in code, its boxes valid and its media data a placeholder pattern (not
/// decodable): what the fuzz harness seeds from and what the demo puts in its bucket, so that both exercise the
/// reader on the layouts cameras write without shipping video files.
package enum SyntheticMovie {
    /// A movie of `duration` seconds, one H.264 video track of `width` × `height` at `frameRate`, `mediaBytes` of
    /// media data, `moov` after the media data (`movieLast`, as phones write) or before it; with Apple's creation
    /// date, ISO 6709 location and Live Photo content identifier keys when given, and a 90° rotation when `rotated`.
    ///
    /// With `decodable`, the media data is real H.264 (``SyntheticH264``): a keyframe every two seconds, the frames
    /// between them repeats, each two seconds' frames one chunk, the chunks spread evenly over `mediaBytes` (the
    /// placeholder pattern between them) — so a poster frame, or a frame after a seek, needs the bytes near it only.
    /// `width` and `height` are then the coded size too (keep them small: a keyframe stores its pixels raw).
    package static func make(
        duration: Int, width: Int, height: Int, frameRate: Int, mediaBytes: Int, movieLast: Bool,
        creationDate: String? = nil, location: String? = nil, rotated: Bool = false, decodable: Bool = false,
        contentIdentifier: String? = nil
    ) -> [UInt8] {
        let ftyp = box("ftyp", Array("qt  ".utf8) + be32(0x200) + Array("qt  ".utf8))
        let timescale = 600
        let mvhd = box(
            "mvhd", [0, 0, 0, 0] + be32(0) + be32(0) + be32(timescale) + be32(duration * timescale) + zeros(80))
        var matrix =
            rotated
            ? be32(0) + be32(0x10000) + be32(0) + be32(0xFFFF_0000) + be32(0) + be32(0)
            : be32(0x10000) + be32(0) + be32(0) + be32(0) + be32(0x10000) + be32(0)
        matrix += be32(0) + be32(0) + be32(0x4000_0000)
        let tkhd = box(
            "tkhd",
            [0, 0, 0, 3] + be32(0) + be32(0) + be32(1) + be32(0) + be32(duration * timescale) + zeros(16)
                + matrix + be32(width << 16) + be32(height << 16))
        let mdhd = box(
            "mdhd", [0, 0, 0, 0] + be32(0) + be32(0) + be32(timescale) + be32(duration * timescale) + zeros(4))
        let hdlr = box("hdlr", [0, 0, 0, 0] + be32(0) + Array("vide".utf8) + zeros(12))
        let media =
            decodable
            ? DecodableMedia(
                duration: duration, width: width, height: height, frameRate: frameRate,
                mediaBytes: mediaBytes) : nil
        let entry = box(
            "avc1",
            zeros(6) + be16(1) + zeros(16) + be16(width) + be16(height) + be32(0x48_0000) + be32(0x48_0000) + zeros(4)
                + be16(1) + zeros(32) + be16(0x18) + be16(0xFFFF)
                + (media.map { box("avcC", $0.stream.decoderConfiguration) } ?? []))
        let stsd = box("stsd", [0, 0, 0, 0] + be32(1) + entry)
        let stts = box("stts", [0, 0, 0, 0] + be32(1) + be32(duration * frameRate) + be32(timescale / frameRate))
        func trak(mediaStart: Int) -> [UInt8] {
            box(
                "trak",
                tkhd
                    + box(
                        "mdia",
                        mdhd + hdlr
                            + box("minf", box("stbl", stsd + stts + (media?.tables(mediaStart: mediaStart) ?? [])))))
        }
        var items: [(String, String)] = []
        if let creationDate { items.append(("com.apple.quicktime.creationdate", creationDate)) }
        if let location { items.append(("com.apple.quicktime.location.ISO6709", location)) }
        if let contentIdentifier { items.append(("com.apple.quicktime.content.identifier", contentIdentifier)) }
        var meta: [UInt8] = []
        if !items.isEmpty {
            var keys = [0, 0, 0, 0] + be32(items.count)
            var list: [UInt8] = []
            for (index, (key, value)) in items.enumerated() {
                keys += be32(8 + key.utf8.count) + Array("mdta".utf8) + Array(key.utf8)
                let data = box("data", be32(1) + be32(0) + Array(value.utf8))
                list += be32(8 + data.count) + be32(index + 1) + data
            }
            meta = box(
                "meta", box("hdlr", zeros(8) + Array("mdta".utf8) + zeros(12)) + box("keys", keys) + box("ilst", list))
        }
        // The media data's first byte: after `ftyp` and the `mdat` header, and the `moov` when it comes first
        // (whose size does not depend on the offsets it holds).
        let movieSize = box("moov", mvhd + trak(mediaStart: 0) + meta).count
        let mediaStart = ftyp.count + 8 + (movieLast ? 0 : movieSize)
        let moov = box("moov", mvhd + trak(mediaStart: mediaStart) + meta)
        let mdat = box("mdat", media?.bytes ?? placeholder(mediaBytes))
        return movieLast ? ftyp + mdat + moov : ftyp + moov + mdat
    }

    /// A gradient over the frame, its hue turned by `look`, with a light bar a quarter down.
    package static func colour(x: Int, y: Int, width: Int, height: Int, look: Int) -> (
        red: UInt8, green: UInt8, blue: UInt8
    ) {
        if abs(y - height / 4) < max(1, height / 24) { return (235, 235, 235) }
        let across = UInt8(truncatingIfNeeded: 40 + x * 180 / max(1, width))
        let down = UInt8(truncatingIfNeeded: 40 + y * 180 / max(1, height))
        let fixed = UInt8(truncatingIfNeeded: 60 + look * 45)
        switch look {
        case 0: return (across, down, fixed)
        case 1: return (fixed, across, down)
        case 2: return (down, fixed, across)
        default: return (across, fixed, down)
        }
    }

    /// Media data that is not video: a pattern without long runs.
    static func placeholder(_ count: Int, from start: Int = 0) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count {
                buffer[index] = UInt8(truncatingIfNeeded: ((start + index) &* 2_654_435_761) >> 11)
            }
            initialized = count
        }
    }

    /// The frames of a decodable movie, laid out in its media data, and the sample tables that find them.
    private struct DecodableMedia {
        let stream: SyntheticH264
        /// The media data: each chunk at its offset, the placeholder pattern between.
        var bytes: [UInt8] = []
        var sampleSizes: [Int] = []
        /// Each chunk's offset in the media data, and how many samples it holds.
        var chunks: [(offset: Int, samples: Int)] = []
        var keyframes: [Int] = []

        init(duration: Int, width: Int, height: Int, frameRate: Int, mediaBytes: Int) {
            stream = SyntheticH264(width: width, height: height)
            let frames = max(1, duration * frameRate)
            let group = max(1, 2 * frameRate)
            let groups = (frames + group - 1) / group
            var pictures: [Int: [UInt8]] = [:]
            var encoded: [[UInt8]] = []
            for first in stride(from: 0, to: frames, by: group) {
                var chunk: [UInt8] = []
                for index in first..<min(frames, first + group) {
                    let nal: [UInt8]
                    if index == first {
                        // Four pictures, taken in turn: a seek shows which two seconds it landed in.
                        let look = (first / group) % 4
                        if pictures[look] == nil {
                            pictures[look] = stream.keyframe(idrID: look) { x, y in
                                SyntheticMovie.colour(x: x, y: y, width: width, height: height, look: look)
                            }
                        }
                        nal = pictures[look]!
                        keyframes.append(index + 1)
                    } else {
                        nal = stream.repeatFrame(frameNumber: index - first)
                    }
                    chunk += be32(nal.count) + nal
                    sampleSizes.append(4 + nal.count)
                }
                encoded.append(chunk)
            }
            let slot = max(mediaBytes / groups, encoded.map(\.count).max() ?? 0)
            for (index, chunk) in encoded.enumerated() {
                chunks.append((bytes.count, min(group, frames - index * group)))
                bytes += chunk
                let gap = index == encoded.count - 1 ? max(0, mediaBytes - bytes.count) : slot - chunk.count
                bytes += placeholder(gap, from: bytes.count)
            }
        }

        /// `stsc`, `stsz`, `stco` and `stss` for media data starting at `mediaStart` in the file.
        func tables(mediaStart: Int) -> [UInt8] {
            var runs: [(firstChunk: Int, samples: Int)] = []
            for (index, chunk) in chunks.enumerated() where runs.last?.samples != chunk.samples {
                runs.append((index + 1, chunk.samples))
            }
            let stsc = box(
                "stsc",
                [0, 0, 0, 0] + be32(runs.count) + runs.flatMap { be32($0.firstChunk) + be32($0.samples) + be32(1) })
            let stsz = box("stsz", [0, 0, 0, 0] + be32(0) + be32(sampleSizes.count) + sampleSizes.flatMap(be32))
            let stco = box("stco", [0, 0, 0, 0] + be32(chunks.count) + chunks.flatMap { be32(mediaStart + $0.offset) })
            let stss = box("stss", [0, 0, 0, 0] + be32(keyframes.count) + keyframes.flatMap(be32))
            return stsc + stsz + stco + stss
        }
    }

    package static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        be32(8 + body.count) + Array(type.utf8) + body
    }

    package static func be32(_ value: Int) -> [UInt8] {
        [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
    }

    static func be16(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    static func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }
}
