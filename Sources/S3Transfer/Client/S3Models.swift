import AWSSigV4
import CZlib
import Essentials
package import Foundation
import Hashing

/// One object in a listing.
package struct S3ObjectSummary: Sendable, Hashable {
    /// The full key.
    package var key: String
    /// Size in bytes.
    package var size: Int64
    /// The ETag, without quotes.
    package var etag: String
    /// When the object was last written.
    package var lastModified: Date

    /// - Parameters:
    ///   - key: The key.
    ///   - size: Size in bytes.
    ///   - etag: ETag without quotes.
    ///   - lastModified: Last write time.
    package init(key: String, size: Int64, etag: String, lastModified: Date) {
        self.key = key
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// One page of a ListObjectsV2 listing. A page is only ever produced from a complete, well-formed
/// response: a truncated or malformed listing throws instead of returning fewer objects.
package struct ListObjectsPage: Sendable, Hashable {
    /// The objects on this page, in key order.
    package var objects: [S3ObjectSummary]
    /// The common prefixes (with a delimiter), in order.
    package var commonPrefixes: [String]
    /// Whether more pages follow.
    package var isTruncated: Bool
    /// The token for the next page; present whenever ``isTruncated`` is true.
    package var nextContinuationToken: String?

    /// - Parameters:
    ///   - objects: Objects on this page.
    ///   - commonPrefixes: Common prefixes.
    ///   - isTruncated: More pages follow.
    ///   - nextContinuationToken: Token of the next page.
    package init(
        objects: [S3ObjectSummary], commonPrefixes: [String], isTruncated: Bool, nextContinuationToken: String?
    ) {
        self.objects = objects
        self.commonPrefixes = commonPrefixes
        self.isTruncated = isTruncated
        self.nextContinuationToken = nextContinuationToken
    }
}

/// A full-object checksum algorithm S3 computes and checks on upload, stores with the object and returns on download
/// (`x-amz-checksum-<name>`).
public enum S3ChecksumAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// CRC-32 (zlib's polynomial).
    case crc32
    /// CRC-32C (Castagnoli), computed in hardware where the CPU has it.
    case crc32c
    /// SHA-256.
    case sha256

    /// The checksum of `data`, base64 as S3 sends it.
    package func checksum(of data: Data) -> String {
        data.withUnsafeBytes { raw -> String in
            switch self {
            case .crc32: Self.base64(czlib_crc32(0, raw.baseAddress, raw.count))
            case .crc32c: Self.base64(czlib_crc32c(0, raw.baseAddress, raw.count))
            case .sha256: Data(SHA256.hash(data: raw)).base64EncodedString()
            }
        }
    }

    /// A 32-bit checksum as S3 writes it: big-endian bytes in base64.
    static func base64(_ value: UInt32) -> String {
        withUnsafeBytes(of: value.bigEndian) { Data($0).base64EncodedString() }
    }
}

/// The full-object checksums S3 returned (with `x-amz-checksum-mode: ENABLED`), base64 as sent.
package struct S3Checksums: Sendable, Hashable, Codable {
    /// `x-amz-checksum-crc32`.
    package var crc32: String?
    /// `x-amz-checksum-crc32c`.
    package var crc32c: String?
    /// `x-amz-checksum-sha256`.
    package var sha256: String?

    /// - Parameters:
    ///   - crc32: Base64 CRC-32.
    ///   - crc32c: Base64 CRC-32C.
    ///   - sha256: Base64 SHA-256.
    package init(crc32: String? = nil, crc32c: String? = nil, sha256: String? = nil) {
        self.crc32 = crc32
        self.crc32c = crc32c
        self.sha256 = sha256
    }

    /// True when none was returned.
    package var isEmpty: Bool { crc32 == nil && crc32c == nil && sha256 == nil }

    init(head: HTTPResponseHead) {
        // A composite checksum ("…-N", of a multipart upload) does not cover the object as a whole.
        func full(_ name: String) -> String? {
            guard let value = head[name], !value.contains("-") else { return nil }
            return value
        }
        self.init(
            crc32: full("x-amz-checksum-crc32"), crc32c: full("x-amz-checksum-crc32c"),
            sha256: full("x-amz-checksum-sha256"))
    }
}

/// What HeadObject (or a GetObject response) says about an object.
package struct S3ObjectHead: Sendable, Hashable {
    /// Size of the whole object in bytes.
    package var size: Int64
    /// The ETag, without quotes.
    package var etag: String
    /// Last write time, when sent.
    package var lastModified: Date?
    /// The `Content-Type`, when sent.
    package var contentType: String?
    /// User metadata from `x-amz-meta-*` headers, names lower-cased without the prefix.
    package var metadata: [String: String]
    /// Full-object checksums, when the service returned them.
    package var checksums: S3Checksums

    /// - Parameters:
    ///   - size: Object size.
    ///   - etag: ETag without quotes.
    ///   - lastModified: Last write time.
    ///   - contentType: Content type.
    ///   - metadata: User metadata.
    ///   - checksums: Checksums.
    package init(
        size: Int64, etag: String, lastModified: Date?, contentType: String?, metadata: [String: String],
        checksums: S3Checksums
    ) {
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
        self.metadata = metadata
        self.checksums = checksums
    }

    /// The headers ``init(head:)`` reads (a filter for ``HTTPRequest/successHeaders``).
    static let headersRead = HTTPHeaderFilter(
        names: ["etag", "content-length", "content-range", "last-modified", "content-type"],
        prefixes: ["x-amz-meta-", "x-amz-checksum-"])

    /// Reads a HEAD or GET response's headers. For a 206 the size is the total from `Content-Range`.
    init(head: HTTPResponseHead) throws(S3Error) {
        guard let rawETag = head["etag"] else { throw .malformedResponse("response without an ETag header") }
        let etag = S3ETag.unquoted(rawETag)
        var size: Int64
        if head.status == 206 {
            guard let range = head["content-range"].flatMap(ContentRange.init(header:)), let total = range.total
            else { throw .malformedResponse("206 response without a usable Content-Range") }
            size = total
        } else {
            guard let length = head["content-length"].flatMap({ Int64($0) }), length >= 0 else {
                throw .malformedResponse("response without a Content-Length")
            }
            size = length
        }
        var metadata: [String: String] = [:]
        for (name, value) in head.headers where name.hasPrefix("x-amz-meta-") {
            metadata[String(name.dropFirst("x-amz-meta-".count))] = value
        }
        self.init(
            size: size, etag: etag, lastModified: head["last-modified"].flatMap(HTTPDate.parse),
            contentType: head["content-type"], metadata: metadata, checksums: S3Checksums(head: head))
    }
}

/// ETag helpers: the one place ETags are unquoted and compared.
package enum S3ETag {
    /// The ETag without surrounding spaces, a weak `W/` marker and its quotes (worked on as UTF-8 bytes: this
    /// runs for every response).
    package static func unquoted(_ raw: String) -> String {
        var bytes = ASCII.trimmingSpaces(raw).utf8[...]
        if bytes.starts(with: "W/".utf8) { bytes = bytes.dropFirst(2) }
        let quote = UInt8(ascii: "\"")
        if bytes.count >= 2, bytes.first == quote, bytes.last == quote { bytes = bytes.dropFirst().dropLast() }
        return String(Substring(bytes))
    }

    package static func quoted(_ etag: String) -> String { "\"\(etag)\"" }

    /// Whether two ETags name the same version, as S3 means them (quotes and a weak marker aside).
    package static func same(_ a: String, _ b: String) -> Bool { unquoted(a) == unquoted(b) }

    /// Whether a plain-MD5 ETag (hex digits in either case) names exactly these digest bytes — compared byte by
    /// byte, no hex string made (this runs for every verified download).
    static func names(_ etag: String, digest: some Collection<UInt8>) -> Bool {
        guard etag.utf8.count == 2 * digest.count else { return false }
        var text = etag.utf8.makeIterator()
        for byte in digest {
            guard let high = text.next().flatMap(ASCII.hexDigitValue),
                let low = text.next().flatMap(ASCII.hexDigitValue),
                high << 4 | low == byte
            else { return false }
        }
        return true
    }

    /// True when the ETag is a plain MD5 of the content (32 hex digits, no multipart suffix).
    static func isPlainMD5(_ etag: String) -> Bool {
        etag.utf8.count == 32
            && etag.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) || ($0 >= 65 && $0 <= 70) }
    }
}

/// A parsed `Content-Range: bytes a-b/total` header.
package struct ContentRange: Equatable {
    package var range: Range<Int64>
    package var total: Int64?

    package init?(header: String) {
        let trimmed = ASCII.trimmingSpaces(header)
        guard trimmed.hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst(6)
        let parts = spec.split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        // `last + 1` must be an Int64 too: a last byte of 2⁶³−1 has no range here.
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]), first <= last,
            last < Int64.max
        else { return nil }
        range = first..<(last + 1)
        if parts[1] == "*" {
            total = nil
        } else {
            guard let t = Self.number(parts[1]), t >= last + 1 else { return nil }
            total = t
        }
    }

    /// Decimal digits only (no sign, as RFC 9110 writes them), as an Int64.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}
