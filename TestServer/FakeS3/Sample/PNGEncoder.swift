import CZlib
import Foundation

/// Writes 8-bit RGB PNG images (zlib-compressed), enough for sample photo libraries.
enum PNGEncoder {
    /// Encodes `pixels` (row-major RGB triples, `width * height * 3` bytes).
    /// - Precondition: `pixels.count == width * height * 3`, both dimensions ≥ 1.
    static func encode(width: Int, height: Int, pixels: [UInt8]) -> Data {
        precondition(width >= 1 && height >= 1 && pixels.count == width * height * 3)
        var raw = [UInt8]()
        raw.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            raw.append(0)  // filter: none
            raw.append(contentsOf: pixels[(y * width * 3)..<((y + 1) * width * 3)])
        }
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var ihdr = [UInt8]()
        ihdr += bigEndian(UInt32(width))
        ihdr += bigEndian(UInt32(height))
        ihdr += [8, 2, 0, 0, 0]  // 8-bit, truecolour, deflate, adaptive filtering, no interlace
        chunk("IHDR", ihdr, into: &png)
        chunk("IDAT", compress(raw), into: &png)
        chunk("IEND", [], into: &png)
        return png
    }

    private static func compress(_ input: [UInt8]) -> [UInt8] {
        var capacity = czlib_compress_bound(input.count)
        var out = [UInt8](repeating: 0, count: capacity)
        let rc = out.withUnsafeMutableBytes { o in
            input.withUnsafeBytes { i in czlib_compress(o.baseAddress, &capacity, i.baseAddress, i.count, 6) }
        }
        precondition(rc == 0, "zlib compress2 failed (\(rc))")
        return Array(out.prefix(capacity))
    }

    private static func chunk(_ type: String, _ data: [UInt8], into png: inout Data) {
        let typed = Array(type.utf8) + data
        png.append(contentsOf: bigEndian(UInt32(data.count)))
        png.append(contentsOf: typed)
        png.append(contentsOf: bigEndian(typed.withUnsafeBytes { czlib_crc32(0, $0.baseAddress, $0.count) }))
    }

    private static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }
}
