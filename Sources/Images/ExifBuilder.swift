package import Foundation

/// Writes a little-endian TIFF payload (for an APP1 EXIF segment or a PNG eXIf chunk) holding the fields set:
/// IFD0 (Make, Model, Orientation, DateTime), an Exif IFD (DateTimeOriginal, OffsetTimeOriginal), a GPS IFD,
/// and IFD1 with a JPEG thumbnail. For tests and the sample library.
package struct ExifBuilder: Sendable {
    package var orientation: Int?
    /// Written as local time at `timeZoneOffsetSeconds` (UTC when nil), with OffsetTimeOriginal when set.
    package var captureDate: Date?
    package var timeZoneOffsetSeconds: Int?
    package var location: GPSLocation?
    package var thumbnailJPEG: [UInt8]?
    package var make: String?
    package var model: String?
    /// Written in an Apple MakerNote (tag 0x11), as an iPhone writes a Live Photo's still.
    package var appleContentIdentifier: String?

    package init() {}

    private struct Entry {
        var tag: UInt16
        var type: UInt16
        var count: Int
        var value: [UInt8]
    }

    package func tiffPayload() -> [UInt8] {
        typealias Tag = ExifFields.Tag
        var ifd0: [Entry] = []
        var exif: [Entry] = []
        var gps: [Entry] = []
        var ifd1: [Entry] = []
        if let make { ifd0.append(ascii(Tag.make, make)) }
        if let model { ifd0.append(ascii(Tag.model, model)) }
        if let orientation { ifd0.append(Entry(tag: Tag.orientation, type: 3, count: 1, value: le16(orientation))) }
        if let captureDate {
            let text = ExifDate.format(captureDate, offsetSeconds: timeZoneOffsetSeconds ?? 0)
            ifd0.append(ascii(Tag.dateTime, text))
            exif.append(ascii(Tag.dateTimeOriginal, text))
            if let offset = timeZoneOffsetSeconds {
                exif.append(ascii(Tag.offsetTime, ExifDate.formatOffset(offset)))
                exif.append(ascii(Tag.offsetTimeOriginal, ExifDate.formatOffset(offset)))
            }
        }
        if let appleContentIdentifier {
            let text = Array(appleContentIdentifier.utf8) + [0]
            // "Apple iOS\0", version 1, big-endian; one entry; no next IFD; the text after it (offsets count
            // from the note's start).
            var note = Array("Apple iOS\0".utf8) + [0, 1] + Array("MM".utf8) + [0, 1]
            note += [0x00, 0x11, 0x00, 0x02] + be32(text.count) + be32(text.count > 4 ? 32 : 0)
            note += [0, 0, 0, 0] + (text.count > 4 ? text : [])
            if text.count <= 4 { note.replaceSubrange(24..<24 + text.count, with: text) }
            exif.append(Entry(tag: Tag.makerNote, type: 7, count: note.count, value: note))
        }
        if let location {
            gps.append(Entry(tag: 0, type: 1, count: 4, value: [2, 3, 0, 0]))
            gps.append(ascii(1, location.latitude < 0 ? "S" : "N"))
            gps.append(Entry(tag: 2, type: 5, count: 3, value: dms(abs(location.latitude))))
            gps.append(ascii(3, location.longitude < 0 ? "W" : "E"))
            gps.append(Entry(tag: 4, type: 5, count: 3, value: dms(abs(location.longitude))))
            if let altitude = location.altitude {
                gps.append(Entry(tag: 5, type: 1, count: 1, value: [altitude < 0 ? 1 : 0]))
                gps.append(Entry(tag: 6, type: 5, count: 1, value: rational(abs(altitude), denominator: 1000)))
            }
        }
        // Sizes do not depend on pointer values, so the layout is computed first, with placeholders.
        if !exif.isEmpty { ifd0.append(Entry(tag: Tag.exifIFD, type: 4, count: 1, value: le32(0))) }
        if !gps.isEmpty { ifd0.append(Entry(tag: Tag.gpsIFD, type: 4, count: 1, value: le32(0))) }
        if let thumbnailJPEG {
            ifd1.append(Entry(tag: Tag.compression, type: 3, count: 1, value: le16(6)))
            ifd1.append(Entry(tag: Tag.thumbnailOffset, type: 4, count: 1, value: le32(0)))
            ifd1.append(Entry(tag: Tag.thumbnailLength, type: 4, count: 1, value: le32(thumbnailJPEG.count)))
        }
        let ifd0At = 8
        let exifAt = ifd0At + size(ifd0)
        let gpsAt = exifAt + (exif.isEmpty ? 0 : size(exif))
        let ifd1At = gpsAt + (gps.isEmpty ? 0 : size(gps))
        let thumbnailAt = ifd1At + (ifd1.isEmpty ? 0 : size(ifd1))
        for i in ifd0.indices {
            if ifd0[i].tag == Tag.exifIFD { ifd0[i].value = le32(exifAt) }
            if ifd0[i].tag == Tag.gpsIFD { ifd0[i].value = le32(gpsAt) }
        }
        for i in ifd1.indices where ifd1[i].tag == Tag.thumbnailOffset { ifd1[i].value = le32(thumbnailAt) }
        var out: [UInt8] = [0x49, 0x49, 42, 0] + le32(ifd0At)
        out += block(ifd0, at: ifd0At, next: ifd1.isEmpty ? 0 : ifd1At)
        if !exif.isEmpty { out += block(exif, at: exifAt, next: 0) }
        if !gps.isEmpty { out += block(gps, at: gpsAt, next: 0) }
        if !ifd1.isEmpty { out += block(ifd1, at: ifd1At, next: 0) }
        if let thumbnailJPEG { out += thumbnailJPEG }
        return out
    }

    private func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    private func ascii(_ tag: UInt16, _ text: String) -> Entry {
        let bytes = Array(text.utf8) + [0]
        return Entry(tag: tag, type: 2, count: bytes.count, value: bytes)
    }

    private func size(_ entries: [Entry]) -> Int {
        6 + entries.count * 12 + entries.reduce(0) { $0 + ($1.value.count > 4 ? ($1.value.count + 1) & ~1 : 0) }
    }

    private func block(_ entries: [Entry], at offset: Int, next: Int) -> [UInt8] {
        let sorted = entries.sorted { $0.tag < $1.tag }
        var head = le16(sorted.count)
        var data: [UInt8] = []
        var dataAt = offset + 6 + sorted.count * 12
        for entry in sorted {
            head += le16(Int(entry.tag)) + le16(Int(entry.type)) + le32(entry.count)
            if entry.value.count <= 4 {
                head += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
            } else {
                head += le32(dataAt)
                data += entry.value
                if entry.value.count % 2 == 1 { data.append(0) }
                dataAt = offset + 6 + sorted.count * 12 + data.count
            }
        }
        return head + le32(next) + data
    }

    private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    private func le32(_ v: Int) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)]
    }

    private func rational(_ value: Double, denominator: Int) -> [UInt8] {
        le32(Int((value * Double(denominator)).rounded())) + le32(denominator)
    }

    /// Degrees, minutes and seconds (to 1/10000 s).
    private func dms(_ value: Double) -> [UInt8] {
        let degrees = value.rounded(.down)
        let minutes = ((value - degrees) * 60).rounded(.down)
        let seconds = (value - degrees - minutes / 60) * 3600
        return rational(degrees, denominator: 1) + rational(minutes, denominator: 1)
            + rational(seconds, denominator: 10_000)
    }
}
