import Foundation
import Images

/// What a video container's reader refuses: one line each, for a file that is not one, or a box that lies.
public enum VideoMetadataError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file does not start as an ISO base media (MP4, MOV) file does.
    case notAMovie
    /// The top level holds no `moov` box (or it comes after a box that runs to the end of the file).
    case noMovieBox
    /// A box's size or contents contradict the file (past its parent's end, shorter than its header, too deep).
    case malformed(String)
    /// The `moov` box is larger than the reader takes (``VideoMetadataReader/maxMovieBoxBytes``).
    case movieBoxTooLarge(Int64)
    /// The reads the layout would need exceed ``VideoMetadataReader/maxReads``.
    case tooManyReads

    public var description: String {
        switch self {
        case .notAMovie: "not an MP4 or QuickTime file"
        case .noMovieBox: "no movie box (moov) at the top level"
        case .malformed(let reason): "malformed movie: \(reason)"
        case .movieBoxTooLarge(let size): "movie box of \(size) bytes is larger than the reader takes"
        case .tooManyReads: "the movie box is not where a few reads find it"
        }
    }
}

/// The contents of a `moov` box, parsed from bytes in memory: every size checked against its parent, every count
/// against the bytes that hold it, nesting bounded. Linear in the box's size whatever it claims.
struct MovieBox {
    private let bytes: [UInt8]

    /// Parses the body of a `moov` box (the bytes after its header).
    static func parse(body: [UInt8]) throws(VideoMetadataError) -> VideoMetadata {
        try MovieBox(bytes: body).metadata().metadata
    }

    /// What a fragmented movie's `moov` leaves to its fragments: its samples are in `moof` boxes, and without a
    /// `mehd` the movie's length is where the last fragment of the video track ends.
    struct Fragments: Sendable, Hashable {
        /// The video track's identifier and media timescale.
        var trackID: UInt32
        var timescale: UInt32
        /// The track's default sample duration (`trex`), for a fragment that gives none.
        var defaultSampleDuration: UInt32
    }

