public import Foundation

/// Reads a video's metadata from a few byte ranges of it, wherever its `moov` box is: at the head (after `ftyp`,
/// a "fast start" file) or at the end (after the media data, as most phones write it).
///
/// The top-level boxes are walked by their headers alone: the media data (`mdat`), gigabytes, is skipped by its
/// size, never read. The first read takes ``firstReadBytes``; when `moov` is not in it, one read at the offset
/// after the last box seen takes ``followingReadBytes``, and a third the rest of a `moov` larger than that. A file
/// laid out as cameras write it costs at most three reads and well under a MiB. Bounded whatever the file claims:
/// at most ``maxReads`` reads, a `moov` of at most ``maxMovieBoxBytes``, ``maxTopLevelBoxes`` boxes walked.
public enum VideoMetadataReader {
    /// The first read: the file's head.
    public static let firstReadBytes = 64 << 10
    /// A read at the next top-level box past the first read (where `moov` follows the media data).
    public static let followingReadBytes = 512 << 10
    /// The read of a fragmented file's tail (its fragment index), and of its last fragment.
    public static let tailReadBytes = 64 << 10
    /// The largest `moov` read (a long recording's sample tables are a few MiB).
    public static let maxMovieBoxBytes: Int64 = 32 << 20
    /// Top-level boxes walked before the file is refused.
    public static let maxTopLevelBoxes = 4096
    /// Reads before the file is refused.
    public static let maxReads = 4

    /// What a read of a video's metadata cost.
    public struct Cost: Sendable, Hashable {
        /// Ranged reads made.
        public var reads = 0
        /// Bytes they returned.
        public var bytes: Int64 = 0
        /// No reads yet.
        public init() {}
    }

    /// Reads the metadata of a file of `size` bytes through `read`, which returns exactly the bytes of the range it
    /// is given (a ranged GET).
    /// - Throws: ``VideoMetadataError`` for a file that is not a movie or lies about its boxes; `read`'s errors.
    public static func read(
        size: Int64, read: (Range<Int64>) async throws -> [UInt8]
    ) async throws -> (metadata: VideoMetadata, cost: Cost) {
        var walk = MovieWalk(size: size)
        var step = try walk.start()
        while case .read(let range) = step { step = try walk.received(try await read(range)) }
        return (try walk.answer(step), walk.cost)
    }

    /// Reads the metadata of a local file (what an import runs): the same reads, from the file. Blocks the calling
    /// thread on the file's reads.
    /// - Throws: ``VideoMetadataError``, or the file's read error.
    public static func read(file url: URL) throws -> (metadata: VideoMetadata, cost: Cost) {
        try reading(url) { size, readNow in
            var walk = MovieWalk(size: size)
            return (try walk.run(readNow), walk.cost)
        }
    }

    /// Reads the metadata of a file held in memory, by the same reads (the fuzz harness's entry).
    package static func read(bytes: [UInt8]) throws -> (metadata: VideoMetadata, cost: Cost) {
        var walk = MovieWalk(size: Int64(bytes.count))
        let metadata = try walk.run { range in Array(bytes[Int(range.lowerBound)..<Int(range.upperBound)]) }
        return (metadata, walk.cost)
    }

    /// The file ranges that state where the movie was recorded (`©xyz`, Apple's location keys), read by the same
    /// few reads as its metadata: what a copy handed out without the location overwrites (same length). Empty for
    /// a movie that states none.
    /// - Throws: ``VideoMetadataError`` for a file that is not a movie or lies about its boxes; `read`'s errors.
    package static func locationRanges(size: Int64, read: (Range<Int64>) async throws -> [UInt8]) async throws
        -> [Range<Int64>]
    {
        var walk = MovieWalk(size: size)
        walk.stopsAtMovie = true
        var step = try walk.start()
        while case .read(let range) = step { step = try walk.received(try await read(range)) }
        return try walk.locationRanges()
    }

    /// ``locationRanges(size:read:)`` through a synchronous reader (a file, bytes in memory).
    package static func locationRanges(size: Int64, readNow: (Range<Int64>) throws -> [UInt8]) throws
        -> [Range<Int64>]
    {
        var walk = MovieWalk(size: size)
        walk.stopsAtMovie = true
        _ = try walk.run(readNow)
        return try walk.locationRanges()
    }

