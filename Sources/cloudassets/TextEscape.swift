import Foundation

/// C-style escapes for a text column: `\\`, `\t`, `\n`, `\r`, and `\xHH` for any other control character
/// (below U+0020, and U+007F). Any other character is kept as is, so a plain key prints unchanged, and the
/// escaped text holds no tab or newline.
enum TextEscape {
    static func cStyle(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\\") }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\x" + String(format: "%02X", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
