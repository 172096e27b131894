import NIOHTTP1

/// What the servers' targets share: reading fuzz bytes as an HTTP request head, and the harness's own
/// percent-encoding (written here, not borrowed from the code under test, so a round trip checks the decoder
/// against an independent encoder).
enum ServerFuzzing {
    /// The bytes as an HTTP/1.1 request head: a request line `METHOD TARGET VERSION`, then `Name: value` lines
    /// up to an empty line (lines end in LF or CRLF; a line without a colon or with a name that is not ASCII is
    /// dropped, as no parser hands it on).
    /// Ill-formed UTF-8 becomes U+FFFD, as NIO's `String(decoding:)` of a header makes it.
    static func head<C: Collection<UInt8>>(_ bytes: C) -> HTTPRequestHead {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]
        }
        let requestLine = lines.isEmpty ? [] : lines.removeFirst().split(separator: UInt8(ascii: " "), maxSplits: 2)
        let method = requestLine.first.map { text($0) } ?? "GET"
        let uri = requestLine.count > 1 ? text(requestLine[1]) : "/"
        var headers = HTTPHeaders()
        for line in lines {
            if line.isEmpty { break }
            // NIO's parser refuses a line without a colon, and a name that is not ASCII.
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), line[..<colon].allSatisfy({ $0 < 0x80 }) else {
                continue
            }
            let name = text(line[..<colon])
            let value = line[line.index(after: colon)...].drop { $0 == 0x20 || $0 == 0x09 }
            let trimmed = value.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            headers.add(name: name, value: text(trimmed))
        }
        return HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: uri, headers: headers)
    }

    /// A request head written out as `head(_:)` reads it (the seeds' form).
    static func text(of head: HTTPRequestHead) -> [UInt8] {
        var out = "\(head.method.rawValue) \(head.uri) HTTP/1.1\r\n"
        for (name, value) in head.headers { out += "\(name): \(value)\r\n" }
        return Array((out + "\r\n").utf8)
    }

    static func text<C: Collection<UInt8>>(_ bytes: C) -> String { String(decoding: Array(bytes), as: UTF8.self) }

    /// Every byte but `A–Z a–z 0–9 - . _ ~` (and those in `keep`) as `%XX`, upper- or lower-case hex as `lower`
    /// says.
    static func percentEncode(_ text: String, keep: Set<UInt8> = [], lower: Bool = false) -> String {
        let digits = Array((lower ? "0123456789abcdef" : "0123456789ABCDEF").utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            let unreserved =
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            if unreserved || keep.contains(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Same UTF-8 bytes (`==` on `String` compares canonical equivalence, which a parser must not lean on).
    static func same(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): a.utf8.elementsEqual(b.utf8)
        default: false
        }
    }
}
