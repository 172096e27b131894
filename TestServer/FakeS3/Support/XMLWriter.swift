/// Builds the small XML documents S3 responds with. Escapes text exactly once.
package struct XMLWriter {
    package init() {}

    package static let namespace = "http://s3.amazonaws.com/doc/2006-03-01/"
    package private(set) var document = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"

    package mutating func open(_ name: String, namespace: Bool = true) {
        document += namespace ? "<\(name) xmlns=\"\(Self.namespace)\">" : "<\(name)>"
    }

    package mutating func close(_ name: String) { document += "</\(name)>" }

    package mutating func element(_ name: String, _ text: String) {
        document += "<\(name)>\(Self.escape(text))</\(name)>"
    }

    package mutating func text(_ text: String) { document += Self.escape(text) }

    package mutating func element(_ name: String, _ value: Int) { element(name, String(value)) }
    package mutating func element(_ name: String, _ value: Int64) { element(name, String(value)) }
    package mutating func element(_ name: String, _ value: Bool) { element(name, value ? "true" : "false") }

    /// Escapes markup characters and, as S3 does, control characters as numeric references.
    package static func escape(_ text: String) -> String {
        // Most keys, ETags and dates need nothing: they are returned as they are, without a copy.
        let plain = text.utf8.allSatisfy { byte in
            byte >= 0x20 && byte != 0x7F && byte != UInt8(ascii: "&") && byte != UInt8(ascii: "<")
                && byte != UInt8(ascii: ">") && byte != 0x22 && byte != 0x27
        }
        if plain { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "&#x\(String(scalar.value, radix: 16, uppercase: true));"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
