import AWSSigV4
import Foundation
import Gallery
import NIOHTTP1

extension FuzzCatalog {
    /// The gallery's request checks: `GalleryRouter.parseTarget(_:)` (path and query decoding, the guard against
    /// `..`, NUL and backslashes), `hostAllowed` and `constantTimeEqual`. By the first byte:
    ///
    /// - 0: the rest is a request target: a path it accepts has, byte for byte, no NUL, no backslash and no empty,
    ///   `.` or `..` segment, and is what AWSSigV4's decoder makes of the target's path.
    /// - 1: the rest picks path segments and query items of any Unicode, which the harness percent-encodes: the
    ///   target must decode to exactly them (the first of a repeated name), or be refused exactly when a segment
    ///   decodes to something the guard forbids.
    /// - 2: the rest picks `Host` headers, a bound host and two tokens: the host check must allow exactly
    ///   localhost, 127.0.0.1, [::1] and the bound host, bracketed or not, with or without a port of ASCII
    ///   digits, in one header; the token comparison must be byte equality.
    static let galleryRouter = FuzzTarget(
        name: "gallery-router",
        summary: "GalleryRouter.parseTarget/hostAllowed/constantTimeEqual: no escaping path; round trip; host rule",
        maxLength: 1024,
        seeds: { GalleryRouterFuzz.seeds() },
        check: { bytes throws(FuzzFailure) in
            guard let first = bytes.first else { return }
            var reader = FuzzReader(Array(bytes.dropFirst()))
            switch first % 3 {
            case 0: try GalleryRouterFuzz.checkTarget(ServerFuzzing.text(bytes.dropFirst()))
            case 1: try GalleryRouterFuzz.checkRoundTrip(&reader)
            default: try GalleryRouterFuzz.checkHost(&reader)
            }
        })
}

