import AWSSigV4
import Essentials
import NIOHTTP1

/// An HTTP request interpreted as S3 sees it: addressing resolved (path-style or virtual-hosted),
/// path and query decoded.
package struct S3Request {
    package var method: String
    package var head: HTTPRequestHead
    /// The decoded request path (what the signature's canonical URI encodes).
    package var path: String
    /// The path as sent, still percent-encoded.
    package var rawPath: String
    /// Whether the bucket came from the `Host` header (virtual-hosted style).
    package var isVirtualHosted = false
    /// The raw query string (without `?`).
    package var rawQuery: String
    /// Decoded query items in the order sent.
    package var query: [(name: String, value: String)]
    package var bucket: String?
    package var key: String?
    package var headers: HTTPHeaders { head.headers }

    package func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
    package func hasQuery(_ name: String) -> Bool { query.contains { $0.name == name } }
    package func header(_ name: String) -> String? { head.headers.first(name: name) }

    /// Parses the request line and `Host`.
    /// - Parameter virtualHostSuffixes: Host suffixes (lower-cased, most specific first) that carry the bucket name
    ///   in front of them.
    /// - Throws: `InvalidURI` for a malformed escape; `InvalidArgument` / `KeyTooLongError` for a bad key.
    package init(head: HTTPRequestHead, virtualHostSuffixes: [String]) throws(S3Error) {
        self.head = head
        method = head.method.rawValue
        // Split at the bytes `?`, `&`, `=`, `/` (never at Characters: a combining mark after one of them would
        // hide it from a Character search, and put a key's first letter into its bucket's name).
        let uri = head.uri.utf8[...]
        let pathPart: Substring.UTF8View
        if let q = uri.firstIndex(of: UInt8(ascii: "?")) {
            pathPart = uri[..<q]
            rawQuery = String(Substring(uri[uri.index(after: q)...]))
        } else {
            pathPart = uri
            rawQuery = ""
        }
        guard pathPart.first == UInt8(ascii: "/") else { throw .invalidURI }
        rawPath = String(Substring(pathPart))
        path = try Self.decode(Substring(pathPart))
        var items: [(name: String, value: String)] = []
        for part in rawQuery.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            if let eq = part.firstIndex(of: UInt8(ascii: "=")) {
                let name = try Self.decode(Substring(part[..<eq]))
                items.append((name, try Self.decode(Substring(part[part.index(after: eq)...]))))
            } else {
                items.append((try Self.decode(Substring(part)), ""))
            }
        }
        query = items

        var host = head.headers.first(name: "host") ?? ""
        if host.hasPrefix("[") {
            host = ""  // IPv6 literal: never virtual-hosted.
        } else if let colon = host.utf8.lastIndex(of: UInt8(ascii: ":")) {
            host = String(Substring(host.utf8[..<colon]))
        }
        host = host.lowercased()
        var virtualBucket: String?
        for suffix in virtualHostSuffixes {
            let dotted = Array(("." + suffix).utf8)
            if host.utf8.count > dotted.count, host.utf8.suffix(dotted.count).elementsEqual(dotted) {
                virtualBucket = String(Substring(host.utf8.dropLast(dotted.count)))
                break
            }
        }
        let rest = path.utf8.dropFirst()  // drop the leading "/"
        if let virtualBucket {
            isVirtualHosted = true
            bucket = virtualBucket
            key = rest.isEmpty ? nil : String(Substring(rest))
        } else if rest.isEmpty {
            bucket = nil
            key = nil
        } else if let slash = rest.firstIndex(of: UInt8(ascii: "/")) {
            bucket = String(Substring(rest[..<slash]))
            let k = rest[rest.index(after: slash)...]
            key = k.isEmpty ? nil : String(Substring(k))
        } else {
            bucket = String(Substring(rest))
            key = nil
        }
        if let key { try NameValidation.validateKey(key) }
    }

    /// Percent-decodes; malformed escapes are `InvalidURI`, invalid UTF-8 is `InvalidArgument`.
    package static func decode(_ text: Substring) throws(S3Error) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        var it = text.utf8.makeIterator()
        while let b = it.next() {
            if b == UInt8(ascii: "%") {
                guard let h = it.next(), let l = it.next(), let hv = ASCII.hexDigitValue(h),
                    let lv = ASCII.hexDigitValue(l)
                else {
                    throw .invalidURI
                }
                out.append(hv << 4 | lv)
            } else {
                out.append(b)
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else {
            throw .invalidArgument("The request URI is not valid UTF-8 after percent-decoding.", name: "URI")
        }
        return s
    }
}
