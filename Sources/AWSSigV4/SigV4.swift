import Essentials
package import Foundation
package import Hashing

/// The pieces of AWS Signature Version 4 that both a client (signing) and a
/// server (verifying) need. All functions are pure and thread-safe.
package enum SigV4 {
    /// The algorithm name that opens every `Authorization` header.
    package static let algorithm = "AWS4-HMAC-SHA256"
    /// The payload hash value that tells S3 the body is not signed.
    package static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The payload hash value of an aws-chunked streaming upload.
    package static let streamingPayload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
    /// SHA-256 of the empty string, the payload hash of a request without a body.
    package static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    private static let unreserved: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for c in UInt8(ascii: "A")...UInt8(ascii: "Z") { table[Int(c)] = true }
        for c in UInt8(ascii: "a")...UInt8(ascii: "z") { table[Int(c)] = true }
        for c in UInt8(ascii: "0")...UInt8(ascii: "9") { table[Int(c)] = true }
        for c in "-_.~".utf8 { table[Int(c)] = true }
        return table
    }()

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Percent-encodes every byte of the UTF-8 form of `string` except the
    /// unreserved characters `A–Z a–z 0–9 - _ . ~`, as AWS's `UriEncode` does.
    /// - Parameters:
    ///   - string: The decoded text (an object key, a query name or value).
    ///   - encodeSlash: `false` for an S3 path, where `/` separates segments;
    ///     `true` for query strings.
    package static func uriEncode(_ string: String, encodeSlash: Bool = true) -> String {
        var out = [UInt8]()
        out.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            if unreserved[Int(byte)] || (!encodeSlash && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `%XX` escapes. Returns nil for a truncated or non-hex escape or
    /// for bytes that are not valid UTF-8.
    /// - Parameters:
    ///   - string: Percent-encoded text.
    ///   - plusAsSpace: Treat `+` as a space (HTML form encoding). S3 paths and
    ///     SigV4 query strings do not; pass `false` for them.
    package static func percentDecode(_ string: String, plusAsSpace: Bool = false) -> String? {
        var out = [UInt8]()
        out.reserveCapacity(string.utf8.count)
        var iterator = Array(string.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let h = iterator.next(), let l = iterator.next(), let hv = ASCII.hexDigitValue(h),
                    let lv = ASCII.hexDigitValue(l)
                else { return nil }
                out.append(hv << 4 | lv)
            } else if plusAsSpace && byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else {
                out.append(byte)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// The canonical query string: each name and value URI-encoded, sorted by
    /// encoded name then value, joined with `&`.
    /// - Parameter items: Decoded name/value pairs (a name without `=` has an empty value).
    package static func canonicalQueryString(_ items: [(name: String, value: String)]) -> String {
        var encoded: [(name: String, value: String)] = items.map { item in
            (name: uriEncode(item.name), value: uriEncode(item.value))
        }
        encoded.sort { (a: (name: String, value: String), b: (name: String, value: String)) -> Bool in
            a.name == b.name ? a.value < b.value : a.name < b.name
        }
        var parts: [String] = []
        parts.reserveCapacity(encoded.count)
        for item in encoded { parts.append(item.name + "=" + item.value) }
        return parts.joined(separator: "&")
    }

    /// Collapses runs of spaces and trims, as SigV4 requires of header values.
    package static func canonicalHeaderValue(_ value: String) -> String {
        // Nearly every value has nothing to trim or collapse: one pass over its bytes says so.
        var clean = true
        var previous: UInt8 = 0x20
        for byte in value.utf8 {
            if byte == 0x09 || (byte == 0x20 && previous == 0x20) {
                clean = false
                break
            }
            previous = byte
        }
        if clean, previous != 0x20 || value.isEmpty { return value }
        let trimmed = ASCII.trimmingSpaces(value)
        guard trimmed.utf8.contains(where: { $0 == 0x20 }) else { return String(trimmed) }
        var out: [UInt8] = []
        out.reserveCapacity(trimmed.utf8.count)
        var lastWasSpace = false
        for byte in trimmed.utf8 {
            let isSpace = byte == 0x20
            if !(isSpace && lastWasSpace) { out.append(byte) }
            lastWasSpace = isSpace
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Builds the canonical request.
    /// - Parameters:
    ///   - method: HTTP method, upper case.
    ///   - canonicalURI: The URI-encoded path (see ``uriEncode(_:encodeSlash:)`` with `encodeSlash: false`).
    ///   - canonicalQuery: See ``canonicalQueryString(_:)``.
    ///   - headers: Lower-cased names with their values, for every signed header.
    ///   - payloadHash: The `x-amz-content-sha256` value.
    /// - Returns: The canonical request and the `SignedHeaders` list.
    package static func canonicalRequest(
        method: String, canonicalURI: String, canonicalQuery: String,
        headers: [(name: String, value: String)], payloadHash: String
    ) -> (request: String, signedHeaders: String) {
        let built = canonicalRequestBytes(
            method: method, canonicalURI: canonicalURI, canonicalQuery: canonicalQuery, headers: headers,
            payloadHash: payloadHash)
        return (String(decoding: built.request, as: UTF8.self), built.signedHeaders)
    }

    /// ``canonicalRequest(method:canonicalURI:canonicalQuery:headers:payloadHash:)`` as UTF-8 bytes, built in
    /// one buffer (it is hashed, never shown, on every signed request).
    package static func canonicalRequestBytes(
        method: String, canonicalURI: String, canonicalQuery: String,
        headers: [(name: String, value: String)], payloadHash: String
    ) -> (request: [UInt8], signedHeaders: String) {
        // Lower-cased names, sorted; a repeated name keeps its values in the order given, joined with `,`.
        var entries = headers.enumerated().map { (index, header) in
            (name: asciiLowercased(header.name), value: canonicalHeaderValue(header.value), index: index)
        }
        entries.sort { $0.name == $1.name ? $0.index < $1.index : $0.name < $1.name }
        var out: [UInt8] = []
        out.reserveCapacity(256 + canonicalURI.utf8.count + canonicalQuery.utf8.count)
        out.append(contentsOf: method.utf8)
        out.append(0x0A)
        out.append(contentsOf: canonicalURI.utf8)
        out.append(0x0A)
        out.append(contentsOf: canonicalQuery.utf8)
        out.append(0x0A)
        var signed: [UInt8] = []
        for (i, entry) in entries.enumerated() {
            if i > 0, entries[i - 1].name == entry.name {
                out.removeLast()  // the newline: another value of the same header follows
                out.append(UInt8(ascii: ","))
            } else {
                if !signed.isEmpty { signed.append(UInt8(ascii: ";")) }
                signed.append(contentsOf: entry.name.utf8)
                out.append(contentsOf: entry.name.utf8)
                out.append(UInt8(ascii: ":"))
            }
            out.append(contentsOf: entry.value.utf8)
            out.append(0x0A)
        }
        out.append(0x0A)
        out.append(contentsOf: signed)
        out.append(0x0A)
        out.append(contentsOf: payloadHash.utf8)
        return (out, String(decoding: signed, as: UTF8.self))
    }

    /// ASCII letters lower-cased (header names are ASCII; no locale or Unicode tables involved).
    static func asciiLowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
        return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC.
    package static func amzDate(_ date: Date) -> String {
        let t = Int64(date.timeIntervalSince1970.rounded(.down))
        var tmValue = tm()
        var time = time_t(t)
        gmtime_r(&time, &tmValue)
        // Digits written directly: `String(format:)` goes through Foundation's formatter for every request.
        var out = [UInt8]()
        out.reserveCapacity(16)
        ASCII.appendDecimal(Int(tmValue.tm_year) + 1900, digits: 4, to: &out)
        ASCII.appendDecimal(Int(tmValue.tm_mon) + 1, digits: 2, to: &out)
        ASCII.appendDecimal(Int(tmValue.tm_mday), digits: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        ASCII.appendDecimal(Int(tmValue.tm_hour), digits: 2, to: &out)
        ASCII.appendDecimal(Int(tmValue.tm_min), digits: 2, to: &out)
        ASCII.appendDecimal(Int(tmValue.tm_sec), digits: 2, to: &out)
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses `yyyyMMdd'T'HHmmss'Z'`; nil when malformed.
    package static func parseAmzDate(_ string: String) -> Date? { HTTPDate.parseAmzDate(string) }

    /// The credential scope `date/region/service/aws4_request`.
    package static func scope(date: String, region: String, service: String) -> String {
        "\(date)/\(region)/\(service)/aws4_request"
    }

    /// The string to sign for a canonical request.
    package static func stringToSign(canonicalRequest: String, amzDate: String, scope: String) -> String {
        String(
            decoding: stringToSignBytes(
                canonicalRequestBytes: Array(canonicalRequest.utf8), amzDate: amzDate, scope: scope),
            as: UTF8.self)
    }

    /// The string to sign for a canonical request given as bytes, as bytes (what the HMAC takes).
    static func stringToSignBytes(canonicalRequestBytes: [UInt8], amzDate: String, scope: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(algorithm.utf8.count + amzDate.utf8.count + scope.utf8.count + 67)
        out.append(contentsOf: algorithm.utf8)
        out.append(0x0A)
        out.append(contentsOf: amzDate.utf8)
        out.append(0x0A)
        out.append(contentsOf: scope.utf8)
        out.append(0x0A)
        appendHex(digest: SHA256.hash(data: canonicalRequestBytes), to: &out)
        return out
    }

    /// A request's signature as lower-case hex bytes, with its canonical request — the one computation the signer
    /// and a verifier share, worked on as bytes (it runs for every request).
    /// - Parameters:
    ///   - canonicalRequest: ``canonicalRequest(method:canonicalURI:canonicalQuery:headers:payloadHash:)``'s bytes.
    ///   - amzDate: The request's `x-amz-date`.
    ///   - secret: The secret access key.
    ///   - date: The scope's day (`yyyyMMdd`).
    ///   - region: The scope's region.
    ///   - service: The scope's service.
    /// - Returns: 64 lower-case hex digits.
    package static func signatureHex(
        canonicalRequest: [UInt8], amzDate: String, secret: String, date: String, region: String, service: String
    ) -> [UInt8] {
        let toSign = stringToSignBytes(
            canonicalRequestBytes: canonicalRequest, amzDate: amzDate,
            scope: scope(date: date, region: region, service: service))
        var hex: [UInt8] = []
        appendHex(
            digest: signingMAC(secret: secret, date: date, region: region, service: service).code(toSign), to: &hex)
        return hex
    }

    /// The derived signing key for one day, region and service.
    package static func signingKey(secret: String, date: String, region: String, service: String) -> SymmetricKey {
        let cacheKey = SigningKeyCache.Key(secret: secret, date: date, region: region, service: service)
        if let key = SigningKeyCache.shared.key(for: cacheKey) { return key }
        var key = SymmetricKey(data: Array("AWS4\(secret)".utf8))
        for part in [date, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        SigningKeyCache.shared.store(key, for: cacheKey)
        return key
    }

    /// ``signingKey(secret:date:region:service:)`` ready to sign with: its HMAC set up once per scope.
    static func signingMAC(secret: String, date: String, region: String, service: String) -> PrekeyedHMAC {
        let cacheKey = SigningKeyCache.Key(secret: secret, date: date, region: region, service: service)
        return SigningKeyCache.shared.mac(for: cacheKey)
            ?? PrekeyedHMAC(key: signingKey(secret: secret, date: date, region: region, service: service))
    }

    /// Hex HMAC-SHA256 of `string` under `key`.
    package static func signature(_ string: String, key: SymmetricKey) -> String {
        hex(HMAC<SHA256>.authenticationCode(for: Array(string.utf8), using: key))
    }

    /// Lower-case hex SHA-256 of UTF-8 text.
    package static func sha256Hex(_ string: String) -> String { hex(SHA256.hash(data: Array(string.utf8))) }

    /// Lower-case hex SHA-256 of bytes.
    package static func sha256Hex<D: DataProtocol>(data: D) -> String { hex(SHA256.hash(data: data)) }

    /// Lower-case hex of any byte sequence.
    package static func hex<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        appendHex(bytes, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the lower-case hex of `bytes` to `out`.
    static func appendHex<S: Sequence>(_ bytes: S, to out: inout [UInt8]) where S.Element == UInt8 {
        for b in bytes {
            out.append(lowerHexDigits[Int(b >> 4)])
            out.append(lowerHexDigits[Int(b & 0x0F)])
        }
    }

    /// Appends the lower-case hex of a digest to `out`, reading its bytes in place.
    static func appendHex(digest: some ContiguousBytes, to out: inout [UInt8]) {
        digest.withUnsafeBytes { raw in
            out.reserveCapacity(out.count + raw.count * 2)
            appendHex(raw, to: &out)
        }
    }

    private static let lowerHexDigits = Array("0123456789abcdef".utf8)

    /// Compares two strings in time independent of where they first differ.
    package static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        constantTimeEquals(Array(a.utf8), Array(b.utf8))
    }

    /// Compares two byte strings in time independent of where they differ.
    package static func constantTimeEquals(_ x: [UInt8], _ y: [UInt8]) -> Bool {
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<x.count { diff |= x[i] ^ y[i] }
        return diff == 0
    }
}

/// The derived signing keys of the last few (secret, day, region, service) scopes: deriving one costs four
/// HMACs, and every request of a day shares it. Bounded; thread-safe.
final class SigningKeyCache: Sendable {
    struct Key: Hashable {
        var secret: String
        var date: String
        var region: String
        var service: String
    }

    // @unchecked: an immutable key and HMAC state; swift-crypto does not mark `SymmetricKey` Sendable on Linux.
    struct Entry: @unchecked Sendable {
        var key: SymmetricKey
        var mac: PrekeyedHMAC
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// The entry asked for last: nearly every request of a process uses the same scope, and comparing four
        /// short strings costs less than hashing them.
        var last: (key: Key, value: Entry)?
    }

    static let shared = SigningKeyCache()
    private let state = LockedBox(State())
    private let limit = 32

    private func entry(for key: Key) -> Entry? {
        state.withLock { state in
            if let last = state.last, last.key == key { return last.value }
            guard let value = state.entries[key] else { return nil }
            state.last = (key, value)
            return value
        }
    }

    func key(for key: Key) -> SymmetricKey? { entry(for: key)?.key }

    func mac(for key: Key) -> PrekeyedHMAC? { entry(for: key)?.mac }

    func store(_ value: SymmetricKey, for key: Key) {
        let entry = Entry(key: value, mac: PrekeyedHMAC(key: value))
        let limit = self.limit
        state.withLock { state in
            if state.entries.count >= limit { state.entries.removeAll(keepingCapacity: true) }
            state.entries[key] = entry
            state.last = (key, entry)
        }
    }
}

/// HMAC-SHA256 (RFC 2104) under one key whose padded inner and outer blocks are hashed once: each code then
/// costs two compression runs and the key set-up less than `HMAC<SHA256>` (a signing key serves a whole day).
// @unchecked: two immutable SHA256 states, copied (value types) before every use; swift-crypto does not mark them.
struct PrekeyedHMAC: @unchecked Sendable {
    private let inner: SHA256
    private let outer: SHA256

    init(key: SymmetricKey) {
        var block = [UInt8](repeating: 0, count: 64)
        key.withUnsafeBytes { raw in
            if raw.count > 64 {
                block.replaceSubrange(0..<32, with: Array(SHA256.hash(data: raw)))
            } else {
                block.replaceSubrange(0..<raw.count, with: raw)
            }
        }
        var inner = SHA256()
        inner.update(data: block.map { $0 ^ 0x36 })
        var outer = SHA256()
        outer.update(data: block.map { $0 ^ 0x5C })
        self.inner = inner
        self.outer = outer
    }

    /// The code of `message` (the hash states are copied, never changed: safe from any thread).
    func code(_ message: [UInt8]) -> SHA256.Digest {
        var inner = self.inner
        inner.update(data: message)
        var outer = self.outer
        inner.finalize().withUnsafeBytes { outer.update(bufferPointer: $0) }
        return outer.finalize()
    }
}
