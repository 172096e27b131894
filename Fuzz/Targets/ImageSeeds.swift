import Foundation
import Images

/// The image targets' seeds: small JPEG, PNG and HEIF files made in code by the module's own writers
/// (`ImageEncoder`, `ExifBuilder`), and what they do not write (big-endian TIFF, XMP packets, HEIF boxes laid out
/// by hand) made here. Built once per process: the HEIC encoder takes a while to start.
enum ImageSeeds {
    static let capture = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14 22:13:20 UTC
    static let tokyo = GPSLocation(latitude: 35.6586, longitude: 139.7454, altitude: 150)
    static let lima = GPSLocation(latitude: -12.0464, longitude: -77.0428, altitude: -20)

    /// JPEG files: every orientation, with and without date, GPS, thumbnail, XMP; one big-endian EXIF.
    static let jpegs: [[UInt8]] = {
        var files: [[UInt8]] = []
        let thumbnail = jpeg(picture(width: 8, height: 6, seed: 9), quality: 40)
        for orientation in 1...8 {
            var exif = ExifBuilder()
            exif.orientation = orientation
            if orientation % 2 == 0 { exif.captureDate = capture }
            if orientation % 3 == 0 { exif.timeZoneOffsetSeconds = orientation == 3 ? 3600 : -18_000 }
            if orientation <= 4 { exif.location = orientation % 2 == 0 ? tokyo : lima }
            if orientation == 5 { exif.thumbnailJPEG = thumbnail }
            if orientation == 7 { exif.make = "Maker" }
            let (w, h) = orientation >= 5 ? (12, 20) : (20, 12)
            files.append(jpeg(picture(width: w, height: h, seed: UInt64(orientation)), exif: exif.tiffPayload()))
        }
        files.append(jpeg(picture(width: 9, height: 7, seed: 11), quality: 30))
        files.append(jpeg(picture(width: 16, height: 16, seed: 12), exif: bigEndianTIFF()))
        files.append(withXMP(jpeg(picture(width: 16, height: 8, seed: 13), exif: gpsOnly(tokyo))))
        return files.filter { !$0.isEmpty }
    }()

    /// PNG files: plain, with eXIf, with an XMP iTXt chunk, interlaced.
    static let pngs: [[UInt8]] = {
        var exif = ExifBuilder()
        exif.orientation = 6
        exif.captureDate = capture
        exif.location = lima
        let image = picture(width: 6, height: 4, seed: 21)
        var files: [[UInt8]] = []
        files.append((try? ImageEncoder.png(image)) ?? [])
        files.append((try? ImageEncoder.png(image, exif: exif.tiffPayload())) ?? [])
        files.append((try? ImageEncoder.png(image, exif: bigEndianTIFF(), interlaced: true)) ?? [])
        if let plain = try? ImageEncoder.png(image) {
            // Signature (8) + IHDR (25), then the XMP.
            let text = Array("XML:com.adobe.xmp".utf8) + [0, 0, 0, 0, 0] + Array(xmpPacket.utf8)
            files.append(Array(plain[0..<33]) + pngChunk("iTXt", text) + Array(plain[33...]))
        }
        return files.filter { !$0.isEmpty }
    }()

    /// HEIC files from libheif's encoder (none when this libheif has no HEVC encoder).
    static let heics: [[UInt8]] = {
        guard ImageEncoder.canEncodeHEIF else { return [] }
        var exif = ExifBuilder()
        exif.captureDate = capture
        exif.timeZoneOffsetSeconds = 32_400
        exif.location = tokyo
        let image = picture(width: 16, height: 8, seed: 31)
        return [
            (try? ImageEncoder.heif(image, quality: 10, exif: exif.tiffPayload())) ?? [],
            (try? ImageEncoder.heif(image, quality: 10)) ?? [],
        ].filter { !$0.isEmpty }
    }()

    /// HEIF containers without an image: `ftyp`, a `meta` whose `iinf` and `iloc` locate an Exif item and an XMP
    /// item in `mdat`, in each `iloc` version and field size, and with 64-bit and to-the-end box sizes.
    static let heifContainers: [[UInt8]] = [
        heifContainer(ilocVersion: 0, fieldSize: 4, baseOffset: false, mdatSize: .plain),
        heifContainer(ilocVersion: 1, fieldSize: 8, baseOffset: true, mdatSize: .large),
        heifContainer(ilocVersion: 2, fieldSize: 4, baseOffset: true, mdatSize: .toEnd),
    ]

    // MARK: Pictures

    /// Gradients with a little noise: compresses like a photo, not like flat colour.
    static func picture(width: Int, height: Int, seed: UInt64) -> RGBAImage {
        var image = RGBAImage(width: width, height: height, fill: (red: 0, green: 0, blue: 0, alpha: 255))
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        for y in 0..<height {
            for x in 0..<width {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                let i = (y * width + x) * 4
                image.pixels[i] = UInt8(truncatingIfNeeded: x * 255 / max(1, width - 1)) ^ UInt8(state & 7)
                image.pixels[i + 1] = UInt8(truncatingIfNeeded: y * 255 / max(1, height - 1))
                image.pixels[i + 2] = UInt8(truncatingIfNeeded: state >> 40)
            }
        }
        return image
    }

