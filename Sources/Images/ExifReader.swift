/// The EXIF fields this module uses, read from a TIFF payload, and where the GPS data sits (for stripping).
struct ExifFields {
    var orientation: Int?
    var dateTimeOriginal: String?
    var offsetTimeOriginal: String?
    var dateTime: String?
    var offsetTime: String?
    var location: GPSLocation?
    /// IFD1's JPEG thumbnail, relative to the TIFF header; only when it lies in the payload and starts FFD8.
    var thumbnail: Range<Int>?
    var ifd0: TIFFReader.IFD
    var gpsPointer: TIFFReader.Entry?
    var gpsIFD: TIFFReader.IFD?
    /// The IFDs read other than IFD0 and the GPS IFD (the Exif IFD, the chain after IFD0).
    var otherIFDs: [TIFFReader.IFD] = []
    /// The Live Photo identifier in an Apple MakerNote (its tag 0x11), validated; nil without one.
    var contentIdentifier: String?

    enum Tag {
        static let make: UInt16 = 0x010F
        static let model: UInt16 = 0x0110
        static let orientation: UInt16 = 0x0112
        static let dateTime: UInt16 = 0x0132
        static let exifIFD: UInt16 = 0x8769
        static let gpsIFD: UInt16 = 0x8825
        static let dateTimeOriginal: UInt16 = 0x9003
        static let offsetTime: UInt16 = 0x9010
        static let offsetTimeOriginal: UInt16 = 0x9011
        static let compression: UInt16 = 0x0103
        static let thumbnailOffset: UInt16 = 0x0201
        static let thumbnailLength: UInt16 = 0x0202
        static let makerNote: UInt16 = 0x927C
    }

    /// Reads IFD0, the Exif and GPS IFDs and the IFD chain after IFD0, refusing loops (an IFD visited twice),
    /// more than `TIFFReader.maxIFDs` IFDs and pointers outside the payload.
    init(_ reader: TIFFReader) throws(ImageError) {
        var visited: Set<Int> = []
        func visit(_ offset: Int) throws(ImageError) -> TIFFReader.IFD {
            guard offset >= 8, offset < reader.length else { throw .corrupt("EXIF: IFD offset \(offset) outside") }
            guard visited.insert(offset).inserted else { throw .corrupt("EXIF: IFD loop at offset \(offset)") }
            guard visited.count <= TIFFReader.maxIFDs else { throw .corrupt("EXIF: more than 16 IFDs") }
            return try reader.readIFD(at: offset)
        }
        ifd0 = try visit(reader.firstIFDOffset)
        if let entry = ifd0.entry(Tag.orientation) {
            let value = try reader.integer(entry)
            orientation = (1...8).contains(value) ? value : nil
        }
        if let entry = ifd0.entry(Tag.dateTime) { dateTime = try reader.ascii(entry) }
        if let entry = ifd0.entry(Tag.exifIFD) {
            let exif = try visit(try reader.integer(entry))
            otherIFDs.append(exif)
            if let entry = exif.entry(Tag.dateTimeOriginal) { dateTimeOriginal = try reader.ascii(entry) }
            if let entry = exif.entry(Tag.offsetTimeOriginal) { offsetTimeOriginal = try reader.ascii(entry) }
            if let entry = exif.entry(Tag.offsetTime) { offsetTime = try reader.ascii(entry) }
            if let entry = exif.entry(Tag.makerNote), let value = entry.value {
                contentIdentifier = Self.appleContentIdentifier(
                    reader.bytes[(reader.base + value.lowerBound)..<(reader.base + value.upperBound)])
            }
        }
        if let entry = ifd0.entry(Tag.gpsIFD) {
            gpsPointer = entry
            let gps = try visit(try reader.integer(entry))
            gpsIFD = gps
            location = try Self.location(gps, reader)
        }
        var next = ifd0.nextOffset
        var isFirst = true
        while next != 0 {
            let ifd = try visit(next)
            otherIFDs.append(ifd)
            if isFirst, let offsetEntry = ifd.entry(Tag.thumbnailOffset),
                let lengthEntry = ifd.entry(Tag.thumbnailLength)
            {
                let offset = try reader.integer(offsetEntry)
                let length = try reader.integer(lengthEntry)
                if length >= 2, reader.contains(offset, count: length),
                    reader.bytes[reader.base + offset] == 0xFF, reader.bytes[reader.base + offset + 1] == 0xD8
                {
                    thumbnail = offset..<(offset + length)
                }
            }
            isFirst = false
            next = ifd.nextOffset
        }
    }

    /// The content identifier in an Apple MakerNote: `Apple iOS\0`, a version, `MM`, then a big-endian IFD whose
    /// offsets count from the note's start; tag 0x11 is the identifier (ASCII). Nil for another maker's note, or
    /// one whose entry is malformed or lies outside the note (a note is a stranger's bytes: nothing is trusted).
    static func appleContentIdentifier(_ note: ArraySlice<UInt8>) -> String? {
        let bytes = Array(note)
        guard bytes.count >= 16, bytes.starts(with: Array("Apple iOS\0".utf8)), bytes[12] == 0x4D, bytes[13] == 0x4D
        else { return nil }
        func u16(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
        func u32(_ at: Int) -> Int { u16(at) << 16 | u16(at + 2) }
        let count = u16(14)
        guard count <= TIFFReader.maxEntriesPerIFD, 16 + count * 12 <= bytes.count else { return nil }
        for index in 0..<count {
            let entry = 16 + index * 12
            guard u16(entry) == 0x0011, u16(entry + 2) == 2 else { continue }
            let length = u32(entry + 4)
            let start = length <= 4 ? entry + 8 : u32(entry + 8)
            guard length >= 1, length <= ContentIdentifier.maxLength + 1, start >= 0, start <= bytes.count - length
            else { return nil }
            return ContentIdentifier.validated(String(decoding: bytes[start..<start + length], as: UTF8.self))
        }
        return nil
    }

    /// The GPS IFD's position; nil when latitude or longitude is missing or out of range.
    static func location(_ gps: TIFFReader.IFD, _ reader: TIFFReader) throws(ImageError) -> GPSLocation? {
        func degrees(_ tag: UInt16) throws(ImageError) -> Double? {
            guard let entry = gps.entry(tag) else { return nil }
            let parts = try reader.rationals(entry)
            guard parts.count >= 1, parts.allSatisfy({ $0 != nil }) else { return nil }
            let values = parts.map { $0! } + [0, 0]
            return values[0] + values[1] / 60 + values[2] / 3600
        }
        func reference(_ tag: UInt16) throws(ImageError) -> String? {
            guard let entry = gps.entry(tag) else { return nil }
            return try reader.ascii(entry).trimmingSpaces
        }
        guard var latitude = try degrees(2), var longitude = try degrees(4) else { return nil }
        switch try reference(1) {
        case "S": latitude = -latitude
        case "N", nil: break
        default: return nil
        }
        switch try reference(3) {
        case "W": longitude = -longitude
        case "E", nil: break
        default: return nil
        }
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
        var altitude: Double?
        if let entry = gps.entry(6), let value = try reader.rationals(entry).first, let value, value.isFinite {
            altitude = value
            if let refEntry = gps.entry(5), try reader.integer(refEntry) == 1 { altitude = -value }
        }
        return GPSLocation(latitude: latitude, longitude: longitude, altitude: altitude)
    }
}

extension String {
    var trimmingSpaces: String {
        String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