enum GalleryRouterFuzz {
    /// Whether the guard must refuse a decoded path: a NUL or backslash byte, or a segment (between `/` bytes)
    /// that is empty, `.` or `..` — the root `/` alone excepted.
    static func forbidden(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        if bytes.contains(0) || bytes.contains(UInt8(ascii: "\\")) { return true }
        if bytes == [UInt8(ascii: "/")] { return false }
        return bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).contains {
            $0.isEmpty || $0.elementsEqual([46]) || $0.elementsEqual([46, 46])
        }
    }

    static func checkTarget(_ uri: String) throws(FuzzFailure) {
        guard let (path, _) = GalleryRouter.parseTarget(uri) else { return }
        try expect(path.utf8.first == UInt8(ascii: "/"), "\(uri.debugDescription) gave the relative path \(path)")
        try expect(!forbidden(path), "\(uri.debugDescription) passed the guard as \(path.debugDescription)")
        let rawPath = ServerFuzzing.text(uri.utf8.prefix { $0 != UInt8(ascii: "?") })
        try expect(
            ServerFuzzing.same(SigV4.percentDecode(rawPath), path),
            "\(uri.debugDescription): path \(path.debugDescription), AWSSigV4 decodes \(rawPath.debugDescription) "
                + "to \(SigV4.percentDecode(rawPath).debugDescription)")
    }

    static func checkRoundTrip(_ reader: inout FuzzReader) throws(FuzzFailure) {
        var segments: [String] = []
        for _ in 0..<(1 + reader.byte() % 4) { segments.append(reader.string(upTo: 24)) }
        var items: [(name: String, value: String)] = []
        for _ in 0..<(reader.byte() % 4) { items.append((reader.string(upTo: 8), reader.string(upTo: 16))) }
        let lower = reader.byte() & 1 == 1
        var uri = "/" + segments.map { ServerFuzzing.percentEncode($0, lower: lower) }.joined(separator: "/")
        if !items.isEmpty {
            uri +=
                "?"
                + items.map {
                    ServerFuzzing.percentEncode($0.name, lower: lower) + "="
                        + ServerFuzzing.percentEncode($0.value, lower: lower)
                }.joined(separator: "&")
        }
        let path = "/" + segments.joined(separator: "/")
        let parsed = GalleryRouter.parseTarget(uri)
        if forbidden(path) {
            try expect(parsed == nil, "\(uri.debugDescription) (\(path.debugDescription)) passed the guard")
            return
        }
        guard let parsed else { throw FuzzFailure("\(uri.debugDescription) (\(path.debugDescription)) was refused") }
        try expect(
            ServerFuzzing.same(parsed.path, path),
            "\(uri.debugDescription) decoded to \(parsed.path.debugDescription), not \(path.debugDescription)")
        var query: [String: String] = [:]
        for item in items where query[item.name] == nil { query[item.name] = item.value }
        try expect(
            parsed.query.count == query.count
                && query.allSatisfy { ServerFuzzing.same(parsed.query[$0.key], $0.value) },
            "\(uri.debugDescription): query \(parsed.query), not \(query)")
    }

    static let boundHosts = ["127.0.0.1", "0.0.0.0", "192.168.1.5", "::1", "photos.local"]

    /// The rule, byte by byte: one `Host` value, lower-cased, that is an allowed name — bracketed, or plain when it
    /// has no colon — followed by nothing or a colon and ASCII digits.
    static func allowedByRule(_ headers: HTTPHeaders, boundHost: String) -> Bool {
        let values = headers[canonicalForm: "host"]
        guard values.count == 1 else { return false }
        let host = Array(values[0].lowercased().utf8)
        for name in ["localhost", "127.0.0.1", "::1", boundHost.lowercased()] {
            let plain = Array(name.utf8)
            for form in [plain.contains(UInt8(ascii: ":")) ? nil : plain, [91] + plain + [93]] {
                guard let form, host.starts(with: form) else { continue }
                let port = host.dropFirst(form.count)
                if port.isEmpty
                    || (port.first == UInt8(ascii: ":") && port.dropFirst().allSatisfy { $0 >= 48 && $0 <= 57 })
                {
                    return true
                }
            }
        }
        return false
    }

    static func checkHost(_ reader: inout FuzzReader) throws(FuzzFailure) {
        let boundHost = boundHosts[Int(reader.byte()) % boundHosts.count]
        var headers = HTTPHeaders()
        let names = ["Host", "host", "HOST", "X-Host"]
        for _ in 0..<(reader.byte() % 3) {
            headers.add(name: names[Int(reader.byte()) % names.count], value: reader.string(upTo: 40))
        }
        let allowed = GalleryRouter.hostAllowed(headers, boundHost: boundHost)
        let rule = allowedByRule(headers, boundHost: boundHost)
        try expect(allowed == rule, "Host \(headers[canonicalForm: "host"]) bound to \(boundHost): allowed \(allowed)")

        let a = reader.string(upTo: 70)
        let b = reader.byte() % 2 == 0 ? a : reader.string(upTo: 70)
        let equal = Array(a.utf8) == Array(b.utf8)
        try expect(
            GalleryRouter.constantTimeEqual(a, b) == equal,
            "constantTimeEqual(\(a.debugDescription), \(b.debugDescription))")
        try expect(SigV4.constantTimeEquals(a, b) == equal, "SigV4.constantTimeEquals disagrees")
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = [
            "/", "/index.html", "/api/info?token=abc&x=1", "/api/originals/A%2F..?token=t", "/a/%2e%2E/b",
            "/api/thumbnails/x?version=original&token=a+b%20c", "/a//b", "/a\\b", "/%00", "/%C3%A9?%FF=1", "http://x/",
            "/api/assets?ids=a,b,c&ids=d",
        ].map { [0] + Array($0.utf8) }
        seeds.append(
            [1, 3, 3] + Array("api".utf8) + [6] + Array("assets".utf8) + [2] + Array("..".utf8) + [1, 5]
                + Array("token".utf8) + [3] + Array("a+b".utf8) + [0])
        seeds.append([1, 1, 5] + Array("é/\u{301}x".utf8) + [0, 1])
        for host in [
            "localhost:8080", "[::1]:1", "127.0.0.1", "evil.com", "localhost.evil.com", "LOCALHOST:", "[localhost]",
        ] {
            seeds.append(
                [2, 0, 1, 0, UInt8(host.utf8.count)] + Array(host.utf8) + [4] + Array("abcd".utf8) + [1, 4]
                    + Array("abce".utf8))
        }
        return seeds
    }
}
