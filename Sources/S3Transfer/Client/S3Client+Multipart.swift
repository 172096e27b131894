package import Foundation

/// One uploaded part, as CompleteMultipartUpload wants it.
package struct S3CompletedPart: Sendable, Hashable {
    /// The part number (1…10000).
    package var partNumber: Int
    /// The ETag UploadPart returned.
    package var etag: String

    /// - Parameters:
    ///   - partNumber: The part number.
    ///   - etag: The part's ETag.
    package init(partNumber: Int, etag: String) {
        self.partNumber = partNumber
        self.etag = etag
    }
}

/// The multipart operations one call at a time, for callers that drive an upload themselves (the ``Uploader`` does
/// it all: checksums, parallel parts, resume). Each is the uploader's own request, with the client's retry policy
/// and no checksum.
extension S3Client {
    /// Starts a multipart upload.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - contentType: The `Content-Type` to store.
    ///   - metadata: User metadata.
    /// - Returns: The upload id.
    package func createMultipartUpload(
        bucket: String, key: String, contentType: String? = nil, metadata: [String: String] = [:]
    ) async throws(S3Error) -> String {
        try await createUpload(
            bucket: bucket, key: key, contentType: contentType, metadata: metadata, checksum: nil, fullObject: false,
            policy: configuration.retryPolicy)
    }

    /// Uploads one part.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - uploadId: From ``createMultipartUpload(bucket:key:contentType:metadata:)``.
    ///   - partNumber: 1…10000.
    ///   - body: The part's bytes (at least 5 MiB except for the last part).
    /// - Returns: The part's ETag.
    package func uploadPart(bucket: String, key: String, uploadId: String, partNumber: Int, body: Data)
        async throws(S3Error) -> String
    {
        try await uploadPart(
            bucket: bucket, key: key, uploadId: uploadId, number: partNumber, body: .data(body), checksum: nil,
            policy: configuration.retryPolicy)
    }

    /// Completes a multipart upload.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - uploadId: The upload.
    ///   - parts: Every part, in part-number order.
    /// - Returns: The object's ETag.
    @discardableResult
    package func completeMultipartUpload(bucket: String, key: String, uploadId: String, parts: [S3CompletedPart])
        async throws(S3Error) -> String
    {
        var attempts = 0
        return try await completeUpload(
            bucket: bucket, key: key, uploadId: uploadId,
            parts: parts.map { S3PartToComplete(number: $0.partNumber, etag: $0.etag, checksum: nil) },
            fullObject: nil, ifNoneMatch: false, policy: configuration.retryPolicy, attempts: &attempts
        ).etag
    }

    /// Abandons a multipart upload and frees its parts (one the service no longer knows counts as abandoned).
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - uploadId: The upload.
    package func abortMultipartUpload(bucket: String, key: String, uploadId: String) async throws(S3Error) {
        try await abortUpload(bucket: bucket, key: key, uploadId: uploadId, policy: configuration.retryPolicy)
    }

    /// `&`, `<`, `>` and `"` as entities, found as bytes: Foundation's `replacingOccurrences` compares Characters,
    /// and a `&` that a combining mark follows is another Character, which it left as it was (the document then
    /// did not parse).
    static func xmlEscape(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 }) else { return s }
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count + 16)
        for byte in s.utf8 {
            switch byte {
            case 0x26: out += "&amp;".utf8
            case 0x3C: out += "&lt;".utf8
            case 0x3E: out += "&gt;".utf8
            case 0x22: out += "&quot;".utf8
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
