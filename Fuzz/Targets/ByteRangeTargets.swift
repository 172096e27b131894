import FakeS3
import Foundation
import Gallery
import HTTPServerSupport
import NIOHTTP1
import S3Transfer

extension FuzzCatalog {
    /// Every `Range` / `Content-Range` parser: the fake server's `ByteRangeRequest`, the gallery's
    /// `HTTPByteRange` (the gallery's and the playback server's) and the client's `ContentRange`. By the first byte:
    ///
    /// - even: the rest is an object size and a header text: nothing traps; a resolved range is non-empty and
    ///   within the size; a `Content-Range` read is non-empty and within its total; the two servers agree on a
    ///   single range (see ``ByteRangeFuzz/agree(_:size:)``); what either writes as `Content-Range` for its
    ///   range, the client reads back as that range and size.
    /// - odd: the rest picks a size, a form (`bytes=a-b`, `bytes=a-`, `bytes=-n`, several ranges, `Content-Range`
    ///   `bytes a-b/total` or `/*`) and numbers up to 2⁶⁴−1: each parser must answer what RFC 9110 says.
    static let byteRange = FuzzTarget(
        name: "byte-range",
        summary: "ByteRangeRequest, HTTPByteRange, ContentRange: within bounds, servers agree, RFC 9110",
        maxLength: 256,
        seeds: { ByteRangeFuzz.seeds() },
        check: { bytes throws(FuzzFailure) in
            guard let first = bytes.first else { return }
            var reader = FuzzReader(Array(bytes.dropFirst()))
            let size = ByteRangeFuzz.size(&reader)
            if first & 1 == 0 {
                var rest: [UInt8] = []
                while !reader.isAtEnd { rest.append(reader.byte()) }
                try ByteRangeFuzz.checkText(String(decoding: rest, as: UTF8.self), size: size)
            } else {
                try ByteRangeFuzz.checkBuilt(&reader, size: size)
            }
        })
}

enum ByteRangeFuzz {
    /// An object size: small ones mostly (where ranges fall inside and outside), or any up to 2⁶³−1.
    static func size(_ reader: inout FuzzReader) -> Int64 {
        let pick = reader.byte()
        return pick < 240 ? Int64(pick) : Int64(bitPattern: reader.uint64() & UInt64(Int64.max))
    }

    /// What a server does with a `Range` header: the whole object, these bytes, or 416.
    enum Answer: Equatable {
        case whole
        case part(Range<Int64>)
        case unsatisfiable
    }

    static func fakeServer(_ text: String, size: Int64) -> Answer {
        guard let parsed = ByteRangeRequest(header: text) else { return .whole }
        switch parsed.resolve(size: size) {
        case .full: return .whole
        case .partial(let range): return .part(range)
        case .unsatisfiable: return .unsatisfiable
        }
    }

    static func gallery(_ text: String, size: Int64) -> Answer {
        switch HTTPByteRange(header: text, size: size) {
        case .whole: .whole
        case .part(let range): .part(range)
        case .unsatisfiable: .unsatisfiable
        }
    }

    static func checkText(_ text: String, size: Int64) throws(FuzzFailure) {
        let server = fakeServer(text, size: size)
        let gallery = gallery(text, size: size)
        for (who, answer) in [("fake server", server), ("gallery", gallery)] {
            if case .part(let range) = answer {
                try expect(
                    !range.isEmpty && range.lowerBound >= 0 && range.upperBound <= size,
                    "\(who): \(text.debugDescription) on \(size) bytes gave \(range)")
            }
        }
        if agree(text, size: size) {
            try expect(
                server == gallery, "\(text.debugDescription) on \(size) bytes: server \(server), gallery \(gallery)")
        }
        if let read = ContentRange(header: text) {
            try expect(
                !read.range.isEmpty && read.range.lowerBound >= 0
                    && (read.total.map { $0 >= read.range.upperBound } ?? true),
                "Content-Range \(text.debugDescription) read as \(read.range) of \(read.total as Any)")
        }
        try checkWritten(server, gallery, size: size)
    }

    /// Whether the two servers must answer a header alike: always, except where whitespace stands inside it.
    /// The fake server, as S3, also reads `bytes= 0 - 9`; the gallery only `bytes=0-9` (RFC 9110's grammar has
    /// no whitespace there), and serves the whole file for the other. Several ranges both ignore (the whole):
    /// S3 answers only the first of several, and the gallery serves none of them.
    static func agree(_ text: String, size: Int64) -> Bool {
        !text.unicodeScalars.contains { CharacterSet.whitespaces.contains($0) }
    }