    static func jpeg(_ image: RGBAImage, quality: Int = 50, exif: [UInt8]? = nil) -> [UInt8] {
        (try? ImageEncoder.jpeg(image, quality: quality, exif: exif)) ?? []
    }

    /// A GPS IFD and nothing else (little-endian).
    static func gpsOnly(_ location: GPSLocation) -> [UInt8] {
        var exif = ExifBuilder()
        exif.location = location
        return exif.tiffPayload()
    }

    // MARK: XMP

    static let xmpPacket = """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="35,39.516N" \
        exif:GPSLongitude='139,44.724E'><exif:GPSAltitude>150/1</exif:GPSAltitude><exif:GPSVersionID/>\
        </rdf:Description></rdf:RDF></x:xmpmeta>
        """

    /// The JPEG with an APP1 XMP segment inserted after its first segment (the EXIF, when it has one).
    static func withXMP(_ file: [UInt8]) -> [UInt8] {
        guard file.count > 6 else { return file }
        let payload = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0] + Array(xmpPacket.utf8)
        let segment = [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        let firstEnd = 4 + (Int(file[4]) << 8 | Int(file[5]))
        var out = file
        out.insert(contentsOf: segment, at: firstEnd)
        return out
    }

    // MARK: TIFF

    /// One IFD entry: its value bytes (already in the file's byte order), inline when 4 bytes or fewer.
    struct TIFFEntry {
        var tag: UInt16
        var type: UInt16
        var count: Int
        var value: [UInt8]
    }

