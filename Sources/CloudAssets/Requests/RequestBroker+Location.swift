import AssetStore
import Essentials
import Foundation
import Images
import Video

#if canImport(Glibc)
    import Glibc
#endif

/// What a library hands out when ``AssetLibrary/Configuration/locationAccess`` is `.denied`: the original's bytes
/// with every GPS tag removed (JPEG, PNG and HEIF EXIF, XMP GPS fields; a movie's `©xyz` and Apple location keys,
/// their text blanked with spaces), the same length, everything else untouched.
enum LocationFilter {
    /// An image's headers are looked for in this many leading bytes (EXIF sits at the start).
    static let headLimit = 1 << 20

    /// The overwrites that remove the location from an image whose first bytes are `head` (none for a file
    /// that is not JPEG, PNG or HEIF, or carries no location). A HEIF's EXIF item may lie past the head:
    /// `read` gives the bytes of such a file range.
    /// - Throws: ``ImageError`` when the image's EXIF cannot be read: nothing is handed out rather than bytes
    ///   that might still say where the picture was taken.
    static func patches(head: [UInt8], size: Int? = nil, read: (Range<Int>) throws -> [UInt8]) throws
        -> [(offset: Int, bytes: [UInt8])]
    {
        switch ImageFormat.sniff(head) {
        case nil:
            guard let size, VideoMetadataReader.isMovie(head: head) else { return [] }
            return try moviePatches(size: Int64(size)) { range in
                try read(Int(range.lowerBound)..<Int(range.upperBound))
            }
        case .jpeg, .png: return try LocationStripper.locationPatches(head: head)
        case .heif:
            var patches: [(offset: Int, bytes: [UInt8])] = []
            for item in try HEIFLocation.items(head: head) {
                let extent = item.range
                guard extent.count <= headLimit else {
                    throw ImageError.corrupt("HEIF: metadata item of \(extent.count) bytes")
                }
                let bytes = extent.upperBound <= head.count ? Array(head[extent]) : try read(extent)
                patches += try HEIFLocation.patches(item: bytes, kind: item.kind, at: extent.lowerBound)
            }
            return patches
        }
    }

    /// The overwrites that blank a movie's stated places, read through `read` (a few ranges). A movie whose boxes
    /// cannot be read is not handed out (``ImageError``), as an image whose EXIF cannot be read.
    static func moviePatches(size: Int64, read: (Range<Int64>) throws -> [UInt8]) throws
        -> [(offset: Int, bytes: [UInt8])]
    {
        do {
            return try VideoMetadataReader.locationRanges(size: size, readNow: read).map(moviePatch)
        } catch let error as VideoMetadataError {
            guard statesNoPlace(error) else { throw ImageError.corrupt("movie: \(error)") }
            return []
        }
    }

    /// Whether a movie the reader refuses this way has no place to blank: it is not a movie, or has no `moov`
    /// box (where the places are). Any other refusal (a box that lies) is not handed out.
    static func statesNoPlace(_ error: VideoMetadataError) -> Bool {
        error == .notAMovie || error == .noMovieBox
    }

    /// One blanked place: spaces over its text (no reader takes them for a place).
    static func moviePatch(_ range: Range<Int64>) -> (offset: Int, bytes: [UInt8]) {
        (Int(range.lowerBound), [UInt8](repeating: 0x20, count: range.count))
    }

    /// Writes `patches` over the file at `url` (same length), and syncs it when asked.
    static func apply(_ patches: [(offset: Int, bytes: [UInt8])], toFileAt url: URL, synchronize: Bool) throws {
        try LocalFile.patch(url, with: patches, synchronize: synchronize)
    }

    /// The file ranges (HEIF EXIF and XMP items) past `head` that ``patches(head:read:)`` will ask for.
    static func rangesPastHead(_ head: [UInt8]) throws -> [Range<Int>] {
        guard ImageFormat.sniff(head) == .heif else { return [] }
        return try HEIFLocation.items(head: head).map(\.range).filter { $0.upperBound > head.count }
    }

    /// ``patches(head:read:)`` for a file, reading its first ``headLimit`` bytes.
    static func patches(forFileAt url: URL) throws -> [(offset: Int, bytes: [UInt8])] {
        let head = [UInt8](try LocalFile.read(url, limit: headLimit))
        let size = LocalFiles.regularFileSize(url.path).map(Int.init)
        return try patches(head: head, size: size) { range in
            let bytes = [UInt8](try LocalFile.read(url, offset: Int64(range.lowerBound), count: range.count))
            guard bytes.count == range.count else { throw ImageError.truncated }
            return bytes
        }
    }

    /// Whether a ranged read of this asset looks for GPS tags: its key or content type names a format whose
    /// location the filter removes. (Whole files are judged by their bytes instead.)
    static func mayCarryLocation(_ record: AssetRecord) -> Bool {
        if ImageHeaderRead.mayHaveHeaders(key: record.key) { return true }
        let type = record.contentType?.lowercased() ?? ""
        return ["image/jpeg", "image/png", "image/heic", "image/heif"].contains { type.hasPrefix($0) }
    }

    /// Applies `patches` to `data`, which holds the file's bytes from `offset` on.
    static func apply(_ patches: [(offset: Int, bytes: [UInt8])], to data: inout Data, at offset: Int64 = 0) {
        for patch in patches {
            let start = Int64(patch.offset)
            let end = start + Int64(patch.bytes.count)
            let lower = max(start, offset)
            let upper = min(end, offset + Int64(data.count))
            guard lower < upper else { continue }
            let source = patch.bytes[Int(lower - start)..<Int(upper - start)]
            let target = data.startIndex + Int(lower - offset)
            data.replaceSubrange(target..<target + source.count, with: source)
        }
    }
}

