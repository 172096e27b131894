/// The still-image container formats this module reads.
package enum ImageFormat: String, Sendable {
    case jpeg, png, heif

    /// How many leading bytes `sniff` looks at: an `ftyp` box's major brand, minor version and four compatible
    /// brands.
    package static let sniffLength = 32

    /// The format named by a file's first bytes (at least 12 are needed to recognise HEIF, 8 for PNG, 3 for
    /// JPEG), or nil when they are none of these. Looks only at magic numbers: a match does not mean the rest of
    /// the file is valid.
    package static func sniff(_ head: some Collection<UInt8>) -> ImageFormat? {
        let bytes = Array(head.prefix(sniffLength))
        if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
        if bytes.count >= 8, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return .png
        }
        if bytes.count >= 12, bytes[4..<8].elementsEqual(Array("ftyp".utf8)) {
            let size = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
            var brands = [Array(bytes[8..<12])]
            // Compatible brands follow the major brand and the minor version.
            var offset = 16
            while offset + 4 <= min(size, bytes.count) {
                brands.append(Array(bytes[offset..<offset + 4]))
                offset += 4
            }
            let heifBrands: Set<String> = ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"]
            if brands.contains(where: { heifBrands.contains(String(decoding: $0, as: UTF8.self)) }) { return .heif }
        }
        return nil
    }
}
