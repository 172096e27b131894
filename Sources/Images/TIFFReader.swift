/// A bounds-checked reader of a TIFF structure (an EXIF payload) inside a byte array. Every offset, count and
/// size is checked against the payload before use, with arithmetic that cannot overflow; hostile input throws
/// `.corrupt`, never traps, and nothing is allocated from a declared count the bytes cannot hold.
struct TIFFReader {
    /// Entry types and their sizes in bytes.
    static let typeSizes: [UInt16: Int] = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8]
    static let maxEntriesPerIFD = 1000
    static let maxIFDs = 16

    let bytes: [UInt8]
    /// Where the TIFF header starts in `bytes`; offsets in the structure are relative to it.
    let base: Int
    /// The payload's length.
    let length: Int
    let littleEndian: Bool
    let firstIFDOffset: Int

    struct Entry {
        var tag: UInt16
        var type: UInt16
        var count: Int
        /// Where the 12-byte entry starts (relative to the TIFF header).
        var entryOffset: Int
        /// Where the value starts and how long it is; nil when it lies outside the payload or its type is unknown.
        var value: Range<Int>?
    }

    struct IFD {
        var offset: Int
        var entries: [Entry]
        var nextOffset: Int
        /// The count, the entries and the next-IFD pointer (when present).
        var byteRange: Range<Int>

        /// The entry with this tag; of a tag written twice (malformed), the last, as exiftool reads it (found by
        /// `make fuzz` with `ExifDifferentialTests`: a GPS IFD with two longitude references).
        func entry(_ tag: UInt16) -> Entry? { entries.last { $0.tag == tag } }
    }

    init(bytes: [UInt8], range: Range<Int>) throws(ImageError) {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count, range.count >= 8 else {
            throw .corrupt("EXIF: TIFF header truncated")
        }
        self.bytes = bytes
        self.base = range.lowerBound
        self.length = range.count
        switch (bytes[base], bytes[base + 1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: throw .corrupt("EXIF: no TIFF byte order mark")
        }
        let le = littleEndian
        let b = bytes
        let at = base
        func u16(_ o: Int) -> Int {
            le ? Int(b[at + o]) | Int(b[at + o + 1]) << 8 : Int(b[at + o]) << 8 | Int(b[at + o + 1])
        }
        guard u16(2) == 42 else { throw .corrupt("EXIF: bad TIFF magic") }
        firstIFDOffset =
            le
            ? Int(b[at + 4]) | Int(b[at + 5]) << 8 | Int(b[at + 6]) << 16 | Int(b[at + 7]) << 24
            : Int(b[at + 4]) << 24 | Int(b[at + 5]) << 16 | Int(b[at + 6]) << 8 | Int(b[at + 7])
    }

    func contains(_ offset: Int, count: Int) -> Bool {
        offset >= 0 && count >= 0 && offset <= length && count <= length - offset
    }

    func u16(_ offset: Int) throws(ImageError) -> Int {
        guard contains(offset, count: 2) else { throw .corrupt("EXIF: offset \(offset) outside the data") }
        let p = base + offset
        return littleEndian ? Int(bytes[p]) | Int(bytes[p + 1]) << 8 : Int(bytes[p]) << 8 | Int(bytes[p + 1])
    }

    func u32(_ offset: Int) throws(ImageError) -> Int {
        guard contains(offset, count: 4) else { throw .corrupt("EXIF: offset \(offset) outside the data") }
        let p = base + offset
        let (a, b, c, d) = (Int(bytes[p]), Int(bytes[p + 1]), Int(bytes[p + 2]), Int(bytes[p + 3]))
        return littleEndian ? a | b << 8 | c << 16 | d << 24 : a << 24 | b << 16 | c << 8 | d
    }

    func readIFD(at offset: Int) throws(ImageError) -> IFD {
        let count = try u16(offset)
        guard count <= Self.maxEntriesPerIFD else { throw .corrupt("EXIF: IFD with \(count) entries") }
        guard contains(offset + 2, count: count * 12) else { throw .corrupt("EXIF: IFD entries outside the data") }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for index in 0..<count {
            let entryOffset = offset + 2 + index * 12
            let tag = UInt16(try u16(entryOffset))
            let type = UInt16(try u16(entryOffset + 2))
            let declared = try u32(entryOffset + 4)
            var value: Range<Int>?
            if let size = Self.typeSizes[type] {
                // declared < 2^32 and size <= 8: the product fits in Int on 64-bit platforms.
                let (byteCount, overflow) = declared.multipliedReportingOverflow(by: size)
                if !overflow {
                    if byteCount <= 4 {
                        value = (entryOffset + 8)..<(entryOffset + 8 + byteCount)
                    } else {
                        let valueOffset = try u32(entryOffset + 8)
                        if contains(valueOffset, count: byteCount) { value = valueOffset..<(valueOffset + byteCount) }
                    }
                }
            }
            entries.append(Entry(tag: tag, type: type, count: declared, entryOffset: entryOffset, value: value))
        }
        let nextAt = offset + 2 + count * 12
        let next = contains(nextAt, count: 4) ? try u32(nextAt) : 0
        let end = contains(nextAt, count: 4) ? nextAt + 4 : nextAt
        return IFD(offset: offset, entries: entries, nextOffset: next, byteRange: offset..<end)
    }

    /// The value of a SHORT or LONG entry with count 1.
    func integer(_ entry: Entry) throws(ImageError) -> Int {
        guard let value = entry.value, entry.count >= 1 else {
            throw .corrupt("EXIF: tag \(entry.tag) outside the data")
        }
        switch entry.type {
        case 3: return try u16(value.lowerBound)
        case 4, 9: return try u32(value.lowerBound)
        case 1, 7: return Int(bytes[base + value.lowerBound])
        default: throw .corrupt("EXIF: tag \(entry.tag) has type \(entry.type), not an integer")
        }
    }

    /// The text of an ASCII entry, up to its first NUL.
    func ascii(_ entry: Entry) throws(ImageError) -> String {
        guard let value = entry.value else { throw .corrupt("EXIF: tag \(entry.tag) outside the data") }
        guard entry.type == 2 || entry.type == 7 else { throw .corrupt("EXIF: tag \(entry.tag) is not text") }
        let slice = bytes[(base + value.lowerBound)..<(base + value.upperBound)]
        return String(decoding: slice.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The values of a RATIONAL or SRATIONAL entry; nil for a zero denominator.
    func rationals(_ entry: Entry) throws(ImageError) -> [Double?] {
        guard let value = entry.value else { throw .corrupt("EXIF: tag \(entry.tag) outside the data") }
        guard entry.type == 5 || entry.type == 10 else { throw .corrupt("EXIF: tag \(entry.tag) is not rational") }
        var result: [Double?] = []
        for index in 0..<min(entry.count, 16) {
            let at = value.lowerBound + index * 8
            var numerator = Double(try u32(at))
            var denominator = Double(try u32(at + 4))
            if entry.type == 10 {
                numerator = Double(Int32(truncatingIfNeeded: try u32(at)))
                denominator = Double(Int32(truncatingIfNeeded: try u32(at + 4)))
            }
            result.append(denominator == 0 ? nil : numerator / denominator)
        }
        return result
    }
}
