/// Where a HEIF file keeps its EXIF (an `Exif` item located by the `meta` box's `iloc`), and the same GPS strip as
/// JPEG's applied to it — so a HEIC handed out without location keeps every other byte.
///
/// Only what the strip needs is read: `ftyp`, then the top-level `meta` box's `iinf` (which items are `Exif`) and
/// `iloc` (their extents, file offsets of construction method 0). Every size and count is bounds-checked; a
/// structure that does not read throws, so that nothing is handed out with a location that was not found.
package enum HEIFLocation {
    /// File byte ranges of the EXIF items, in item order (each stored in one extent).
    /// - Parameter head: The file's first bytes, through its `meta` box.
    /// - Throws: `.truncated` when `meta` runs past `head`; `.corrupt` for a malformed box; `.unsupportedFormat`
    ///   for an EXIF item stored other than at a file offset (in `idat`, or by reference).
    package static func exifExtents(head: [UInt8]) throws(ImageError) -> [Range<Int>] {
        var reader = BoxReader(bytes: head, range: 0..<head.count)
        while let box = try reader.next() {
            guard box.type == "meta" else { continue }
            guard box.range.upperBound <= head.count else { throw .truncated }
            return try extents(inMeta: box, head)
        }
        throw .truncated
    }

    /// The overwrites that remove the GPS IFD from an EXIF item whose bytes (`item`) start at file offset
    /// `offset`; empty when it has none.
    package static func patches(exifItem item: [UInt8], at offset: Int) throws(ImageError) -> [(
        offset: Int, bytes: [UInt8]
    )] {
        // The item: a 32-bit offset from its end to the TIFF header (past "Exif\0\0" usually), then the TIFF.
        guard item.count >= 4 else { throw .corrupt("HEIF: EXIF item too short") }
        let skip = Int(item[0]) << 24 | Int(item[1]) << 16 | Int(item[2]) << 8 | Int(item[3])
        guard skip >= 0, skip <= item.count - 4 - 8 else { throw .corrupt("HEIF: EXIF header offset outside the item") }
        var bytes = item
        guard try LocationStripper.stripTIFF(&bytes, payload: (4 + skip)..<item.count) else { return [] }
        return [(offset, bytes)]
    }

    private static func extents(inMeta meta: Box, _ bytes: [UInt8]) throws(ImageError) -> [Range<Int>] {
        // `meta` is a full box: version and flags before its children.
        var reader = BoxReader(bytes: bytes, range: (meta.payload.lowerBound + 4)..<meta.payload.upperBound)
        var exifItems: Set<UInt32> = []
        var locations: [UInt32: (method: Int, extents: [Range<Int>])] = [:]
        while let box = try reader.next() {
            switch box.type {
            case "iinf": exifItems = try exifItemIDs(box, bytes)
            case "iloc": locations = try itemLocations(box, bytes)
            default: continue
            }
        }
        var result: [Range<Int>] = []
        for id in exifItems.sorted() {
            guard let location = locations[id] else { throw .corrupt("HEIF: EXIF item without a location") }
            // Stored in `idat` or by reference, or in pieces: not rewritten in place (refused, never passed on).
            guard location.method == 0, location.extents.count == 1 else { throw .unsupportedFormat }
            result += location.extents
        }
        return result
    }

    private static func exifItemIDs(_ iinf: Box, _ bytes: [UInt8]) throws(ImageError) -> Set<UInt32> {
        var cursor = Cursor(bytes: bytes, range: iinf.payload)
        let version = try cursor.u8()
        try cursor.skip(3)
        _ = version == 0 ? UInt32(try cursor.u16()) : try cursor.u32()
        var reader = BoxReader(bytes: bytes, range: cursor.position..<iinf.payload.upperBound)
        var ids: Set<UInt32> = []
        while let infe = try reader.next() {
            guard infe.type == "infe" else { continue }
            var entry = Cursor(bytes: bytes, range: infe.payload)
            let entryVersion = try entry.u8()
            try entry.skip(3)
            guard entryVersion >= 2 else { continue }  // versions 0 and 1 name no item type
            let id = entryVersion == 2 ? UInt32(try entry.u16()) : try entry.u32()
            try entry.skip(2)  // protection index
            if try entry.fourCC() == "Exif" { ids.insert(id) }
            guard ids.count <= 64 else { throw .corrupt("HEIF: too many EXIF items") }
        }
        return ids
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
                guard !overflow, length > 0, start <= UInt64(Int.max) - length else {
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
            guard position + 8 <= range.upperBound else { return nil }
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

        mutating func fourCC() throws(ImageError) -> String {
            let start = position
            try skip(4)
            return String(decoding: bytes[start..<(start + 4)], as: UTF8.self)
        }
    }
}
