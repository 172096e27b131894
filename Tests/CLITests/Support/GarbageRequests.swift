import Essentials

/// Hostile requests for an HTTP server, drawn from a seeded generator (the same seed, the same storm).
struct GarbageRequests {
    /// What one garbage connection does.
    struct Plan {
        enum Ending {
            /// Ends its side (the server reads end-of-stream) and waits for the server's answer or close.
            case halfClose
            /// Keeps its side open and waits for the server's answer or close.
            case wait
            /// Closes at once, mid-request.
            case close
            /// Resets at once, mid-request.
            case reset
        }

        var kind: String
        /// The status it must be answered with, when it is a request the server can read whole.
        var status: Int? = nil
        /// Pieces sent one after another (a piece may fail to go out when the server closed first: fine).
        var pieces: [[UInt8]]
        var ending: Ending
    }

    /// A well-formed request's head lines (request line first), which the plans mutate.
    var sample: [String]
    /// Requests with a body the server must refuse cleanly (a body of garbage under a valid head), and how.
    var bodies: [(head: [String], body: [UInt8], status: Int)]

    var random: SplitMix64

    mutating func bytes(_ count: Int, avoiding avoided: Set<UInt8> = []) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            let byte = UInt8(truncatingIfNeeded: random.next())
            if !avoided.contains(byte) { out.append(byte) }
        }
        return out
    }

    mutating func pick<T>(_ choices: [T]) -> T { choices[Int(random.next(below: UInt64(choices.count)))] }

    mutating func count(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(random.next(below: UInt64(range.count)))
    }

    static func head(_ lines: [String]) -> [UInt8] { Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) }

    /// The kinds of plan ``plan(_:)`` draws from.
    static let kinds = 12

    /// Connection `index`'s plan: the first ``kinds`` connections take one kind each, the next ones one hostile
    /// body each (so every kind and body is in every storm), the rest draw both.
    mutating func plan(_ index: Int) -> Plan {
        let line = sample[0]
        let headers = Array(sample.dropFirst())
        let crlf = Set([UInt8(ascii: "\r"), UInt8(ascii: "\n")])
        let kind = index < Self.kinds ? index : index < Self.kinds + bodies.count ? 10 : Int(random.next(below: 12))
        switch kind {
        case 0:
            return Plan(kind: "random bytes", pieces: [bytes(count(1...4096))], ending: pick([.halfClose, .wait]))
        case 1:
            let whole = Self.head(sample)
            let cut = count(1...(whole.count - 4))
            return Plan(
                kind: "request cut after \(cut) bytes", pieces: [Array(whole[..<cut])],
                ending: pick([.halfClose, .close, .reset]))
        case 2:
            let size = count(90_000...300_000)
            let value = String(repeating: "a", count: size)
            return Plan(
                kind: "a \(size)-byte header", pieces: [Self.head(sample + ["X-Huge: \(value)"])],
                ending: pick([.wait, .halfClose]))
        case 3:
            let many = (0..<count(500...3000)).map { "X-Many-\($0): \($0)" }
            return Plan(kind: "\(many.count) headers", pieces: [Self.head(sample + many)], ending: .wait)
        case 4:
            let name = bytes(count(1...40), avoiding: crlf.union([UInt8(ascii: ":")]))
            let value = bytes(count(0...200), avoiding: crlf)
            let head = Array((sample.joined(separator: "\r\n") + "\r\n").utf8) + name + Array(": ".utf8) + value
            return Plan(
                kind: "binary header", pieces: [head + Array("\r\n\r\n".utf8)], ending: pick([.wait, .halfClose]))
        case 5:
            let duplicates = pick([
                ["Content-Length: 5", "Content-Length: 7"], ["Host: a.example", "Host: b.example"],
                ["Content-Length: 4", "Transfer-Encoding: chunked"], ["Transfer-Encoding: chunked, identity"],
                ["Content-Length: 3, 3"],
            ])
            return Plan(
                kind: "duplicated headers \(duplicates)",
                pieces: [Self.head(sample + duplicates) + Array("abcde".utf8)],
                ending: .wait)
        case 6:
            let broken = pick(["Host localhost", ": no name", "X-Space Before: 1", " folded", "\tfolded"])
            return Plan(
                kind: "header line \(broken.debugDescription)", pieces: [Self.head(sample + [broken])], ending: .wait)
        case 7:
            let length = pick(["-1", "abc", "1e9", "99999999999999999999999", "+5", "0x10", "", "5 5"])
            return Plan(
                kind: "Content-Length \(length.debugDescription)",
                pieces: [Self.head(sample + ["Content-Length: \(length)"]) + bytes(count(0...64))], ending: .wait)
        case 8:
            let chunks = pick([
                "zz\r\nabc\r\n0\r\n\r\n", "fffffffffffffffffffffff\r\nabc", "5\r\nab", "-1\r\n\r\n",
                "5;\r\nabcde\r\n0\r\n",
                "3\r\nabcXY\r\n0\r\n\r\n", "\r\n\r\n\r\n",
            ])
            return Plan(
                kind: "chunked body \(chunks.debugDescription)",
                pieces: [Self.head(sample + ["Transfer-Encoding: chunked"]) + Array(chunks.utf8)],
                ending: pick([.wait, .halfClose]))
        case 9:
            let request = pick([
                "FOO / HTTP/1.1", "GET / HTTP/9.9", "GET /\u{1}\u{7f} HTTP/1.1", "GET", "GET  HTTP/1.1",
                "GET / HTTP/1.1 extra", "G\u{0}T / HTTP/1.1", "\u{16}\u{3}\u{1}\u{2}\u{0}\u{1}",
                String(repeating: "/", count: 20_000),
            ])
            return Plan(
                kind: "request line \(request.prefix(40).debugDescription)", pieces: [Self.head([request] + headers)],
                ending: .wait)
        case 10:
            let whole = (Self.kinds..<(Self.kinds + bodies.count)).contains(index)
            let (head, body, status) = whole ? bodies[index - Self.kinds] : pick(bodies)
            let cut = whole ? body.count : pick([body.count, body.count, body.count / 2])
            return Plan(
                kind: "hostile body (\(body.count) bytes, \(cut) sent) under \(head[0])",
                status: cut == body.count ? status : nil,
                pieces: [Self.head(head + ["Content-Length: \(body.count)"]), Array(body[..<cut])],
                ending: cut == body.count ? .wait : pick([.close, .reset, .halfClose]))
        default:
            // A valid request, then garbage pipelined on the same connection.
            let garbage = bytes(count(1...512))
            return Plan(
                kind: "garbage pipelined after \(line)", pieces: [Self.head(sample) + garbage], ending: .halfClose)
        }
    }
}
