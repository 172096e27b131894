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
        let uri = head.uri
        let pathPart: Substring
        if let q = uri.firstIndex(of: "?") {
            pathPart = uri[..<q]
            rawQuery = String(uri[uri.index(after: q)...])
        } else {
            pathPart = Substring(uri)
            rawQuery = ""
        }
        guard pathPart.hasPrefix("/") else { throw .invalidURI }
        rawPath = String(pathPart)
        path = try Self.decode(pathPart)
        var items: [(name: String, value: String)] = []
        for part in rawQuery.split(separator: "&", omittingEmptySubsequences: true) {
            if let eq = part.firstIndex(of: "=") {
                items.append((try Self.decode(part[..<eq]), try Self.decode(part[part.index(after: eq)...])))
            } else {
                items.append((try Self.decode(part), ""))
            }
        }
        query = items

        var host = head.headers.first(name: "host") ?? ""
        if host.hasPrefix("[") {
            host = ""  // IPv6 literal: never virtual-hosted.
        } else if let colon = host.lastIndex(of: ":") {
            host = String(host[..<colon])
        }
        host = host.lowercased()
        var virtualBucket: String?
        for suffix in virtualHostSuffixes where host.hasSuffix("." + suffix) {
            virtualBucket = String(host.dropLast(suffix.count + 1))
            break
        }
        let rest = path.dropFirst()  // drop the leading "/"
        if let virtualBucket {
            isVirtualHosted = true
            bucket = virtualBucket
            key = rest.isEmpty ? nil : String(rest)
        } else if rest.isEmpty {
            bucket = nil
            key = nil
        } else if let slash = rest.firstIndex(of: "/") {
            bucket = String(rest[..<slash])
            let k = rest[rest.index(after: slash)...]
            key = k.isEmpty ? nil : String(k)
        } else {
            bucket = String(rest)
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
