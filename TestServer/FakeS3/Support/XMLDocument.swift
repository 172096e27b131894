/// A minimal XML reader for the small documents clients send (DeleteObjects, CompleteMultipartUpload,
/// CreateBucketConfiguration): elements, text and the predefined and numeric entities. Anything
/// else malformed throws `MalformedXML`, and so do elements nested more than ``maxDepth`` deep.
package struct XMLElement {
    package var name: String
    package var children: [XMLElement] = []
    package var text = ""

    package func child(_ name: String) -> XMLElement? { children.first { $0.name == name } }
    package func all(_ name: String) -> [XMLElement] { children.filter { $0.name == name } }

    /// The deepest nesting read (S3's request documents have three levels). Each level is a call of the reader
    /// on the stack: without a bound, a 2 MiB body of `<a>`s would overflow an event loop thread's stack.
    package static let maxDepth = 32

    /// Parses a document and returns its root element.
    package static func parse(_ bytes: [UInt8]) throws(S3Error) -> XMLElement {
        var parser = Parser(bytes: bytes)
        return try parser.document()
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func document() throws(S3Error) -> XMLElement {
            skipMisc()
            guard peek("<") else { throw .malformedXML }
            let root = try element(depth: 1)
            skipMisc()
            guard i == bytes.count else { throw .malformedXML }
            return root
        }

        private func peek(_ s: String) -> Bool {
            let u = Array(s.utf8)
            return i + u.count <= bytes.count && bytes[i..<(i + u.count)].elementsEqual(u)
        }

        private mutating func skipWhitespace() {
            while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        }

        /// Skips whitespace, the XML declaration, processing instructions and comments.
        private mutating func skipMisc() {
            while true {
                skipWhitespace()
                if peek("<?") {
                    skip(past: "?>")
                } else if peek("<!--") {
                    skip(past: "-->")
                } else {
                    return
                }
            }
        }

        private mutating func skip(past end: String) {
            let u = Array(end.utf8)
            while i < bytes.count && !peek(end) { i += 1 }
            i = min(bytes.count, i + u.count)
        }

        private mutating func name() throws(S3Error) -> String {
            let start = i
            while i < bytes.count, !([0x20, 0x09, 0x0A, 0x0D, 0x3E, 0x2F, 0x3D] as [UInt8]).contains(bytes[i]) {
                i += 1
            }
            guard i > start, let s = String(validating: bytes[start..<i], as: UTF8.self) else { throw .malformedXML }
            return s
        }

        private mutating func element(depth: Int) throws(S3Error) -> XMLElement {
            guard depth <= XMLElement.maxDepth else { throw .malformedXML }
            i += 1  // "<"
            var el = XMLElement(name: try name())
            // Attributes (namespaces) are skipped.
            while true {
                skipWhitespace()
                guard i < bytes.count else { throw .malformedXML }
                if peek("/>") {
                    i += 2
                    return el
                }
                if bytes[i] == UInt8(ascii: ">") {
                    i += 1
                    break
                }
                _ = try name()
                skipWhitespace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "=") else { throw .malformedXML }
                i += 1
                skipWhitespace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
                    throw .malformedXML
                }
                let quote = bytes[i]
                i += 1
                while i < bytes.count && bytes[i] != quote { i += 1 }
                guard i < bytes.count else { throw .malformedXML }
                i += 1
            }
            var text: [UInt8] = []
            while true {
                guard i < bytes.count else { throw .malformedXML }
                if peek("</") {
                    i += 2
                    guard try name() == el.name else { throw .malformedXML }
                    skipWhitespace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ">") else { throw .malformedXML }
                    i += 1
                    guard let s = String(validating: text, as: UTF8.self) else { throw .malformedXML }
                    el.text = s
                    return el
                } else if peek("<!--") {
                    skip(past: "-->")
                } else if peek("<![CDATA[") {
                    i += 9
                    while i < bytes.count && !peek("]]>") {
                        text.append(bytes[i])
                        i += 1
                    }
                    guard i < bytes.count else { throw .malformedXML }
                    i += 3
                } else if bytes[i] == UInt8(ascii: "<") {
                    el.children.append(try element(depth: depth + 1))
                } else if bytes[i] == UInt8(ascii: "&") {
                    text += try entity()
                } else {
                    text.append(bytes[i])
                    i += 1
                }
            }
        }

        private mutating func entity() throws(S3Error) -> [UInt8] {
            let start = i
            while i < bytes.count && bytes[i] != UInt8(ascii: ";") && i - start < 12 { i += 1 }
            guard i < bytes.count, bytes[i] == UInt8(ascii: ";") else { throw .malformedXML }
            let body = String(decoding: bytes[(start + 1)..<i], as: UTF8.self)
            i += 1
            switch body {
            case "amp": return Array("&".utf8)
            case "lt": return Array("<".utf8)
            case "gt": return Array(">".utf8)
            case "quot": return Array("\"".utf8)
            case "apos": return Array("'".utf8)
            default:
                var value: UInt32?
                if body.hasPrefix("#x") || body.hasPrefix("#X") {
                    value = UInt32(body.dropFirst(2), radix: 16)
                } else if body.hasPrefix("#") {
                    value = UInt32(body.dropFirst())
                }
                guard let value, let scalar = Unicode.Scalar(value) else { throw .malformedXML }
                return Array(String(Character(scalar)).utf8)
            }
        }
    }
}
