/// The marker segments of a JPEG file's header, walked with every length checked against the bytes present.
struct JPEGHeader {
    struct Segment {
        var marker: UInt8
        /// The 0xFF of the marker.
        var start: Int
        /// The first byte after the 2-byte length.
        var dataStart: Int
        /// One past the segment's last byte.
        var end: Int
    }

    var segments: [Segment] = []
    var width: Int?
    var height: Int?
    /// Where the first scan's SOS marker starts (when the walk went through to it).
    var scanStart: Int?

    enum Scan {
        case complete(JPEGHeader)
        /// The walk needs the file's first `byteCount` bytes.
        case needMore(byteCount: Int)
    }

    /// Walks from SOI through the frame header (SOF), or on to the first scan (SOS) when `throughScan`.
    /// A segment that extends past `head` asks for more; a missing SOF before SOS or EOI is `.corrupt`.
    static func scan(_ head: [UInt8], throughScan: Bool) throws(ImageError) -> Scan {
        guard head.count >= 2 else { return .needMore(byteCount: 4) }
        guard head[0] == 0xFF, head[1] == 0xD8 else { throw .corrupt("JPEG: no SOI marker") }
        var header = JPEGHeader()
        var position = 2
        while true {
            guard position + 2 <= head.count else { return .needMore(byteCount: position + 4) }
            guard head[position] == 0xFF else { throw .corrupt("JPEG: no marker at byte \(position)") }
            let marker = head[position + 1]
            if marker == 0xFF {
                position += 1  // fill byte
                continue
            }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {
                position += 2
                continue
            }
            if marker == 0xD9 || marker == 0xD8 { throw .corrupt("JPEG: no image before marker \(marker)") }
            guard position + 4 <= head.count else { return .needMore(byteCount: position + 4) }
            let length = Int(head[position + 2]) << 8 | Int(head[position + 3])
            guard length >= 2 else { throw .corrupt("JPEG: segment length \(length)") }
            let segment = Segment(marker: marker, start: position, dataStart: position + 4, end: position + 2 + length)
            if marker == 0xDA {
                guard header.width != nil else { throw .corrupt("JPEG: scan before frame header") }
                header.scanStart = position
                return .complete(header)
            }
            guard segment.end <= head.count else { return .needMore(byteCount: segment.end) }
            header.segments.append(segment)
            if Self.isFrameHeader(marker) {
                guard length >= 8 else { throw .corrupt("JPEG: short frame header") }
                let height = Int(head[position + 5]) << 8 | Int(head[position + 6])
                let width = Int(head[position + 7]) << 8 | Int(head[position + 8])
                guard width > 0, height > 0 else { throw .corrupt("JPEG: frame of \(width)x\(height)") }
                header.width = width
                header.height = height
                if !throughScan { return .complete(header) }
            }
            position = segment.end
        }
    }

    static func isFrameHeader(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    static let exifIdentifier: [UInt8] = Array("Exif".utf8) + [0, 0]
    static let xmpIdentifier: [UInt8] = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]

    /// The TIFF payload's range in the file of an APP1 EXIF segment, or nil when the segment is not one.
    static func exifPayload(_ segment: Segment, in bytes: [UInt8]) -> Range<Int>? {
        guard segment.marker == 0xE1, segment.end - segment.dataStart >= exifIdentifier.count,
            bytes[segment.dataStart..<(segment.dataStart + exifIdentifier.count)].elementsEqual(exifIdentifier)
        else { return nil }
        return (segment.dataStart + exifIdentifier.count)..<segment.end
    }

    /// Whether an APP1 segment holds an XMP packet.
    static func isXMP(_ segment: Segment, in bytes: [UInt8]) -> Bool {
        segment.marker == 0xE1 && segment.end - segment.dataStart >= xmpIdentifier.count
            && bytes[segment.dataStart..<(segment.dataStart + xmpIdentifier.count)].elementsEqual(xmpIdentifier)
    }
}
