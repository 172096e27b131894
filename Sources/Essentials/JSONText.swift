import Foundation

/// JSON text built by hand, for the shapes the command line and the gallery print (small and fixed, and on hot
/// paths: a change of 1,000 assets, 100,000 identifiers): no generic encoder.
package enum JSONText {
    /// `text` as a JSON string literal: quotes, backslashes and control characters escaped, and U+2028/U+2029
    /// (valid JSON, but line breaks to JavaScript), everything else kept.
    package static func quoted(_ text: String) -> String {
        let plain = !text.utf8.contains {
            $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 == 0xE2
        }
        if plain { return "\"" + text + "\"" }
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The strings as a JSON array.
    package static func strings(_ values: [String]) -> String {
        "[" + values.map(quoted).joined(separator: ",") + "]"
    }

    /// Integers as a JSON array.
    package static func integers(_ values: some Sequence<Int>) -> String {
        "[" + values.map(String.init).joined(separator: ",") + "]"
    }
}
