/// The chunks of a PNG file's header (signature through the first IDAT), walked with every length checked.
struct PNGHeader {
    struct Chunk {
        var type: String
        /// The chunk's length field.
        var start: Int
        var data: Range<Int>
        /// One past the CRC.
        var end: Int
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    var chunks: [Chunk] = []
    var width = 0
    var height = 0
    var interlaced = false

    enum Scan {
        case complete(PNGHeader)
        case needMore(byteCount: Int)
    }

    /// Walks the chunks before the image data; IHDR must come first. Chunks other than IHDR and eXIf need only
    /// their length and type present (their data is skipped).
    static func scan(_ head: [UInt8]) throws(ImageError) -> Scan {
        guard head.count >= 8 else { return .needMore(byteCount: 8 + 25) }
        guard head[0..<8].elementsEqual(signature) else { throw .corrupt("PNG: bad signature") }
        var header = PNGHeader()
        var position = 8
        while true {
            guard position + 8 <= head.count else { return .needMore(byteCount: position + 8) }
            let length =
                Int(head[position]) << 24 | Int(head[position + 1]) << 16 | Int(head[position + 2]) << 8
                | Int(head[position + 3])
            guard length <= 0x7FFF_FFFF else { throw .corrupt("PNG: chunk length \(length)") }
            let type = String(decoding: head[(position + 4)..<(position + 8)], as: UTF8.self)
            let chunk = Chunk(
                type: type, start: position, data: (position + 8)..<(position + 8 + length),
                end: position + 12 + length)
            if header.chunks.isEmpty {
                guard type == "IHDR", length == 13 else { throw .corrupt("PNG: IHDR is not the first chunk") }
            } else if type == "IHDR" {
                throw .corrupt("PNG: a second IHDR")
            }
            if type == "IDAT" || type == "IEND" {
                guard !header.chunks.isEmpty else { throw .corrupt("PNG: no IHDR") }
                return .complete(header)
            }
            if type == "IHDR" || type == "eXIf" {
                guard chunk.end <= head.count else { return .needMore(byteCount: chunk.end) }
            }
            if type == "IHDR" {
                let d = position + 8
                func u32(_ at: Int) -> Int {
                    Int(head[at]) << 24 | Int(head[at + 1]) << 16 | Int(head[at + 2]) << 8 | Int(head[at + 3])
                }
                header.width = u32(d)
                header.height = u32(d + 4)
                header.interlaced = head[d + 12] != 0
                guard header.width > 0, header.height > 0, header.width <= 0x7FFF_FFFF,
                    header.height <= 0x7FFF_FFFF
                else { throw .corrupt("PNG: image of \(header.width)x\(header.height)") }
            }
            header.chunks.append(chunk)
            position = chunk.end
        }
    }

    /// The CRC-32 (ISO 3309) PNG puts after each chunk's type and data.
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        return crc ^ 0xFFFF_FFFF
    }

    static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// A whole chunk (length, type, data, CRC).
    static func chunk(type: String, data: [UInt8]) -> [UInt8] {
        var out = bigEndian32(UInt32(data.count))
        out += Array(type.utf8) + data
        out += bigEndian32(crc32(out[4...]))
        return out
    }

    static func bigEndian32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }
}
