package import Foundation

/// A parsed XML element: name (prefix stripped), child elements and its own character data.
package struct S3XMLElement: Sendable, Equatable {
    package var name: String
    package var children: [S3XMLElement] = []
    package var text: String = ""

    /// The first child with this name.
    package func child(_ name: String) -> S3XMLElement? { children.first { $0.name == name } }
    /// Every child with this name, in document order.
    package func children(_ name: String) -> [S3XMLElement] { children.filter { $0.name == name } }

    /// The text of a child that must be present.
    package func requiredText(_ name: String) throws(S3Error) -> String {
        guard let element = child(name) else {
            throw .malformedResponse("<\(self.name)> lacks the required <\(name)> element")
        }
        return element.text
    }
}

/// A strict, small XML parser for S3 responses: the whole document must be well-formed (one root element,
/// every element closed, names matching, entities known). Anything else, including a document cut off at
/// any byte, is an error; a partial tree is never returned.
package enum S3XMLParser {
    package static func parse(_ data: Data) throws(S3Error) -> S3XMLElement {
        var parser = Parser(bytes: [UInt8](data))
        return try parser.document()
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        func fail(_ what: String) -> S3Error { .malformedResponse("XML \(what) at byte \(i)") }

        var atEnd: Bool { i >= bytes.count }

        /// Whether the bytes at the position spell `s` (compared in place: this runs at every `<`).
        func peek(_ s: StaticString) -> Bool {
            s.withUTF8Buffer { u in
                guard i + u.count <= bytes.count else { return false }
                for k in 0..<u.count where bytes[i + k] != u[k] { return false }
                return true
            }
        }

        mutating func skipSpace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D {
                i += 1
            }
        }

        mutating func skip(past terminator: StaticString) throws(S3Error) {
            while !atEnd {
                if peek(terminator) {
                    i += terminator.withUTF8Buffer { $0.count }
                    return
                }
                i += 1
            }
            throw fail("unterminated construct (expected \(terminator))")
        }

        /// Prolog and trailing misc: declaration, comments, processing instructions, whitespace.
        mutating func misc() throws(S3Error) {
            while true {
                skipSpace()
                if peek("<?") {
                    try skip(past: "?>")
                } else if peek("<!--") {
                    try skip(past: "-->")
                } else {
                    return
                }
            }
        }

        mutating func document() throws(S3Error) -> S3XMLElement {
            if peek("\u{FEFF}") { i += 3 }
            try misc()
            guard peek("<"), !peek("</"), !peek("<!") else { throw fail("missing root element") }
            let root = try element()
            try misc()
            guard atEnd else { throw fail("content after the root element") }
            return root
        }

        static func isNameByte(_ b: UInt8) -> Bool {
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x5F
                || b == 0x2D || b == 0x2E || b == 0x3A || b >= 0x80
        }

        /// Skips a name; returns where it lies.
        mutating func nameRange() throws(S3Error) -> Range<Int> {
            let start = i
            while i < bytes.count, Self.isNameByte(bytes[i]) { i += 1 }
            guard i > start else { throw fail("expected a name") }
            return start..<i
        }

        /// The name without its namespace prefix. A name is a local part, or a prefix, a colon and a local part
        /// (Namespaces in XML): an empty part or a second colon is malformed (found by `make fuzz`: `<:/>` was a
        /// root element without a name).
        func localName(_ qualified: Range<Int>) throws(S3Error) -> String {
            let colons = qualified.filter { bytes[$0] == UInt8(ascii: ":") }
            guard colons.count <= 1 else { throw fail("a name with more than one colon") }
            guard let colon = colons.first else {
                return String(decoding: bytes[qualified], as: UTF8.self)
            }
            guard colon > qualified.lowerBound, colon + 1 < qualified.upperBound else {
                throw fail("a name with an empty prefix or local part")
            }
            return String(decoding: bytes[(colon + 1)..<qualified.upperBound], as: UTF8.self)
        }

        func qualifiedName(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

        mutating func element() throws(S3Error) -> S3XMLElement {
            i += 1  // '<'
            let qualified = try nameRange()
            var result = S3XMLElement(name: try localName(qualified))
            // Attributes (values checked, then ignored: S3 only puts xmlns here).
            while true {
                let hadSpace =
                    i < bytes.count && (bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D)
                skipSpace()
                guard !atEnd else { throw fail("truncated start tag") }
                if peek("/>") {
                    i += 2
                    return result
                }
                if bytes[i] == UInt8(ascii: ">") {
                    i += 1
                    break
                }
                guard hadSpace else { throw fail("malformed start tag") }
                _ = try nameRange()
                skipSpace()
                guard !atEnd, bytes[i] == UInt8(ascii: "=") else { throw fail("attribute without a value") }
                i += 1
                skipSpace()
                guard !atEnd, bytes[i] == 0x22 || bytes[i] == 0x27 else { throw fail("unquoted attribute value") }
                let quote = bytes[i]
                i += 1
                while !atEnd, bytes[i] != quote {
                    guard bytes[i] != UInt8(ascii: "<") else { throw fail("'<' in an attribute value") }
                    i += 1
                }
                guard !atEnd else { throw fail("truncated attribute value") }
                i += 1
            }
            // Content. Character data is decoded straight from the document when it is one run (the usual case:
            // a key, a size); runs split by references, CDATA, comments or children are gathered first.
            var text = [UInt8]()
            var run = i
            while true {
                guard !atEnd else { throw fail("truncated document: <\(qualifiedName(qualified))> is not closed") }
                let b = bytes[i]
                if b == UInt8(ascii: "<") {
                    let closes = peek("</")
                    if run < i, !text.isEmpty || !closes { text.append(contentsOf: bytes[run..<i]) }
                    if closes {
                        let end = i
                        i += 2
                        let closing = try nameRange()
                        guard bytes[closing].elementsEqual(bytes[qualified]) else {
                            throw fail("</\(qualifiedName(closing))> closes <\(qualifiedName(qualified))>")
                        }
                        skipSpace()
                        guard !atEnd, bytes[i] == UInt8(ascii: ">") else { throw fail("truncated end tag") }
                        i += 1
                        result.text =
                            text.isEmpty
                            ? String(decoding: bytes[run..<end], as: UTF8.self) : String(decoding: text, as: UTF8.self)
                        return result
                    } else if peek("<!--") {
                        try skip(past: "-->")
                    } else if peek("<![CDATA[") {
                        i += 9
                        let start = i
                        try skip(past: "]]>")
                        text.append(contentsOf: bytes[start..<(i - 3)])
                    } else if peek("<?") {
                        try skip(past: "?>")
                    } else if peek("<!") {
                        throw fail("unexpected markup declaration")
                    } else {
                        result.children.append(try element())
                    }
                    run = i
                } else if b == UInt8(ascii: "&") {
                    text.append(contentsOf: bytes[run..<i])
                    try entity(into: &text)
                    run = i
                } else {
                    i += 1
                }
            }
        }

        mutating func entity(into text: inout [UInt8]) throws(S3Error) {
            let start = i
            while !atEnd, bytes[i] != UInt8(ascii: ";") {
                guard i - start < 12 else { throw fail("unterminated entity") }
                i += 1
            }
            guard !atEnd else { throw fail("truncated entity") }
            let body = String(decoding: bytes[(start + 1)..<i], as: UTF8.self)
            i += 1
            switch body {
            case "amp": text.append(UInt8(ascii: "&"))
            case "lt": text.append(UInt8(ascii: "<"))
            case "gt": text.append(UInt8(ascii: ">"))
            case "quot": text.append(0x22)
            case "apos": text.append(0x27)
            default:
                var scalarValue: UInt32?
                if body.hasPrefix("#x") || body.hasPrefix("#X") {
                    scalarValue = UInt32(body.dropFirst(2), radix: 16)
                } else if body.hasPrefix("#") {
                    scalarValue = UInt32(body.dropFirst(1), radix: 10)
                }
                guard let value = scalarValue, let scalar = Unicode.Scalar(value) else {
                    throw fail("unknown entity &\(body);")
                }
                text.append(contentsOf: Array(String(Character(scalar)).utf8))
            }
        }
    }
}
