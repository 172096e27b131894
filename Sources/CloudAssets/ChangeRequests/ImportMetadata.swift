import AssetStore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What an import reads from a file: the same fields the bucket layout carries in `x-amz-meta-*`.
///
/// JPEG: pixel size from the frame header, orientation and the capture date (`DateTimeOriginal`, with
/// `OffsetTimeOriginal` when present, else read as UTC) from EXIF. PNG: pixel size from `IHDR`. HEIF, GIF, videos
/// and anything else: the media type from the file's signature or name, the date from the file system. A file
/// whose headers cannot be read is still imported, with what could be read.
struct ImportMetadata: Sendable, Hashable {
    var mediaType: MediaType
    var contentType: String
    var creationDate: Date
    var pixelWidth = 0
    var pixelHeight = 0
    /// EXIF orientation, 1…8.
    var orientation = 1

    /// Headers past this many bytes are not looked for (EXIF and the frame header sit at the start).
    static let headerLimit = 512 * 1024

    /// The metadata of a file whose first bytes (up to ``headerLimit``) are `head`.
    static func read(head: [UInt8], name: String, fileStatus: stat) -> ImportMetadata {
        let modified = Date(
            timeIntervalSince1970: Double(fileStatus.st_mtim.tv_sec) + Double(fileStatus.st_mtim.tv_nsec) / 1e9)
        var result = ImportMetadata(
            mediaType: MediaType(guessingFrom: name), contentType: contentType(forName: name),
            creationDate: modified)
        if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            result.mediaType = .image
            result.contentType = "image/jpeg"
            JPEGHeader(bytes: head).apply(to: &result)
        } else if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), head.count >= 24 {
            result.mediaType = .image
            result.contentType = "image/png"
            result.pixelWidth = Int(bigEndian32(head, 16))
            result.pixelHeight = Int(bigEndian32(head, 20))
        } else if head.count >= 12, Array(head[4..<8]) == Array("ftyp".utf8) {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            if ["heic", "heix", "mif1", "msf1", "avif"].contains(brand) {
                result.mediaType = .image
                result.contentType = brand == "avif" ? "image/avif" : "image/heic"
            } else {
                result.mediaType = .video
                result.contentType = brand == "qt  " ? "video/quicktime" : "video/mp4"
            }
        } else if head.starts(with: Array("GIF8".utf8)) {
            result.mediaType = .image
            result.contentType = "image/gif"
        }
        return result
    }

    static func contentType(forName name: String) -> String {
        switch name.split(separator: ".").last.map({ $0.lowercased() }) ?? "" {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "heic", "heif": "image/heic"
        case "gif": "image/gif"
        case "mov": "video/quicktime"
        case "mp4", "m4v": "video/mp4"
        default: "application/octet-stream"
        }
    }

    static func bigEndian32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
}

/// The parts of a JPEG's header an import needs: the frame's pixel size and EXIF's orientation and capture date.
struct JPEGHeader {
    let bytes: [UInt8]

    func apply(to metadata: inout ImportMetadata) {
        var at = 2
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { return }
            let marker = bytes[at + 1]
            if marker == 0xFF {
                at += 1  // fill byte
                continue
            }
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) {
                at += 2
                continue
            }
            if marker == 0xDA || marker == 0xD9 { return }  // image data starts: no header follows
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard length >= 2 else { return }
            let body = (at + 4)..<min(bytes.count, at + 2 + length)
            if Self.isFrameHeader(marker), body.count >= 5 {
                metadata.pixelHeight = Int(bytes[body.lowerBound + 1]) << 8 | Int(bytes[body.lowerBound + 2])
                metadata.pixelWidth = Int(bytes[body.lowerBound + 3]) << 8 | Int(bytes[body.lowerBound + 4])
            } else if marker == 0xE1, body.count > 6, Array(bytes[body.lowerBound..<body.lowerBound + 6]) == Self.exifID
            {
                EXIFReader(tiff: Array(bytes[(body.lowerBound + 6)..<body.upperBound])).apply(to: &metadata)
            }
            at += 2 + length
        }
    }

    /// SOF0…SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    static func isFrameHeader(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    static let exifID: [UInt8] = Array("Exif".utf8) + [0, 0]
}

/// Reads a TIFF structure (EXIF's container): IFD0's orientation and the EXIF IFD's capture date.
struct EXIFReader {
    let tiff: [UInt8]

    func apply(to metadata: inout ImportMetadata) {
        guard tiff.count >= 8 else { return }
        let little: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return little ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        /// The entries of the IFD at `offset`: tag → (type, count, value offset field position).
        func entries(_ offset: Int) -> [Int: (type: Int, count: Int, field: Int)] {
            guard let n = u16(offset), n < 1000 else { return [:] }
            var result: [Int: (Int, Int, Int)] = [:]
            for i in 0..<n {
                let entry = offset + 2 + i * 12
                guard let tag = u16(entry), let type = u16(entry + 2), let count = u32(entry + 4) else { break }
                result[tag] = (type, count, entry + 8)
            }
            return result
        }
        func ascii(_ entry: (type: Int, count: Int, field: Int)?) -> String? {
            guard let entry, entry.type == 2, entry.count > 0, entry.count < 64 else { return nil }
            let start = entry.count <= 4 ? entry.field : (u32(entry.field) ?? -1)
            guard start >= 0, start + entry.count <= tiff.count else { return nil }
            return String(decoding: tiff[start..<(start + entry.count)].prefix { $0 != 0 }, as: UTF8.self)
        }
        guard let ifd0 = u32(4) else { return }
        let main = entries(ifd0)
        if let orientation = main[0x0112], orientation.type == 3, let value = u16(orientation.field),
            (1...8).contains(value)
        {
            metadata.orientation = value
        }
        var date = ascii(main[0x0132])
        var offset: String?
        if let pointer = main[0x8769], let exifOffset = u32(pointer.field) {
            let exif = entries(exifOffset)
            date = ascii(exif[0x9003]) ?? ascii(exif[0x9004]) ?? date
            offset = ascii(exif[0x9011])
        }
        if let date, let parsed = Self.parseDate(date, offset: offset) { metadata.creationDate = parsed }
    }

    /// `YYYY:MM:DD HH:MM:SS` with an optional `±HH:MM` offset; UTC without one.
    static func parseDate(_ text: String, offset: String?) -> Date? {
        let digits = text.split(whereSeparator: { $0 == ":" || $0 == " " }).compactMap { Int($0) }
        guard digits.count == 6, digits[0] > 1800 else { return nil }
        var components = DateComponents()
        components.year = digits[0]
        components.month = digits[1]
        components.day = digits[2]
        components.hour = digits[3]
        components.minute = digits[4]
        components.second = digits[5]
        var seconds = 0
        if let offset, offset.count == 6, let sign = offset.first, sign == "+" || sign == "-" {
            let parts = offset.dropFirst().split(separator: ":").compactMap { Int($0) }
            if parts.count == 2 { seconds = (parts[0] * 3600 + parts[1] * 60) * (sign == "-" ? -1 : 1) }
        }
        components.timeZone = TimeZone(secondsFromGMT: seconds)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = components.timeZone!
        return calendar.date(from: components)
    }
}
