/// Where a HEIF file keeps its EXIF and XMP (items located by the `meta` box's `iloc`), and the same GPS strip as
/// JPEG's applied to them — so a HEIC handed out without location keeps every other byte.
///
/// Only what the strip needs is read: the top-level `meta` box's `iinf` (which items are `Exif`, or `mime` of type
/// `application/rdf+xml`) and `iloc` (their extents, file offsets of construction method 0). Every size and count
/// is bounds-checked; a structure that does not read throws, so that nothing is handed out with a location that
/// was not found. (libheif is not used here: it aborts on some malformed files.)
package enum HEIFLocation {
    /// A metadata item that can carry a location.
    package enum ItemKind: Sendable, Hashable {
        /// An `Exif` item: a 32-bit offset to the TIFF header, then the TIFF.
        case exif
        /// A `mime` item of type `application/rdf+xml`: an XMP packet.
        case xmp
    }

    /// The file byte ranges of the EXIF and XMP items, in item order (each stored in one extent).
    /// - Parameter head: The file's first bytes, through its `meta` box.
    /// - Throws: `.truncated` when `meta` runs past `head`; `.corrupt` for a malformed box; `.unsupportedFormat`
    ///   for such an item stored other than at one file offset (in `idat`, by reference, in pieces).
    package static func items(head: [UInt8]) throws(ImageError) -> [(kind: ItemKind, range: Range<Int>)] {
        var reader = BoxReader(bytes: head, range: 0..<head.count)
        while let box = try reader.next() {
            guard box.type == "meta" else { continue }
            guard box.range.upperBound <= head.count else { throw .truncated }
            return try items(inMeta: box, head)
        }
        throw .truncated
    }

    /// The overwrites that remove the location from an item whose bytes (`item`) start at file offset `offset`:
    /// the EXIF GPS IFD unlinked and zeroed, XMP `exif:GPS*` fields blanked; empty when it has none.
    package static func patches(item: [UInt8], kind: ItemKind, at offset: Int) throws(ImageError) -> [(
        offset: Int, bytes: [UInt8]
    )] {
        var bytes = item
        switch kind {
        case .exif:
            // A 32-bit offset from its end to the TIFF header (past "Exif\0\0" usually), then the TIFF.
            guard item.count >= 4 else { throw .corrupt("HEIF: EXIF item too short") }
            let skip = Int(item[0]) << 24 | Int(item[1]) << 16 | Int(item[2]) << 8 | Int(item[3])
            guard skip <= item.count - 4 - 8 else { throw .corrupt("HEIF: EXIF header offset outside the item") }
            guard try LocationStripper.stripTIFF(&bytes, payload: (4 + skip)..<item.count) else { return [] }
        case .xmp:
            guard try LocationStripper.blankXMP(&bytes, from: 0) else { return [] }
        }
        return [(offset, bytes)]
    }

    private static func items(inMeta meta: Box, _ bytes: [UInt8]) throws(ImageError) -> [(
        kind: ItemKind, range: Range<Int>
    )] {
        // `meta` is a full box: version and flags before its children.
        guard meta.payload.count >= 4 else { throw .corrupt("HEIF: meta box without its version and flags") }
        var reader = BoxReader(bytes: bytes, range: (meta.payload.lowerBound + 4)..<meta.payload.upperBound)
        var kinds: [UInt32: ItemKind] = [:]
        var locations: [UInt32: (method: Int, extents: [Range<Int>])] = [:]
        while let box = try reader.next() {
            switch box.type {
            case "iinf": kinds = try metadataItems(box, bytes)
            case "iloc": locations = try itemLocations(box, bytes)
            default: continue
            }
        }
        var result: [(kind: ItemKind, range: Range<Int>)] = []
        for (id, kind) in kinds.sorted(by: { $0.key < $1.key }) {
            guard let location = locations[id] else { throw .corrupt("HEIF: metadata item without a location") }
            // Stored in `idat` or by reference, or in pieces: not rewritten in place (refused, never passed on).
            guard location.method == 0, location.extents.count == 1 else { throw .unsupportedFormat }
            result.append((kind, location.extents[0]))
        }
        return result
    }

    /// The EXIF and XMP items an `iinf` box declares, by item id.
    private static func metadataItems(_ iinf: Box, _ bytes: [UInt8]) throws(ImageError) -> [UInt32: ItemKind] {
        var cursor = Cursor(bytes: bytes, range: iinf.payload)
        let version = try cursor.u8()
        try cursor.skip(3)
        _ = version == 0 ? UInt32(try cursor.u16()) : try cursor.u32()
        var reader = BoxReader(bytes: bytes, range: cursor.position..<iinf.payload.upperBound)
        var kinds: [UInt32: ItemKind] = [:]
        while let infe = try reader.next() {
            guard infe.type == "infe" else { continue }
            var entry = Cursor(bytes: bytes, range: infe.payload)
            let entryVersion = try entry.u8()
            try entry.skip(3)
            guard entryVersion >= 2 else { continue }  // versions 0 and 1 name no item type
            let id = entryVersion == 2 ? UInt32(try entry.u16()) : try entry.u32()
            try entry.skip(2)  // protection index
            switch try entry.fourCC() {
            case "Exif":
                kinds[id] = .exif
            case "mime":
                _ = try entry.cString()  // the item's name
                if try entry.cString().lowercased().hasPrefix("application/rdf+xml") { kinds[id] = .xmp }
            default:
                break
            }
            guard kinds.count <= 64 else { throw .corrupt("HEIF: too many metadata items") }
        }
        return kinds
    }

    private static func itemLocations(_ iloc: Box, _ bytes: [UInt8]) throws(ImageError) -> [UInt32: (
        method: Int, extents: [Range<Int>]
    )] {
        var cursor = Cursor(bytes: bytes, range: iloc.payload)
        let version = try cursor.u8()
        try cursor.skip(3)
        guard version <= 2 else { throw .corrupt("HEIF: iloc version \(version)") }
        let sizes = try cursor.u8()
        let offsetSize = Int(sizes >> 4)
        let lengthSize = Int(sizes & 15)
        let more = try cursor.u8()
        let baseOffsetSize = Int(more >> 4)
        let indexSize = version >= 1 ? Int(more & 15) : 0
        for size in [offsetSize, lengthSize, baseOffsetSize, indexSize] where ![0, 4, 8].contains(size) {
            throw .corrupt("HEIF: iloc field size \(size)")
        }
        let count = version < 2 ? Int(try cursor.u16()) : Int(try cursor.u32())
        guard count <= 100_000 else { throw .corrupt("HEIF: \(count) items") }
        var result: [UInt32: (method: Int, extents: [Range<Int>])] = [:]
        for _ in 0..<count {
            let id = version < 2 ? UInt32(try cursor.u16()) : try cursor.u32()
            let method = version >= 1 ? Int(try cursor.u16() & 15) : 0
            try cursor.skip(2)  // data reference index
            let base = try cursor.sized(baseOffsetSize)
            let extentCount = Int(try cursor.u16())
            var extents: [Range<Int>] = []
            for _ in 0..<extentCount {
                if indexSize > 0 { _ = try cursor.sized(indexSize) }
                let offset = try cursor.sized(offsetSize)
                let length = try cursor.sized(lengthSize)
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard !overflow, length > 0, length <= UInt64(Int.max), start <= UInt64(Int.max) - length else {
                    throw .corrupt("HEIF: item extent out of range")
                }
                extents.append(Int(start)..<Int(start + length))
            }
            result[id] = (method, extents)
        }
        return result
    }

    // MARK: ISO base media boxes

    struct Box {
        var type: String
        /// The whole box, header included (may run past the bytes at hand).
        var range: Range<Int>
        /// After the header.
        var payload: Range<Int>
    }

    /// Walks the boxes in a range, one level.
    struct BoxReader {
        let bytes: [UInt8]
        let range: Range<Int>
        var position: Int
        var visited = 0

        init(bytes: [UInt8], range: Range<Int>) {
            self.bytes = bytes
            self.range = range
            position = range.lowerBound
        }

        /// The next box, or nil at the end. A box's payload is clamped to the bytes at hand only for the top
        /// level's last box (the caller checks `range` against what it needs).
        mutating func next() throws(ImageError) -> Box? {
            // The previous box may have ended anywhere up to Int.max: subtract, never add to, its end.
            guard range.upperBound - position >= 8 else { return nil }
            visited += 1
            guard visited <= 10_000 else { throw .corrupt("HEIF: too many boxes") }
            var cursor = Cursor(bytes: bytes, range: position..<range.upperBound)
            var size = UInt64(try cursor.u32())
            let type = try cursor.fourCC()
            if size == 1 {
                size = try cursor.u64()
            } else if size == 0 {
                size = UInt64(range.upperBound - position)
            }
            let headerLength = cursor.position - position
            guard size >= UInt64(headerLength), size <= UInt64(Int.max - position) else {
                throw .corrupt("HEIF: box size")
            }
            let end = position + Int(size)
            let box = Box(
                type: type, range: position..<end,
                payload: (position + headerLength)..<min(end, bytes.count))
            position = end
            return box
        }
    }

    /// Big-endian reads inside a range; reading past it throws.
    struct Cursor {
        let bytes: [UInt8]
        let range: Range<Int>
        var position: Int

        init(bytes: [UInt8], range: Range<Int>) {
            self.bytes = bytes
            self.range = range.clamped(to: 0..<bytes.count)
            position = self.range.lowerBound
        }

        mutating func skip(_ count: Int) throws(ImageError) {
            guard position + count <= range.upperBound else { throw .truncated }
            position += count
        }

        mutating func sized(_ size: Int) throws(ImageError) -> UInt64 {
            switch size {
            case 0: return 0
            case 4: return UInt64(try u32())
            default: return try u64()
            }
        }

        mutating func u8() throws(ImageError) -> UInt8 {
            guard position < range.upperBound else { throw .truncated }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func u16() throws(ImageError) -> UInt16 {
            UInt16(try u8()) << 8 | UInt16(try u8())
        }

        mutating func u32() throws(ImageError) -> UInt32 {
            UInt32(try u16()) << 16 | UInt32(try u16())
        }

        mutating func u64() throws(ImageError) -> UInt64 {
            UInt64(try u32()) << 32 | UInt64(try u32())
        }

        /// A NUL-terminated UTF-8 string (the NUL consumed).
        mutating func cString() throws(ImageError) -> String {
            let start = position
            while try u8() != 0 {}
            return String(decoding: bytes[start..<(position - 1)], as: UTF8.self)
        }

        mutating func fourCC() throws(ImageError) -> String {
            let start = position
            try skip(4)
            return String(decoding: bytes[start..<(start + 4)], as: UTF8.self)
        }
    }
}
