package import Foundation

/// When a write may replace what a key holds (S3's conditional writes).
package enum S3WriteCondition: Sendable, Hashable {
    /// Only when the key holds nothing (`If-None-Match: *`).
    case keyAbsent
    /// Only when the key holds the object with this ETag (`If-Match`).
    case etagMatches(String)
}

extension S3Client {
    /// Writes a small object in one request only if `condition` holds — the read-merge-write step of a value
    /// several writers share. Signed over the body's SHA-256, with `Content-MD5`.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - body: The bytes (meant for small objects: they are held in memory).
    ///   - contentType: The `Content-Type` to store.
    ///   - condition: What the key must hold for the write to happen.
    /// - Returns: The new ETag.
    /// - Throws: ``S3Error/preconditionFailed`` when the condition does not hold (another writer was first: read
    ///   again, merge, retry); ``S3Error/noSuchKey`` for ``S3WriteCondition/etagMatches(_:)`` on a key that holds
    ///   nothing; other ``S3Error``s.
    package func putObject(
        bucket: String, key: String, body: Data, contentType: String? = nil, condition: S3WriteCondition
    ) async throws(S3Error) -> String {
        var headers: [(name: String, value: String)] = [("content-length", String(body.count))]
        if let contentType { headers.append(("content-type", contentType)) }
        switch condition {
        case .keyAbsent: headers.append(("if-none-match", "*"))
        case .etagMatches(let etag): headers.append(("if-match", S3ETag.quoted(S3ETag.unquoted(etag))))
        }
        let (head, _) = try await send {
            makeRequest(method: "PUT", bucket: bucket, key: key, headers: headers, body: body)
        }
        return S3ETag.unquoted(head["etag"] ?? "")
    }
}
