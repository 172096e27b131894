/// Byte-level text helpers for the protocol code (signing, headers, dates), working on UTF-8 bytes: these run for
/// every header of every request, so they avoid Foundation's bridging.
package enum ASCII {
    /// The value of one hex digit (either case) as an ASCII byte; nil for any other byte.
    package static func hexDigitValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// `text` with its `%XX` escapes decoded (`+` as a space when `plusAsSpace`), or nil for a truncated or non-hex
    /// escape or bytes that are not well-formed UTF-8 — never a U+FFFD put in their place (Foundation's
    /// `removingPercentEncoding` does that on Linux, and returns nil on macOS).
    package static func percentDecoded<S: StringProtocol>(_ text: S, plusAsSpace: Bool = false) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = bytes.next().flatMap(hexDigitValue), let low = bytes.next().flatMap(hexDigitValue)
                else { return nil }
                out.append(high << 4 | low)
            } else {
                out.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// `text` without leading and trailing spaces and tabs (the optional whitespace around HTTP field values),
    /// working on UTF-8 bytes (no Foundation bridging: this runs for every header of every request).
    package static func trimmingSpaces<S: StringProtocol>(_ text: S) -> Substring {
        let utf8 = Substring(text).utf8
        var start = utf8.startIndex
        var end = utf8.endIndex
        while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start = utf8.index(after: start) }
        while end > start {
            let before = utf8.index(before: end)
            guard utf8[before] == 0x20 || utf8[before] == 0x09 else { break }
            end = before
        }
        return Substring(utf8[start..<end])
    }

    /// Appends `value` as exactly `digits` decimal digits, zero-padded (the low digits when it has more): the
    /// building block of the date formats written by the client and the fake server.
    package static func appendDecimal(_ value: Int, digits: Int, to out: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<max(1, digits) { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(48 + (rest / divisor) % 10))
            rest %= divisor
            divisor /= 10
        }
    }

}