    /// Runs `body` with a local file's size and a reader of its ranges. Blocks the calling thread on the reads.
    private static func reading<T>(
        _ url: URL, _ body: (Int64, (Range<Int64>) throws -> [UInt8]) throws -> T
    ) throws -> T {
        let handle = try FileHandle(forReadingFrom: url)
        // try?: a read-only handle; closing it cannot lose anything
        defer { try? handle.close() }
        let size = Int64(try handle.seekToEnd())
        return try body(size) { range in
            try handle.seek(toOffset: UInt64(range.lowerBound))
            return [UInt8](try handle.read(upToCount: range.count) ?? Data())
        }
    }

    /// Whether these first bytes of a file begin a movie (a container this module reads).
    package static func isMovie(head: [UInt8]) -> Bool { isMovieStart(head) }

    /// The walk over the top-level boxes as a value: it asks for a range, is handed its bytes, and either asks
    /// for another or is done. The async and the file reader both drive it.
    struct MovieWalk {
        enum Step {
            case read(Range<Int64>)
            case done(VideoMetadata)
        }

        let size: Int64
        private(set) var cost = Cost()
        /// Stop once the `moov` box is read (no fragment reads): what a location filter needs.
        var stopsAtMovie = false
        /// The `moov` box's body once read, and its offset in the file.
        private(set) var movieBody: [UInt8] = []
        private(set) var movieBodyStart: Int64 = 0
        private var asked: Range<Int64> = 0..<0
        private var windowStart: Int64 = 0
        private var window: [UInt8] = []
        private var offset: Int64 = 0
        private var walked = 0
        /// The `moov` body read so far, and where the box ends, while its rest is being read.
        private var movie: (body: [UInt8], end: Int64)?
        /// A fragmented movie without a length: what its movie box said, while its fragment index (`mfra`, at the
        /// end of the file) and then its last fragment are read for where it ends.
        private var fragmented: (metadata: VideoMetadata, fragments: MovieBox.Fragments, readingIndex: Bool)?

        init(size: Int64) { self.size = size }

        /// The walk to its end through a synchronous reader.
        mutating func run(_ readNow: (Range<Int64>) throws -> [UInt8]) throws -> VideoMetadata {
            var step = try start()
            while case .read(let range) = step { step = try received(try readNow(range)) }
            return try answer(step)
        }

        /// The metadata of the step that ended the walk.
        func answer(_ step: Step) throws(VideoMetadataError) -> VideoMetadata {
            guard case .done(let metadata) = step else { throw .tooManyReads }
            return metadata
        }

        /// The stated places of the `moov` box the walk read, as file ranges.
        func locationRanges() throws(VideoMetadataError) -> [Range<Int64>] {
            try MovieBox.locationRanges(body: movieBody).map {
                movieBodyStart + Int64($0.lowerBound)..<movieBodyStart + Int64($0.upperBound)
            }
        }

        mutating func start() throws(VideoMetadataError) -> Step {
            guard size >= 8 else { throw .notAMovie }
            return try ask(0..<min(size, Int64(firstReadBytes)))
        }

        private mutating func ask(_ range: Range<Int64>) throws(VideoMetadataError) -> Step {
            guard cost.reads < maxReads else { throw .tooManyReads }
            asked = range
            return .read(range)
        }

        mutating func received(_ bytes: [UInt8]) throws(VideoMetadataError) -> Step {
            cost.reads += 1
            cost.bytes += Int64(bytes.count)
            guard bytes.count == asked.count else {
                throw .malformed("a read of \(asked.count) bytes returned \(bytes.count)")
            }
            if let movie { return try parsed(movie.body + bytes) }
            if let fragmented { return try followFragments(fragmented, bytes) }
            if cost.reads == 1, !isMovieStart(bytes) { throw .notAMovie }
            windowStart = asked.lowerBound
            window = bytes
            return try walk()
        }

