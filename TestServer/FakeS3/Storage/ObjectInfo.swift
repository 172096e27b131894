import Foundation

/// What the server knows about one stored object (everything but its bytes).
/// On disk this is the JSON sidecar next to the object's data file.
struct ObjectInfo: Codable, Sendable, Hashable {
    /// The object key (valid UTF-8, at most 1,024 bytes).
    var key: String
    /// Size in bytes.
    var size: Int64
    /// The ETag with its quotes: `"<md5 hex>"`, or `"<md5 of part md5s>-N"` for a multipart upload.
    var etag: String
    /// When the object was written (millisecond precision).
    var lastModified: Date
    /// The Content-Type given at upload (`binary/octet-stream` when none was).
    var contentType: String
    /// `x-amz-meta-*` values by lower-cased name (without the prefix).
    var userMetadata: [String: String] = [:]
    /// Other stored representation headers by lower-cased name (`content-encoding`, `cache-control`, …).
    var headers: [String: String] = [:]
    /// Stored checksums by lower-cased algorithm name (`crc32`, `crc32c`, `sha1`, `sha256`), base64.
    var checksums: [String: String] = [:]
    /// How ``checksums`` cover the object (`x-amz-checksum-type`): `FULL_OBJECT` (every single-request upload with
    /// a checksum, and multipart uploads created so) or `COMPOSITE` (a multipart checksum of part checksums,
    /// written `<base64>-<parts>`); nil when there is no checksum.
    var checksumType: String?
    /// Part sizes when the object was assembled from a multipart upload.
    var partSizes: [Int64]?
    /// Disk storage: the data file's name inside the bucket's `objects` folder.
    var dataFile: String?

    /// The stored representation headers S3 keeps and returns on GET/HEAD.
    static let storedHeaderNames = [
        "cache-control", "content-disposition", "content-encoding", "content-language", "expires",
    ]

    /// `lastModified` truncated to whole seconds, the precision of HTTP dates.
    var lastModifiedSeconds: Date { Date(timeIntervalSince1970: lastModified.timeIntervalSince1970.rounded(.down)) }
}

/// One bucket as listed by ListBuckets.
struct BucketInfo: Codable, Sendable, Hashable {
    var name: String
    var creationDate: Date
}