    /// What each server writes as `Content-Range` for its answer, the client reads back as that range and size.
    static func checkWritten(_ server: Answer, _ gallery: Answer, size: Int64) throws(FuzzFailure) {
        if case .part(let range) = server {
            let header = ByteRangeRequest.contentRange(range, size: size)
            let read = ContentRange(header: header)
            try expect(read?.range == range && read?.total == size, "the server's \(header) reads as \(read as Any)")
        }
        switch gallery {
        case .part(let range):
            let header = FileAnswer.contentRange(status: .partialContent, range: range, totalSize: size) ?? ""
            let read = ContentRange(header: header)
            try expect(read?.range == range && read?.total == size, "the gallery's \(header) reads as \(read as Any)")
        case .unsatisfiable:
            let header = FileAnswer.contentRange(status: .rangeNotSatisfiable, range: 0..<0, totalSize: size) ?? ""
            try expect(ContentRange(header: header) == nil, "the gallery's 416 \(header) reads as a range")
        case .whole:
            try expect(
                FileAnswer.contentRange(status: .ok, range: 0..<size, totalSize: size) == nil,
                "a whole answer with a Content-Range")
        }
    }

    /// A number up to 2⁶⁴−1 the input picks: small, near the size, or anywhere (past 2⁶³−1 too).
    static func number(_ reader: inout FuzzReader, size: Int64) -> UInt64 {
        let pick = reader.byte()
        switch pick % 4 {
        case 0: return UInt64(pick / 4)
        case 1:
            let near = UInt64(size) + UInt64(pick / 4)
            return near >= 32 ? near - 32 : 0
        case 2: return UInt64(Int64.max) - UInt64(pick / 4)
        default: return reader.uint64()
        }
    }

    static func checkBuilt(_ reader: inout FuzzReader, size: Int64) throws(FuzzFailure) {
        let form = reader.byte() % 6
        let a = number(&reader, size: size)
        let b = number(&reader, size: size)
        let max = UInt64(Int64.max)
        let text: String
        let expected: Answer
        switch form {
        case 0:
            text = "bytes=\(a)-\(b)"
            if a > max || b > max || b < a {
                expected = .whole
            } else if Int64(a) >= size {
                expected = .unsatisfiable
            } else {
                expected = .part(Int64(a)..<Swift.min(Int64(b), size - 1) + 1)
            }
        case 1:
            text = "bytes=\(a)-"
            expected = a > max ? .whole : Int64(a) >= size ? .unsatisfiable : .part(Int64(a)..<size)
        case 2:
            text = "bytes=-\(a)"
            if a > max {
                expected = .whole
            } else if a == 0 || size == 0 {
                expected = .unsatisfiable
            } else {
                expected = .part(Swift.max(0, size - Int64(a))..<size)
            }
        case 3:
            text = "bytes=\(a)-\(b),\(b)-"
            expected = .whole
        default:
            let total = reader.byte() % 2 == 0 ? "*" : String(number(&reader, size: size))
            let contentRange = "bytes \(a)-\(b)/\(total)"
            let read = ContentRange(header: contentRange)
            // RFC 9110 §14.4: first ≤ last, both and the length digits, the length past last; the client keeps
            // `last + 1` as an Int64 (so last < 2⁶³−1).
            let totalValue = UInt64(total)
            let valid =
                a <= b && b < max && (total == "*" || (totalValue.map { $0 <= max && $0 > b } ?? false))
            try expect(
                (read != nil) == valid,
                "Content-Range \(contentRange.debugDescription) read as \(read as Any), RFC 9110: valid \(valid)")
            if let read {
                try expect(
                    read.range == Int64(a)..<Int64(b) + 1 && read.total == totalValue.map { Int64($0) },
                    "Content-Range \(contentRange.debugDescription) read as \(read.range) of \(read.total as Any)")
            }
            return
        }
        let server = fakeServer(text, size: size)
        let gallery = gallery(text, size: size)
        try expect(server == expected, "server: \(text) on \(size) bytes gave \(server), RFC 9110 says \(expected)")
        try expect(gallery == expected, "gallery: \(text) on \(size) bytes gave \(gallery), RFC 9110 says \(expected)")
        try checkWritten(server, gallery, size: size)
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = [
            "bytes=0-99", "bytes=5-", "bytes=-10", "bytes=0-0", "bytes=99-5", "BYTES=1-2", "bytes=0-1,4-5",
            "bytes= 3 - 7", "items=0-1", "bytes=-0", "bytes=18446744073709551616-", "bytes 0-9/100", "bytes 5-9/*",
            "bytes */100", "bytes 0-9223372036854775806/9223372036854775807",
        ].map { [0, 100] + Array($0.utf8) }
        seeds.append([0, 0] + Array("bytes=0-".utf8))
        seeds.append([0, 255, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + Array("bytes=-1".utf8))
        for form: UInt8 in 0..<6 {
            seeds.append([1, 100, form, 4, 9, 1, 2])
            seeds.append([1, 255, 0, 0, 0, 0, 0, 0, 0x10, 0, form, 2, 6, 1])
        }
        return seeds
    }
}
