/// A QuickTime/MP4 container built in code, its boxes valid and its media data a placeholder pattern (not
/// decodable): what the fuzz harness seeds from and what the demo puts in its bucket, so that both exercise the
/// reader on the layouts cameras write without shipping video files.
package enum SyntheticMovie {
    /// A movie of `duration` seconds, one H.264 video track of `width` × `height` at `frameRate`, `mediaBytes` of
    /// media data, `moov` after the media data (`movieLast`, as phones write) or before it; with Apple's creation
    /// date and ISO 6709 location keys when given, and a 90° rotation when `rotated`.
    package static func make(
        duration: Int, width: Int, height: Int, frameRate: Int, mediaBytes: Int, movieLast: Bool,
        creationDate: String? = nil, location: String? = nil, rotated: Bool = false
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
        let entry = box("avc1", zeros(24) + be16(width) + be16(height) + zeros(50))
        let stsd = box("stsd", [0, 0, 0, 0] + be32(1) + entry)
        let stts = box("stts", [0, 0, 0, 0] + be32(1) + be32(duration * frameRate) + be32(timescale / frameRate))
        let trak = box("trak", tkhd + box("mdia", mdhd + hdlr + box("minf", box("stbl", stsd + stts))))
        var items: [(String, String)] = []
        if let creationDate { items.append(("com.apple.quicktime.creationdate", creationDate)) }
        if let location { items.append(("com.apple.quicktime.location.ISO6709", location)) }
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
        let moov = box("moov", mvhd + trak + meta)
        var media = [UInt8](repeating: 0, count: mediaBytes)
        for index in media.indices { media[index] = UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> 11) }
        let mdat = box("mdat", media)
        return movieLast ? ftyp + mdat + moov : ftyp + moov + mdat
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