        /// Walks the top-level boxes from `offset` through the bytes in hand.
        private mutating func walk() throws(VideoMetadataError) -> Step {
            while offset + 8 <= size {
                let headerEnd = min(size, offset + 16)
                if offset < windowStart || headerEnd > windowStart + Int64(window.count) {
                    return try ask(offset..<min(size, offset + Int64(followingReadBytes)))
                }
                walked += 1
                guard walked <= maxTopLevelBoxes else { throw .malformed("too many top-level boxes") }
                let at = Int(offset - windowStart)
                let size32 = be32(window, at)
                let type = be32(window, at + 4)
                var header: Int64 = 8
                let boxSize: Int64
                switch size32 {
                case 0: boxSize = size - offset
                case 1:
                    guard at + 16 <= window.count else { throw .malformed("a 64-bit box size is cut") }
                    let large = UInt64(be32(window, at + 8)) << 32 | UInt64(be32(window, at + 12))
                    guard large <= UInt64(size - offset) else {
                        throw .malformed("a box of \(large) bytes runs past the end of the file")
                    }
                    boxSize = Int64(large)
                    header = 16
                default: boxSize = Int64(size32)
                }
                guard boxSize >= header else {
                    throw .malformed("a box of \(boxSize) bytes is shorter than its header")
                }
                guard boxSize <= size - offset else {
                    throw .malformed("a box of \(boxSize) bytes runs past the end of the file")
                }
                if type == moov {
                    guard boxSize <= maxMovieBoxBytes else { throw .movieBoxTooLarge(boxSize) }
                    let bodyStart = offset + header
                    movieBodyStart = bodyStart
                    let end = offset + boxSize
                    let windowEnd = windowStart + Int64(window.count)
                    let body = Array(window[Int(bodyStart - windowStart)..<Int(min(end, windowEnd) - windowStart)])
                    guard end > windowEnd else { return try parsed(body) }
                    movie = (body, end)
                    return try ask(windowEnd..<end)
                }
                offset += boxSize
            }
            throw .noMovieBox
        }

        /// The movie box's answer, or — a fragmented movie whose box does not give its length — a read of the
        /// file's tail for its fragment index.
        private mutating func parsed(_ body: [UInt8]) throws(VideoMetadataError) -> Step {
            movie = nil
            movieBody = body
            let (metadata, fragments) = try MovieBox.parseWithFragments(body: body)
            guard let fragments, !stopsAtMovie, cost.reads < maxReads - 1 else { return .done(metadata) }
            fragmented = (metadata, fragments, true)
            return try ask(max(0, size - Int64(tailReadBytes))..<size)
        }

        /// The fragment index, then the last fragment: the movie's length from where that fragment ends. What
        /// the file does not say (no index, an index or a fragment past the bytes read) leaves the length unknown,
        /// never an error.
        private mutating func followFragments(
            _ state: (metadata: VideoMetadata, fragments: MovieBox.Fragments, readingIndex: Bool), _ bytes: [UInt8]
        ) throws(VideoMetadataError) -> Step {
            var metadata = state.metadata
            if state.readingIndex {
                // `mfro`, the file's last 16 bytes: size, type, version and flags, the `mfra` box's size.
                guard bytes.count >= 16, be32(bytes, bytes.count - 12) == mfro else { return .done(metadata) }
                let indexSize = Int(be32(bytes, bytes.count - 4))
                guard indexSize >= 16, indexSize <= bytes.count,
                    be32(bytes, bytes.count - indexSize + 4) == mfra,
                    let offset = try MovieBox.lastFragmentOffset(
                        mfraBody: Array(bytes[(bytes.count - indexSize + 8)...]), trackID: state.fragments.trackID),
                    offset < UInt64(size), cost.reads < maxReads
                else { return .done(metadata) }
                fragmented = (metadata, state.fragments, false)
                return try ask(Int64(offset)..<min(size, Int64(offset) + Int64(tailReadBytes)))
            }
            guard bytes.count >= 8, be32(bytes, 4) == moofType else { return .done(metadata) }
            let boxSize = Int(be32(bytes, 0))
            guard boxSize >= 8, boxSize <= bytes.count,
                let end = try MovieBox.fragmentEnd(moofBody: Array(bytes[8..<boxSize]), fragments: state.fragments)
            else { return .done(metadata) }
            metadata.duration = Double(end) / Double(state.fragments.timescale)
            return .done(metadata)
        }
    }

    /// Whether the bytes begin as an ISO base media file does: a box whose type is one of the top-level types
    /// (`ftyp`, `moov`, `mdat`, `free`, `skip`, `wide`, `pnot`, `uuid`).
    static func isMovieStart(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 8 else { return false }
        let known: Set<UInt32> = [ftyp, moov, mdat, free, skip, wide, pnot, uuid]
        return known.contains(be32(bytes, 4))
    }

    private static func be32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }

    private static func code(_ text: StaticString) -> UInt32 {
        text.withUTF8Buffer { b in UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3]) }
    }
    private static let ftyp = code("ftyp"), moov = code("moov"), mdat = code("mdat"), free = code("free")
    private static let skip = code("skip"), wide = code("wide"), pnot = code("pnot"), uuid = code("uuid")
    private static let mfro = code("mfro"), mfra = code("mfra"), moofType = code("moof")
}
