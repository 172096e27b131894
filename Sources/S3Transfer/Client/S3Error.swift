import Foundation

/// Everything that can go wrong talking to S3 or downloading from it. Each case's ``description`` says
/// what happened and what to do about it.
package indirect enum S3Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key does not exist (HTTP 404 `NoSuchKey`).
    case noSuchKey
    /// The bucket does not exist (HTTP 404 `NoSuchBucket`).
    case noSuchBucket
    /// The credentials may not do this (HTTP 403 `AccessDenied`).
    case accessDenied
    /// The access key id is unknown to the service.
    case invalidAccessKeyId
    /// The service computed a different signature: usually a wrong secret key.
    case signatureDoesNotMatch
    /// The service asks to slow down (HTTP 503 `SlowDown`).
    case slowDown
    /// The local clock is too far from the service's, even after correcting it once.
    case requestTimeTooSkewed
    /// The bucket lives in another region (HTTP 301); the region comes from `x-amz-bucket-region`.
    case permanentRedirect(region: String?)
    /// An `If-Match` (or other) precondition failed (HTTP 412): the object is not the version asked for.
    case preconditionFailed
    /// The byte range asked for lies outside the object (HTTP 416).
    case invalidRange
    /// Any other error response.
    case service(code: String, message: String, status: Int, requestID: String?)
    /// No complete response arrived: connection refused or reset, timeout, stall, truncated body.
    case transport(curlCode: Int, message: String)
    /// The response could not be understood (malformed, truncated or incomplete XML, bad headers).
    case malformedResponse(String)
    /// The downloaded bytes do not match the checksum the service gave for them.
    case checksumMismatch(expected: String, actual: String, algorithm: String)
    /// The object changed (a different ETag) while it was being read.
    case objectChanged
    /// The data is in the cloud and this request may not use the network.
    case networkAccessNotAllowed
    /// The request was cancelled.
    case cancelled
    /// Every attempt failed; `lastError` is the last cause.
    case retriesExhausted(lastError: S3Error, attempts: Int)
    /// No credentials to sign with: none found along the credential chain, or the source configured failed
    /// (``CredentialError`` says which and why).
    case credentials(CredentialError)
    /// A local file could not be created, written, synced, renamed or read. An upload whose file changed while it
    /// was read (another size or modification time than at the start) fails with `errno` `ESTALE` (see
    /// ``isSourceFileChanged``).
    case fileSystem(path: String, errno: Int32)

    package var description: String {
        switch self {
        case .noSuchKey:
            return "The object does not exist in the bucket (NoSuchKey). Check the key, or re-list the bucket."
        case .noSuchBucket: return "The bucket does not exist (NoSuchBucket). Check the bucket name and the endpoint."
        case .accessDenied:
            return "Access denied (AccessDenied). The credentials are valid but lack permission for this bucket or key."
        case .invalidAccessKeyId:
            return "The access key id is not known to the service (InvalidAccessKeyId). Check AWS_ACCESS_KEY_ID."
        case .signatureDoesNotMatch:
            return
                "The request signature was rejected (SignatureDoesNotMatch). Check AWS_SECRET_ACCESS_KEY and the region."
        case .slowDown:
            return "The service asked to slow down (SlowDown). Retry later or lower the number of connections."
        case .requestTimeTooSkewed:
            return
                "This computer's clock differs too much from the service's (RequestTimeTooSkewed). Set the clock right."
        case .permanentRedirect(let region):
            if let region { return "The bucket is in region \(region) (PermanentRedirect). Configure that region." }
            return "The bucket is in another region (PermanentRedirect). Configure the bucket's region or endpoint."
        case .preconditionFailed:
            return "The object is no longer the version asked for (PreconditionFailed). Refresh and request again."
        case .invalidRange: return "The byte range lies outside the object (InvalidRange)."
        case .service(let code, let message, let status, let requestID):
            return "The service answered HTTP \(status) \(code): \(message)"
                + (requestID.map { " (request id \($0))" } ?? "")
        case .transport(let code, let message) where Self.tlsTrustCodes.contains(code):
            return
                "The server's TLS certificate was not accepted (curl error \(code): \(message)). Check the endpoint; "
                + "for a private CA set the client's caBundlePath."
        case .transport(let code, let message):
            return "The connection failed (curl error \(code): \(message)). Check the network and the endpoint."
        case .malformedResponse(let detail): return "The service sent a response that could not be read: \(detail)."
        case .checksumMismatch(let expected, let actual, let algorithm):
            return "The downloaded data is corrupt: \(algorithm) is \(actual), expected \(expected). Nothing was kept."
        case .objectChanged:
            return "The object changed on the server while it was being read. Refresh and request again."
        case .networkAccessNotAllowed:
            return
                "The data is in the cloud and network access is not allowed for this request. Allow network access to download or upload it."
        case .cancelled: return "The request was cancelled."
        case .credentials(let error): return error.description
        case .retriesExhausted(let lastError, let attempts):
            return "Gave up after \(attempts) attempts. Last error: \(lastError.description)"
        case .fileSystem(let path, ESTALE):
            return
                "\(path) changed while it was being uploaded (its size or modification time differs). Upload it again."
        case .fileSystem(let path, let code):
            return "Could not write \(path): \(String(cString: strerror(code))). Check free space and permissions."
        }
    }

    /// Whether another attempt may succeed: connection errors, stalls, 5xx, SlowDown — not a certificate that
    /// was refused or a request libcurl cannot make (the same attempt would fail the same way).
    package var isRetryable: Bool {
        switch self {
        case .slowDown: return true
        case .transport(let code, _): return code != -1 && !Self.permanentTransportCodes.contains(code)
        case .service(_, _, let status, _): return status >= 500
        default: return false
        }
    }

    /// libcurl errors about trusting the server: its certificate (60 `PEER_FAILED_VERIFICATION`), the CA bundle
    /// (77 `SSL_CACERT_BADFILE`, 82 `SSL_CRL_BADFILE`), the issuer (83), a pinned key (90), its status (91).
    package static let tlsTrustCodes: Set<Int> = [60, 77, 82, 83, 90, 91]
    /// libcurl errors no retry can fix: TLS trust (``tlsTrustCodes``), the local TLS setup (53, 54, 58 client
    /// certificate, 59 cipher, 64, 66), and requests it cannot make (1 unsupported protocol, 3 malformed URL,
    /// 4 feature not built in, 43 bad argument, 48 unknown option).
    static let permanentTransportCodes: Set<Int> = tlsTrustCodes.union([1, 3, 4, 43, 48, 53, 54, 58, 59, 64, 66])

    /// The error S3 reports with this code, status and message.
    static func fromService(code: String, message: String, status: Int, requestID: String?, region: String?)
        -> S3Error
    {
        switch code {
        case "NoSuchKey": return .noSuchKey
        case "NoSuchBucket": return .noSuchBucket
        case "AccessDenied": return .accessDenied
        case "InvalidAccessKeyId": return .invalidAccessKeyId
        case "SignatureDoesNotMatch": return .signatureDoesNotMatch
        case "SlowDown": return .slowDown
        case "RequestTimeTooSkewed": return .requestTimeTooSkewed
        case "PermanentRedirect": return .permanentRedirect(region: region)
        case "PreconditionFailed": return .preconditionFailed
        case "InvalidRange": return .invalidRange
        default: return .service(code: code, message: message, status: status, requestID: requestID)
        }
    }

    /// The error for a response without a readable body (HEAD, or a proxy's page).
    static func fromStatus(_ status: Int, region: String?, requestID: String?) -> S3Error {
        switch status {
        case 301: return .permanentRedirect(region: region)
        case 403: return .accessDenied
        case 404: return .noSuchKey
        case 412: return .preconditionFailed
        case 416: return .invalidRange
        case 503: return .slowDown
        default:
            return .service(code: "HTTP\(status)", message: "no error details", status: status, requestID: requestID)
        }
    }

    init(_ transport: HTTPTransportError) {
        self =
            transport.isCancellation ? .cancelled : .transport(curlCode: transport.curlCode, message: transport.message)
    }
}

extension S3Error {
    /// True for a local write that failed because the disk (or the user's quota) is full, also when it ended
    /// the retries.
    package var isOutOfSpace: Bool {
        switch self {
        case .fileSystem(_, let code): return code == ENOSPC || code == EDQUOT
        case .retriesExhausted(let last, _): return last.isOutOfSpace
        default: return false
        }
    }

    /// True when an upload failed because its file changed while it was being read (`.fileSystem` with `ESTALE`):
    /// the bytes sent may mix two versions, so nothing was completed; upload the file again.
    package var isSourceFileChanged: Bool {
        if case .fileSystem(_, ESTALE) = self { return true }
        return false
    }

    /// The S3 error code of a ``service(code:message:status:requestID:)`` error (also as the last error of
    /// exhausted retries).
    var serviceCode: String? {
        switch self {
        case .service(let code, _, _, _): return code
        case .retriesExhausted(let last, _): return last.serviceCode
        default: return nil
        }
    }
}
