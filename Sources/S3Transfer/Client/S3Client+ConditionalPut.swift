import AWSSigV4
import Essentials
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
        case .keyAbsent:
            headers.append(("if-none-match", "*"))
            let (head, _) = try await send {
                makeRequest(method: "PUT", bucket: bucket, key: key, headers: headers, body: body, credentials: $0)
            }
            return S3ETag.unquoted(head["etag"] ?? "")
        case .etagMatches(let etag):
            let base = headers
            let head = try await sendIfMatch(bucket: bucket, key: key, etag: etag) { ifMatch, credentials in
                makeRequest(
                    method: "PUT", bucket: bucket, key: key, headers: base + [("if-match", ifMatch)], body: body,
                    credentials: credentials)
            }
            return S3ETag.unquoted(head["etag"] ?? "")
        }
    }

    /// Deletes an object only while it is the version with `etag` (`If-Match` on DeleteObject, as S3 has
    /// offered since 2024).
    ///
    /// A service that ignores `If-Match` on a delete (older gateways) deletes whatever the key holds: callers
    /// that must not delete another writer's version read the object's ETag just before (``headObject(bucket:key:)``)
    /// and accept the race that remains between that read and this request.
    /// - Throws: ``S3Error/preconditionFailed`` when the key holds another version; ``S3Error/noSuchKey`` when it
    ///   holds nothing (on services that say so); other ``S3Error``s.
    package func deleteObject(bucket: String, key: String, ifMatch etag: String) async throws(S3Error) {
        _ = try await sendIfMatch(bucket: bucket, key: key, etag: etag) { ifMatch, credentials in
            makeRequest(
                method: "DELETE", bucket: bucket, key: key, headers: [("if-match", ifMatch)], credentials: credentials)
        }
    }

    /// Sends a request conditional on `If-Match: etag` in the form this endpoint compares (``IfMatchForm``).
    /// A `412` is checked once per client: when a read of the key shows exactly the ETag that was refused, the
    /// endpoint compares the bare form (Ceph's RADOS Gateway 16 does), which every later request then uses; the
    /// refused request is sent again in that form.
    func sendIfMatch(
        bucket: String, key: String, etag: String,
        _ request: (_ ifMatch: String, _ credentials: AWSCredentials?) -> HTTPRequest
    ) async throws(S3Error) -> HTTPResponseHead {
        let bare = S3ETag.unquoted(etag)
        let form = ifMatchForm.withLock { $0 }
        do {
            let (head, _) = try await send { request(form.header(bare), $0) }
            return head
        } catch {
            // Another writer, or an endpoint that compares the bare form: a read tells which.
            guard error == .preconditionFailed, form == .quoted,
                // try?: a failed read cannot tell: the precondition failure is thrown
                let current = try? await headObject(bucket: bucket, key: key), S3ETag.unquoted(current.etag) == bare
            else { throw error }
        }
        let (head, _) = try await send { request(IfMatchForm.bare.header(bare), $0) }
        ifMatchForm.withLock { $0 = .bare }
        return head
    }
}

/// How an endpoint compares the ETag in a write's `If-Match`. RFC 9110 and S3 take it quoted (`"4f98…"`); Ceph's
/// RADOS Gateway 16 compares it with the stored ETag without quotes, so a quoted one never matches there.
enum IfMatchForm: Sendable, Hashable {
    case quoted
    case bare

    /// The header's value for an ETag given without quotes.
    func header(_ bare: String) -> String { self == .quoted ? S3ETag.quoted(bare) : bare }
}