extension RequestBroker {
    /// Whether bytes of this asset must go out without location data.
    func stripsLocation(of record: AssetRecord) -> Bool {
        !catalog.revealsLocation && (record.mediaType == .image || record.mediaType == .video)
    }

    /// A whole file's bytes (an original, a thumbnail) as this library may hand them out.
    func filteredImageData(_ data: Data, of record: AssetRecord) throws -> Data {
        guard stripsLocation(of: record) else { return data }
        let head = [UInt8](data.prefix(LocationFilter.headLimit))
        let patches = try LocationFilter.patches(head: head, size: data.count) { range in
            guard range.upperBound <= data.count else { throw ImageError.truncated }
            return [UInt8](data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)])
        }
        guard !patches.isEmpty else { return data }
        var copy = Data(data)
        LocationFilter.apply(patches, to: &copy)
        return copy
    }

    /// The file to hand out for a verified original: the original itself, or — location access denied and the
    /// image carrying a location — a copy without it in `stripped/` (made once, remade when the original is newer,
    /// written through `.part` and renamed, removed with the original).
    func filteredOriginalFile(_ url: URL, of record: AssetRecord) throws -> URL {
        guard stripsLocation(of: record), let id = record.id else { return url }
        // A copy made from this original already (only originals with a location get one): no need to read its
        // headers again.
        let copy = files.stripped(id: id, key: record.key)
        var original = stat()
        var existing = stat()
        if stat(url.path, &original) == 0, lstat(copy.path, &existing) == 0,
            existing.st_mode & S_IFMT == S_IFREG, existing.st_size == original.st_size,
            existing.st_mtim.tv_sec > original.st_mtim.tv_sec
                || (existing.st_mtim.tv_sec == original.st_mtim.tv_sec
                    && existing.st_mtim.tv_nsec >= original.st_mtim.tv_nsec)
        {
            return copy
        }
        let patches = try LocationFilter.patches(forFileAt: url)
        guard !patches.isEmpty else { return url }
        let part = URL(fileURLWithPath: copy.path + ".part", isDirectory: false)
        unlink(part.path)
        try LocalFile.copy(url, to: part)
        do {
            try LocationFilter.apply(patches, toFileAt: part, synchronize: true)
        } catch {
            unlink(part.path)
            throw error
        }
        guard rename(part.path, copy.path) == 0 else {
            let code = errno
            unlink(part.path)
            throw AssetRequestError.localFile(path: copy.path, reason: String(cString: strerror(code)))
        }
        return copy
    }

    /// ``AssetLibrary/read(_:range:isNetworkAccessAllowed:)``: the cache's bytes, with the location filtered out.
    func read(_ asset: Asset, range: Range<Int64>, isNetworkAccessAllowed: Bool) async throws -> Data {
        var data = try await cache.readRetrying(asset, range: range, isNetworkAccessAllowed: isNetworkAccessAllowed)
        // Location access denied: bytes of an image's headers go out without its GPS tags (read from the
        // headers, which this may fetch).
        guard !catalog.revealsLocation, let record = try catalog.store.record(id: asset.rowID),
            stripsLocation(of: record)
        else { return data }
        if range.lowerBound < Int64(LocationFilter.headLimit), LocationFilter.mayCarryLocation(record) {
            let headRange = 0..<min(record.size, Int64(LocationFilter.headLimit))
            let head = [UInt8](
                try await cache.readRetrying(asset, range: headRange, isNetworkAccessAllowed: isNetworkAccessAllowed))
            // A HEIF's EXIF item can lie past the head: read first, then handed to the patcher.
            var items: [Range<Int>: [UInt8]] = [:]
            for item in try LocationFilter.rangesPastHead(head) where Int64(item.upperBound) <= record.size {
                items[item] = [UInt8](
                    try await cache.readRetrying(
                        asset, range: Int64(item.lowerBound)..<Int64(item.upperBound),
                        isNetworkAccessAllowed: isNetworkAccessAllowed))
            }
            let patches = try LocationFilter.patches(head: head) { range in
                guard let bytes = items[range] else { throw ImageError.truncated }
                return bytes
            }
            LocationFilter.apply(patches, to: &data, at: range.lowerBound)
        } else if record.mediaType == .video, VideoHeaderRead.mayHaveHeaders(key: record.key),
            record.location != nil || record.metadataFill != .complete
        {
            // A movie's places sit in its `moov` box, at either end: found by the container's few reads (which
            // this may fetch, and which stay in the cache). A video whose container was read (by the sync or the
            // import, with the same reader) and states no place needs none of them.
            let ranges: [Range<Int64>]
            do {
                ranges = try await VideoMetadataReader.locationRanges(size: record.size) { range in
                    [UInt8](
                        try await cache.readRetrying(
                            asset, range: range, isNetworkAccessAllowed: isNetworkAccessAllowed))
                }
            } catch let error as VideoMetadataError {
                guard LocationFilter.statesNoPlace(error) else { throw ImageError.corrupt("movie: \(error)") }
                ranges = []
            }
            LocationFilter.apply(ranges.map(LocationFilter.moviePatch), to: &data, at: range.lowerBound)
        }
        return data
    }
}
