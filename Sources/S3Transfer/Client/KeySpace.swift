/// Arithmetic on S3's key order (keys compare by their UTF-8 bytes), for splitting a listing into ranges that
/// can be listed at once.
///
/// A key is read as a number: from the first byte where two keys differ, nine digits in base 95, one per byte,
/// each byte clamped to printable ASCII (`0x20`…`0x7E`; a key that ends early counts as spaces). Clamping keeps
/// the order (a larger key never maps to a smaller number), and every split point is made of printable ASCII
/// after a shared prefix, so it is valid UTF-8 and a valid `start-after`.
package enum KeySpace {
    private static let digitCount = 9
    private static let base: UInt64 = 95
    private static let lowest: UInt8 = 0x20
    private static let highest: UInt8 = 0x7E

    /// A key strictly between `lower` and `upper`, near the middle of the key space between them.
    ///
    /// - Parameters:
    ///   - lower: The lower end (exclusive).
    ///   - upper: The upper end (exclusive); `nil` for the end of the keys that start with `prefix`.
    ///   - prefix: The prefix every key of the range starts with (`lower` included).
    /// - Returns: The split point, or `nil` when there is no room between the two (they differ only in their
    ///   last digits, or only above printable ASCII).
    package static func midpoint(_ lower: String, _ upper: String?, prefix: String) -> String? {
        let a = Array(lower.utf8)
        var start: Int
        var b: [UInt8]?
        if let upper {
            let bytes = Array(upper.utf8)
            start = zip(a, bytes).prefix { $0 == $1 }.count
            b = bytes
        } else {
            start = prefix.utf8.count
        }
        // Split only on a character boundary: the digits replace whole characters.
        while start > 0, start < a.count, a[start] & 0xC0 == 0x80 { start -= 1 }
        let low = number(a, from: start)
        let high = b.map { number($0, from: start) } ?? maximum
        guard high > low + 1 else { return nil }
        let middle = low + (high - low) / 2
        var bytes = Array(a[0..<start])
        bytes += digits(of: middle)
        guard a.lexicographicallyPrecedes(bytes) else { return nil }
        if let b, !bytes.lexicographicallyPrecedes(b) { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Where `key` lies between `lower` and `upper` in the key space after `prefix`, as a fraction of the whole
    /// space: the width of a range, for choosing the widest one to split. `nil` bounds are the space's ends.
    package static func width(from lower: String?, to upper: String?, prefix: String) -> Double {
        let start = prefix.utf8.count
        let low = lower.map { fraction(Array($0.utf8), from: start) } ?? 0
        let high = upper.map { fraction(Array($0.utf8), from: start) } ?? 1
        return max(0, high - low)
    }

    private static var maximum: UInt64 { (0..<digitCount).reduce(UInt64(0)) { n, _ in n * base + base - 1 } }

    private static func digit(_ bytes: [UInt8], _ index: Int) -> UInt64 {
        guard index < bytes.count else { return 0 }
        return UInt64(min(max(bytes[index], lowest), highest) - lowest)
    }

    private static func number(_ bytes: [UInt8], from start: Int) -> UInt64 {
        (0..<digitCount).reduce(UInt64(0)) { n, i in n * base + digit(bytes, start + i) }
    }

    private static func fraction(_ bytes: [UInt8], from start: Int) -> Double {
        var result = 0.0
        var scale = 1.0
        for i in 0..<12 {
            scale /= Double(base)
            result += Double(digit(bytes, start + i)) * scale
        }
        return result
    }

    private static func digits(of number: UInt64) -> [UInt8] {
        var n = number
        var result = [UInt8](repeating: lowest, count: digitCount)
        for i in stride(from: digitCount - 1, through: 0, by: -1) {
            result[i] = lowest + UInt8(n % base)
            n /= base
        }
        return result
    }
}