    /// A big-endian ("MM") TIFF payload with types ExifBuilder does not write: IFD0 (Orientation as a LONG,
    /// DateTime), an Exif IFD (DateTimeOriginal, OffsetTimeOriginal), a GPS IFD (signed rationals, a SHORT
    /// altitude reference) and an IFD1 with a tiny JPEG thumbnail.
    static func bigEndianTIFF() -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF)] + u16(v) }
        func text(_ tag: UInt16, _ s: String) -> TIFFEntry {
            TIFFEntry(tag: tag, type: 2, count: s.utf8.count + 1, value: Array(s.utf8) + [0])
        }
        func rationals(_ tag: UInt16, signed: Bool, _ parts: [(Int, Int)]) -> TIFFEntry {
            let bytes = parts.flatMap { u32(Int(UInt32(truncatingIfNeeded: $0.0))) + u32($0.1) }
            return TIFFEntry(tag: tag, type: signed ? 10 : 5, count: parts.count, value: bytes)
        }
        let thumbnail = jpeg(picture(width: 4, height: 4, seed: 41), quality: 20)
        let ifd0 = [
            TIFFEntry(tag: 0x0112, type: 4, count: 1, value: u32(8)),
            text(0x0132, "2021:02:28 23:59:59"),
            TIFFEntry(tag: 0x8769, type: 4, count: 1, value: u32(0)),
            TIFFEntry(tag: 0x8825, type: 4, count: 1, value: u32(0)),
        ]
        let exif = [text(0x9003, "2020:02:29 12:00:00"), text(0x9011, "-03:30")]
        let gps = [
            text(1, "S"), rationals(2, signed: true, [(33, 1), (52, 1), (3_600, 100)]),
            text(3, "W"), rationals(4, signed: false, [(70, 1), (3_999, 100), (0, 1)]),
            TIFFEntry(tag: 5, type: 3, count: 1, value: u16(1)), rationals(6, signed: false, [(12_345, 10)]),
        ]
        let ifd1 = [
            TIFFEntry(tag: 0x0103, type: 3, count: 1, value: u16(6)),
            TIFFEntry(tag: 0x0201, type: 4, count: 1, value: u32(0)),
            TIFFEntry(tag: 0x0202, type: 4, count: 1, value: u32(thumbnail.count)),
        ]
        return tiff(
            bigEndian: true, ifd0: ifd0, exif: exif, gps: gps, ifd1: ifd1, thumbnail: thumbnail, u16: u16, u32: u32)
    }

    /// Lays out IFD0, the Exif and GPS IFDs, IFD1 and the thumbnail, filling in the pointers.
    static func tiff(
        bigEndian: Bool, ifd0: [TIFFEntry], exif: [TIFFEntry], gps: [TIFFEntry], ifd1: [TIFFEntry],
        thumbnail: [UInt8], u16: (Int) -> [UInt8], u32: (Int) -> [UInt8]
    ) -> [UInt8] {
        func size(_ entries: [TIFFEntry]) -> Int {
            6 + entries.count * 12 + entries.reduce(0) { $0 + ($1.value.count > 4 ? ($1.value.count + 1) & ~1 : 0) }
        }
        let ifd0At = 8
        let exifAt = ifd0At + size(ifd0)
        let gpsAt = exifAt + size(exif)
        let ifd1At = gpsAt + size(gps)
        let thumbnailAt = ifd1At + size(ifd1)
        func block(_ entries: [TIFFEntry], at offset: Int, next: Int) -> [UInt8] {
            var head = u16(entries.count)
            var data: [UInt8] = []
            for var entry in entries {
                switch entry.tag {
                case 0x8769 where offset == ifd0At: entry.value = u32(exifAt)
                case 0x8825 where offset == ifd0At: entry.value = u32(gpsAt)
                case 0x0201 where offset == ifd1At: entry.value = u32(thumbnailAt)
                default: break
                }
                head += u16(Int(entry.tag)) + u16(Int(entry.type)) + u32(entry.count)
                if entry.value.count <= 4 {
                    head += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
                } else {
                    head += u32(offset + 6 + entries.count * 12 + data.count)
                    data += entry.value
                    if entry.value.count % 2 == 1 { data.append(0) }
                }
            }
            return head + u32(next) + data
        }
        var out: [UInt8] = (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + u16(42) + u32(ifd0At)
        out += block(ifd0, at: ifd0At, next: ifd1At)
        out += block(exif, at: exifAt, next: 0)
        out += block(gps, at: gpsAt, next: 0)
        out += block(ifd1, at: ifd1At, next: 0)
        return out + thumbnail
    }

    // MARK: PNG

    /// A whole PNG chunk: length, type, data, CRC-32.
    static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in body {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return be32(UInt64(data.count)) + body + be32(UInt64(crc ^ 0xFFFF_FFFF))
    }

    // MARK: HEIF boxes

    enum BoxSize { case plain, large, toEnd }

    static func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be32(_ v: UInt64) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }
    static func be64(_ v: UInt64) -> [UInt8] { be32(v >> 32) + be32(v & 0xFFFF_FFFF) }

    static func box(_ type: String, _ payload: [UInt8], size: BoxSize = .plain) -> [UInt8] {
        switch size {
        case .plain: return be32(UInt64(8 + payload.count)) + Array(type.utf8) + payload
        case .large: return be32(1) + Array(type.utf8) + be64(UInt64(16 + payload.count)) + payload
        case .toEnd: return be32(0) + Array(type.utf8) + payload
        }
    }

    static func fullBox(_ type: String, version: UInt8, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version, 0, 0, 0] + payload)
    }

    /// ftyp, meta (hdlr, pitm, iinf with an `hvc1`, an `Exif` and an XMP `mime` item, iloc), mdat.
    static func heifContainer(ilocVersion: UInt8, fieldSize: Int, baseOffset: Bool, mdatSize: BoxSize) -> [UInt8] {
        var exifItem = [0, 0, 0, 6] + Array("Exif".utf8) + [0, 0]
        var exif = ExifBuilder()
        exif.captureDate = capture
        exif.location = tokyo
        exifItem += exif.tiffPayload()
        let xmpItem = Array(xmpPacket.utf8)
        let picture: [UInt8] = [0, 0, 0, 1, 0x26, 0x01]
        let ftyp = box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8))
        func infe(_ id: Int, _ type: String, _ extra: [UInt8] = []) -> [UInt8] {
            fullBox("infe", version: 2, be16(id) + [0, 0] + Array(type.utf8) + [0] + extra)
        }
        let iinf = fullBox(
            "iinf", version: 0,
            be16(3) + infe(1, "hvc1") + infe(2, "Exif")
                + infe(3, "mime", Array("application/rdf+xml".utf8) + [0]))
        func field(_ v: Int) -> [UInt8] { fieldSize == 8 ? be64(UInt64(v)) : be32(UInt64(v)) }
        /// The iloc for items whose data starts at `mdatData` (file offset).
        func iloc(_ mdatData: Int) -> [UInt8] {
            let base = baseOffset ? mdatData : 0
            let lengths = [picture.count, exifItem.count, xmpItem.count]
            var starts: [Int] = []
            var at = 0
            for length in lengths {
                starts.append(at)
                at += length
            }
            var body: [UInt8] = [UInt8(fieldSize << 4 | fieldSize), UInt8((baseOffset ? fieldSize : 0) << 4)]
            body += ilocVersion < 2 ? be16(3) : be32(3)
            for item in 0..<3 {
                body += ilocVersion < 2 ? be16(item + 1) : be32(UInt64(item + 1))
                if ilocVersion >= 1 { body += be16(0) }  // construction method 0
                body += be16(0)  // data reference index
                if baseOffset { body += field(base) }
                body += be16(1)
                body += field((baseOffset ? 0 : mdatData) + starts[item]) + field(lengths[item])
            }
            return fullBox("iloc", version: ilocVersion, body)
        }
        let hdlr = fullBox("hdlr", version: 0, [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
        let pitm = fullBox("pitm", version: 0, be16(1))
        let mdatHeader = mdatSize == .large ? 16 : 8
        // The iloc's size does not depend on its values: lay out once with zeros, then with the real offsets.
        let draft = fullBox("meta", version: 0, hdlr + pitm + iinf + iloc(0))
        let mdatData = ftyp.count + draft.count + mdatHeader
        let meta = fullBox("meta", version: 0, hdlr + pitm + iinf + iloc(mdatData))
        return ftyp + meta + box("mdat", picture + exifItem + xmpItem, size: mdatSize)
    }
}