    /// ``parse(body:)``, with what a fragmented movie without a duration leaves to its fragments (nil otherwise).
    static func parseWithFragments(body: [UInt8]) throws(VideoMetadataError) -> (VideoMetadata, Fragments?) {
        try MovieBox(bytes: body).metadata()
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// Nesting deeper than this is refused (real files nest seven deep: moov/trak/mdia/minf/stbl/stsd/entry).
    static let maxDepth = 12

    // MARK: Reading integers

    private func u8(_ at: Int) -> UInt8 { bytes[at] }
    private func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1]) }
    private func u32(_ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
    private func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) << 32 | UInt64(u32(at + 4)) }
    private static func fourCC(_ code: UInt32) -> String {
        let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: code >> $0) }
        return String(decoding: bytes.map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    /// One child box: its type and the range of its body.
    private struct Box {
        var type: UInt32
        var body: Range<Int>
    }

    /// The boxes directly inside `range`, each checked to end within it.
    private func children(of range: Range<Int>) throws(VideoMetadataError) -> [Box] {
        var boxes: [Box] = []
        var offset = range.lowerBound
        while offset < range.upperBound {
            guard range.upperBound - offset >= 8 else {
                // Padding shorter than a header (some writers leave zeros): the end.
                if bytes[offset..<range.upperBound].allSatisfy({ $0 == 0 }) { break }
                throw .malformed("a box header is cut at byte \(offset)")
            }
            let size32 = u32(offset)
            let type = u32(offset + 4)
            var header = 8
            var size: Int
            switch size32 {
            case 0:
                size = range.upperBound - offset
            case 1:
                guard range.upperBound - offset >= 16 else { throw .malformed("a 64-bit box size is cut") }
                let large = u64(offset + 8)
                guard large <= UInt64(range.upperBound - offset) else {
                    throw .malformed("a box of \(large) bytes runs past its parent")
                }
                size = Int(large)
                header = 16
            default:
                size = Int(size32)
            }
            guard size >= header else { throw .malformed("a box of \(size) bytes is shorter than its header") }
            guard size <= range.upperBound - offset else {
                throw .malformed("a box of \(size) bytes runs past its parent")
            }
            boxes.append(Box(type: type, body: offset + header..<offset + size))
            offset += size
        }
        return boxes
    }

    private static func code(_ text: StaticString) -> UInt32 {
        text.withUTF8Buffer { b in UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3]) }
    }

    private static let mvhd = code("mvhd"), trak = code("trak"), tkhd = code("tkhd"), mdia = code("mdia")
    private static let mdhd = code("mdhd"), hdlr = code("hdlr"), minf = code("minf"), stbl = code("stbl")
    private static let stsd = code("stsd"), stts = code("stts"), udta = code("udta"), meta = code("meta")
    private static let keys = code("keys"), ilst = code("ilst"), data = code("data"), mvex = code("mvex")
    private static let mehd = code("mehd"), trex = code("trex"), vide = code("vide")
    /// `©xyz`: the copyright sign (0xA9) then `xyz`.
    private static let xyz: UInt32 = 0xA978_797A

    // MARK: The movie

    /// One track as the movie describes it.
    private struct Track {
        var id: UInt32 = 0
        var handler: UInt32 = 0
        var width = 0
        var height = 0
        var rotation = 0
        var timescale: UInt32 = 0
        var duration: UInt64 = 0
        var codec: String?
        var entryWidth = 0
        var entryHeight = 0
        var samples: UInt64 = 0
    }

    private func metadata() throws(VideoMetadataError) -> (metadata: VideoMetadata, fragments: Fragments?) {
        var result = VideoMetadata()
        var fragmented = false
        var movieTimescale: UInt32 = 0
        var movieDuration: UInt64 = 0
        var fragmentDuration: UInt64 = 0
        var defaultSampleDurations: [UInt32: UInt32] = [:]
        var tracks: [Track] = []
        var userLocation: VideoLocation?
        var metaItems: [String: String] = [:]
        var headerCreation: Date?

        for box in try children(of: 0..<bytes.count) {
            switch box.type {
            case Self.mvhd:
                let (timescale, duration, created) = try header(box.body)
                movieTimescale = timescale
                movieDuration = duration
                headerCreation = created
            case Self.trak:
                tracks.append(try track(box.body))
            case Self.mvex:
                fragmented = true
                for child in try children(of: box.body) {
                    if child.type == Self.mehd {
                        try need(child.body, 4)
                        let version = u8(child.body.lowerBound)
                        try need(child.body, version == 1 ? 12 : 8)
                        fragmentDuration =
                            version == 1 ? u64(child.body.lowerBound + 4) : UInt64(u32(child.body.lowerBound + 4))
                    } else if child.type == Self.trex {
                        try need(child.body, 24)
                        let start = child.body.lowerBound
                        defaultSampleDurations[u32(start + 4)] = u32(start + 12)
                    }
                }
            case Self.udta:
                for child in try children(of: box.body) {
                    if child.type == Self.xyz, userLocation == nil {
                        userLocation = userDataLocation(child.body)
                    } else if child.type == Self.meta {
                        try metaItems.merge(items(ofMeta: child.body, depth: 3)) { first, _ in first }
                    }
                }
            case Self.meta:
                try metaItems.merge(items(ofMeta: box.body, depth: 2)) { first, _ in first }
            default:
                continue
            }
        }

        if movieTimescale > 0 {
            let units = movieDuration > 0 ? movieDuration : fragmentDuration
            result.duration = Double(units) / Double(movieTimescale)
        }
        if let video = tracks.first(where: { $0.handler == Self.vide }) {
            var width = video.width > 0 ? video.width : video.entryWidth
            var height = video.height > 0 ? video.height : video.entryHeight
            if video.rotation == 90 || video.rotation == 270 { swap(&width, &height) }
            result.pixelWidth = width
            result.pixelHeight = height
            result.rotation = video.rotation
            result.codec = video.codec
            if video.timescale > 0 {
                if video.samples > 0, video.duration > 0 {
                    result.frameRate = Double(video.samples) * Double(video.timescale) / Double(video.duration)
                } else if let perSample = defaultSampleDurations[video.id], perSample > 0 {
                    result.frameRate = Double(video.timescale) / Double(perSample)
                }
                result.frameRate = (result.frameRate * 1000).rounded() / 1000
            }
            if result.duration == 0, video.timescale > 0 {
                result.duration = Double(video.duration) / Double(video.timescale)
            }
        }
        result.creationDate =
            metaItems["com.apple.quicktime.creationdate"].flatMap(Self.date(iso8601:)) ?? headerCreation
        result.location =
            metaItems["com.apple.quicktime.location.ISO6709"].flatMap(VideoLocation.init(iso6709:)) ?? userLocation
        result.contentIdentifier = metaItems["com.apple.quicktime.content.identifier"].flatMap(
            ContentIdentifier.validated)
        guard fragmented, fragmentDuration == 0, let video = tracks.first(where: { $0.handler == Self.vide }),
            video.timescale > 0
        else { return (result, nil) }
        // The movie box holds only what precedes the first fragment: its length is not the movie's.
        result.duration = 0
        let fragments = Fragments(
            trackID: video.id, timescale: video.timescale,
            defaultSampleDuration: defaultSampleDurations[video.id] ?? 0)
        return (result, fragments)
    }

    // MARK: Fragments

    private static let mfra = code("mfra"), tfra = code("tfra"), traf = code("traf"), tfhd = code("tfhd")
    private static let tfdt = code("tfdt"), trun = code("trun")

    /// The offset of the last fragment (`moof`) holding a random access point of `trackID`, from the body of an
    /// `mfra` box; nil when it lists none.
    static func lastFragmentOffset(mfraBody: [UInt8], trackID: UInt32) throws(VideoMetadataError) -> UInt64? {
        let index = MovieBox(bytes: mfraBody)
        var last: UInt64?
        for box in try index.children(of: 0..<mfraBody.count) where box.type == Self.tfra {
            try index.need(box.body, 16)
            let start = box.body.lowerBound
            let version = index.u8(start)
            guard index.u32(start + 4) == trackID else { continue }
            let lengths = index.u32(start + 8)
            let count = Int(index.u32(start + 12))
            let sizes = [(lengths >> 4) & 3, (lengths >> 2) & 3, lengths & 3].map { Int($0) + 1 }
            let entry = (version == 1 ? 16 : 8) + sizes.reduce(0, +)
            guard count <= (box.body.count - 16) / entry else {
                throw .malformed("tfra claims \(count) entries in \(box.body.count) bytes")
            }
            guard count > 0 else { continue }
            let at = start + 16 + (count - 1) * entry
            last = version == 1 ? index.u64(at + 8) : UInt64(index.u32(at + 4))
        }
        return last
    }

    /// Where the track's samples in a `moof` end, in its media timescale: its decode time (`tfdt`) plus the
    /// durations its runs give (per sample, or the fragment's or the track's default). Nil when the fragment does
    /// not say (no `tfdt`).
    static func fragmentEnd(moofBody: [UInt8], fragments: Fragments) throws(VideoMetadataError) -> UInt64? {
        let moof = MovieBox(bytes: moofBody)
        var end: UInt64?
        for box in try moof.children(of: 0..<moofBody.count) where box.type == Self.traf {
            var track: UInt32?
            var base: UInt64?
            var defaultDuration = UInt64(fragments.defaultSampleDuration)
            var total: UInt64 = 0
            for child in try moof.children(of: box.body) {
                let start = child.body.lowerBound
                switch child.type {
                case Self.tfhd:
                    try moof.need(child.body, 8)
                    let flags = moof.u32(start) & 0xFF_FFFF
                    track = moof.u32(start + 4)
                    // Optional fields after the track ID, in order: base offset (8), description index (4), then
                    // the default sample duration (4).
                    var at = start + 8
                    if flags & 0x01 != 0 { at += 8 }
                    if flags & 0x02 != 0 { at += 4 }
                    if flags & 0x08 != 0 {
                        try moof.need(child.body, at - start + 4)
                        defaultDuration = UInt64(moof.u32(at))
                    }
                case Self.tfdt:
                    try moof.need(child.body, 8)
                    let version = moof.u8(start)
                    if version == 1 { try moof.need(child.body, 12) }
                    base = version == 1 ? moof.u64(start + 4) : UInt64(moof.u32(start + 4))
                case Self.trun:
                    try moof.need(child.body, 8)
                    let flags = moof.u32(start) & 0xFF_FFFF
                    let count = Int(moof.u32(start + 4))
                    var at = start + 8
                    if flags & 0x01 != 0 { at += 4 }
                    if flags & 0x04 != 0 { at += 4 }
                    let fields = [0x100, 0x200, 0x400, 0x800].filter { flags & UInt32($0) != 0 }.count
                    guard at <= child.body.upperBound,
                        count <= (child.body.upperBound - at) / max(1, fields * 4) || (fields == 0 && count < 1 << 24)
                    else { throw .malformed("trun claims \(count) samples in \(child.body.count) bytes") }
                    if flags & 0x100 != 0 {
                        for _ in 0..<count {
                            total += UInt64(moof.u32(at))
                            at += fields * 4
                        }
                    } else {
                        total += UInt64(count) * defaultDuration
                    }
                default:
                    continue
                }
            }
            guard track == fragments.trackID, let base else { continue }
            end = max(end ?? 0, base + total)
        }
        return end
    }

    private func need(_ body: Range<Int>, _ count: Int) throws(VideoMetadataError) {
        guard body.count >= count else { throw .malformed("a box of \(body.count) bytes is too short") }
    }

    /// An `mvhd` or `mdhd`: (timescale, duration, creation date).
    private func header(_ body: Range<Int>) throws(VideoMetadataError) -> (UInt32, UInt64, Date?) {
        try need(body, 4)
        let start = body.lowerBound
        let version = u8(start)
        if version == 1 {
            try need(body, 32)
            let created = u64(start + 4)
            return (u32(start + 20), u64(start + 24), Self.date(since1904: created))
        }
        try need(body, 20)
        return (u32(start + 12), UInt64(u32(start + 16)), Self.date(since1904: UInt64(u32(start + 4))))
    }

    private func track(_ body: Range<Int>) throws(VideoMetadataError) -> Track {
        var track = Track()
        for box in try children(of: body) {
            switch box.type {
            case Self.tkhd:
                try need(box.body, 4)
                let start = box.body.lowerBound
                let version = u8(start)
                // After the version and flags: times and the track ID (20 or 32 bytes), then reserved (8), layer,
                // group, volume, reserved (8), the matrix (36), width and height (16.16 each).
                let idAt = start + (version == 1 ? 20 : 12)
                let matrixAt = start + (version == 1 ? 52 : 40)
                try need(box.body, matrixAt - start + 44)
                track.id = u32(idAt)
                let a = Int32(bitPattern: u32(matrixAt)), b = Int32(bitPattern: u32(matrixAt + 4))
                let c = Int32(bitPattern: u32(matrixAt + 12)), d = Int32(bitPattern: u32(matrixAt + 16))
                let one: Int32 = 0x10000
                track.rotation =
                    switch (a, b, c, d) {
                    case (0, one, -one, 0): 90
                    case (-one, 0, 0, -one): 180
                    case (0, -one, one, 0): 270
                    default: 0
                    }
                track.width = Int(u32(matrixAt + 36) >> 16)
                track.height = Int(u32(matrixAt + 40) >> 16)
            case Self.mdia:
                try media(box.body, into: &track)
            default:
                continue
            }
        }
        return track
    }

    private func media(_ body: Range<Int>, into track: inout Track) throws(VideoMetadataError) {
        for box in try children(of: body) {
            switch box.type {
            case Self.mdhd:
                let (timescale, duration, _) = try header(box.body)
                track.timescale = timescale
                track.duration = duration
            case Self.hdlr:
                try need(box.body, 12)
                track.handler = u32(box.body.lowerBound + 8)
            case Self.minf:
                for table in try children(of: box.body) where table.type == Self.stbl {
                    try sampleTable(table.body, into: &track)
                }
            default:
                continue
            }
        }
    }

    private func sampleTable(_ body: Range<Int>, into track: inout Track) throws(VideoMetadataError) {
        for box in try children(of: body) {
            switch box.type {
            case Self.stsd:
                try need(box.body, 8)
                let count = u32(box.body.lowerBound + 4)
                guard count > 0 else { continue }
                let entries = try children(of: box.body.lowerBound + 8..<box.body.upperBound)
                guard let first = entries.first else { continue }
                track.codec = Self.fourCC(first.type)
                // A visual sample entry: reserved (6), data reference (2), then 16 bytes, width and height.
                if first.body.count >= 28 {
                    track.entryWidth = Int(u16(first.body.lowerBound + 24))
                    track.entryHeight = Int(u16(first.body.lowerBound + 26))
                }
            case Self.stts:
                try need(box.body, 8)
                let count = Int(u32(box.body.lowerBound + 4))
                guard count <= (box.body.count - 8) / 8 else {
                    throw .malformed("stts claims \(count) entries in \(box.body.count) bytes")
                }
                var samples: UInt64 = 0
                var at = box.body.lowerBound + 8
                for _ in 0..<count {
                    samples += UInt64(u32(at))
                    at += 8
                }
                track.samples = samples
            default:
                continue
            }
        }
    }

    /// The `©xyz` user data item: a 16-bit length, a 16-bit language, then the ISO 6709 text.
    private func userDataLocation(_ body: Range<Int>) -> VideoLocation? {
        guard body.count >= 4 else { return nil }
        let length = Int(u16(body.lowerBound))
        let start = body.lowerBound + 4
        guard length <= body.upperBound - start else { return nil }
        return VideoLocation(iso6709: String(decoding: bytes[start..<start + length], as: UTF8.self))
    }

    /// The text items of a `meta` box named by its `keys` (QuickTime's metadata): key name → UTF-8 value. The
    /// QuickTime form has no version and flags; the ISO form (a full box) has them: told apart by where `hdlr` is.
    private func items(ofMeta body: Range<Int>, depth: Int) throws(VideoMetadataError) -> [String: String] {
        try itemRanges(ofMeta: body, depth: depth).mapValues { String(decoding: bytes[$0], as: UTF8.self) }
    }

    /// ``items(ofMeta:depth:)`` as the byte ranges of the values, by key name.
    private func itemRanges(ofMeta body: Range<Int>, depth: Int) throws(VideoMetadataError) -> [String: Range<Int>] {
        guard depth <= Self.maxDepth, body.count >= 8 else { return [:] }
        let start = Self.code("hdlr") == u32(body.lowerBound + 4) ? body.lowerBound : body.lowerBound + 4
        var names: [String] = []
        var values: [UInt32: Range<Int>] = [:]
        for box in try children(of: start..<body.upperBound) {
            if box.type == Self.keys {
                try need(box.body, 8)
                let count = Int(u32(box.body.lowerBound + 4))
                guard count <= (box.body.count - 8) / 8 else {
                    throw .malformed("keys claims \(count) entries in \(box.body.count) bytes")
                }
                var at = box.body.lowerBound + 8
                for _ in 0..<count {
                    guard box.body.upperBound - at >= 8 else { throw .malformed("a key is cut") }
                    let size = Int(u32(at))
                    guard size >= 8, size <= box.body.upperBound - at else { throw .malformed("a key's size lies") }
                    names.append(String(decoding: bytes[at + 8..<at + size], as: UTF8.self))
                    at += size
                }
            } else if box.type == Self.ilst {
                for item in try children(of: box.body) {
                    for value in try children(of: item.body) where value.type == Self.data {
                        // Type indicator (4: 0 then the type, 1 is UTF-8), locale (4), then the value.
                        guard value.body.count >= 8, u32(value.body.lowerBound) == 1 else { continue }
                        values[item.type] = value.body.lowerBound + 8..<value.body.upperBound
                    }
                }
            }
        }
        var items: [String: Range<Int>] = [:]
        for (index, value) in values where index >= 1 && Int(index) <= names.count {
            items[names[Int(index) - 1]] = value
        }
        return items
    }

    // MARK: Location

    /// The byte ranges, within the body, of every place the movie states: `©xyz` user data (the movie's and its
    /// tracks') and the values of Apple's `com.apple.quicktime.location…` keys. What a copy without the location
    /// overwrites.
    static func locationRanges(body: [UInt8]) throws(VideoMetadataError) -> [Range<Int>] {
        let movie = MovieBox(bytes: body)
        var ranges: [Range<Int>] = []
        func userData(_ range: Range<Int>) throws(VideoMetadataError) {
            for child in try movie.children(of: range) {
                if child.type == Self.xyz, child.body.count >= 4 {
                    let length = Int(movie.u16(child.body.lowerBound))
                    let start = child.body.lowerBound + 4
                    ranges.append(start..<min(child.body.upperBound, start + length))
                } else if child.type == Self.meta {
                    try meta(child.body, depth: 3)
                }
            }
        }
        func meta(_ range: Range<Int>, depth: Int) throws(VideoMetadataError) {
            for (name, value) in try movie.itemRanges(ofMeta: range, depth: depth)
            where name.hasPrefix("com.apple.quicktime.location") {
                ranges.append(value)
            }
        }
        for box in try movie.children(of: 0..<body.count) {
            switch box.type {
            case Self.udta: try userData(box.body)
            case Self.meta: try meta(box.body, depth: 2)
            case Self.trak:
                for child in try movie.children(of: box.body) where child.type == Self.udta {
                    try userData(child.body)
                }
            default: continue
            }
        }
        return ranges.filter { !$0.isEmpty }
    }

    // MARK: Dates

    /// Seconds since 1904-01-01 UTC (the QuickTime epoch); nil for 0 (not set).
    static func date(since1904 seconds: UInt64) -> Date? {
        guard seconds > 0, seconds < 1 << 40 else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) - 2_082_844_800)
    }

    /// `YYYY-MM-DDTHH:MM:SS` with optional fraction and zone (`Z`, `±HH:MM`, `±HHMM`), as Apple writes
    /// `com.apple.quicktime.creationdate`; a date without a zone is read as UTC.
    static func date(iso8601 text: String) -> Date? {
        let s = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= s.count else { return nil }
            var value = 0
            for byte in s[range] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard s.count >= 19, s[4] == UInt8(ascii: "-"), s[7] == UInt8(ascii: "-"),
            s[10] == UInt8(ascii: "T") || s[10] == UInt8(ascii: " "), s[13] == UInt8(ascii: ":"),
            s[16] == UInt8(ascii: ":"), let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var at = 19
        var fraction = 0.0
        if at < s.count, s[at] == UInt8(ascii: ".") {
            at += 1
            var scale = 0.1
            while at < s.count, s[at] >= 48, s[at] <= 57 {
                fraction += Double(s[at] - 48) * scale
                scale /= 10
                at += 1
            }
        }
        var offset = 0
        if at < s.count {
            if s[at] == UInt8(ascii: "Z") {
                at += 1
            } else if s[at] == UInt8(ascii: "+") || s[at] == UInt8(ascii: "-") {
                let sign = s[at] == UInt8(ascii: "-") ? -1 : 1
                guard let hours = number(at + 1..<at + 3) else { return nil }
                var minuteAt = at + 3
                if minuteAt < s.count, s[minuteAt] == UInt8(ascii: ":") { minuteAt += 1 }
                guard let minutes = number(minuteAt..<minuteAt + 2), hours < 24, minutes < 60 else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
                at = minuteAt + 2
            } else {
                return nil
            }
        }
        guard at == s.count else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard
            let date = calendar.date(
                from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
        else { return nil }
        return date.addingTimeInterval(fraction - Double(offset))
    }
}
