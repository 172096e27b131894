package import AWSSigV4
package import Foundation

/// How the bucket is named in requests.
package enum S3AddressingStyle: Sendable, Hashable {
    /// `https://endpoint/bucket/key` (what most S3-compatible servers want).
    case path
    /// `https://bucket.endpoint/key` (AWS's default).
    case virtualHosted
}

/// Settings of an ``S3Client``.
package struct S3ClientConfiguration: Sendable, Hashable {
    /// The service endpoint, e.g. `https://s3.eu-west-1.amazonaws.com` or `http://127.0.0.1:9000`.
    package var endpoint: URL
    /// The signing region.
    package var region: String
    /// The credentials; nil sends unsigned (anonymous) requests. Ignored when ``credentialCache`` is set.
    package var credentials: AWSCredentials?
    /// Where the credentials of each attempt come from when they are resolved (the AWS credential chain) and
    /// refreshed as they near their expiry; nil: ``credentials``.
    package var credentialCache: CredentialCache?
    /// Path-style or virtual-hosted bucket addressing.
    package var addressingStyle: S3AddressingStyle
    /// A PEM CA bundle to trust instead of the system's.
    package var caBundlePath: String?
    /// Verify TLS certificates (on unless turned off for tests).
    package var verifyTLS: Bool
    /// Connect timeout in seconds.
    package var connectTimeout: TimeInterval
    /// Seconds without progress before a transfer fails as stalled.
    package var stallTimeout: TimeInterval
    /// The most connections open at once.
    package var maxConnections: Int
    /// Retries of the client's own operations (list, head, get, put, delete).
    package var retryPolicy: RetryPolicy
    /// Told of retries and of every response's status (nil: nobody).
    package var observer: TransferObserver?

    /// The session token of temporary credentials (the same as `credentials?.sessionToken`).
    package var sessionToken: String? {
        get { credentials?.sessionToken }
        set { credentials?.sessionToken = newValue }
    }

    /// - Parameters:
    ///   - endpoint: Service endpoint.
    ///   - region: Signing region.
    ///   - credentials: Credentials, or nil for anonymous access.
    ///   - addressingStyle: Path or virtual-hosted.
    ///   - caBundlePath: Custom CA bundle.
    ///   - verifyTLS: Verify certificates.
    ///   - connectTimeout: Connect timeout in seconds.
    ///   - stallTimeout: Stall timeout in seconds.
    ///   - maxConnections: Connection limit.
    ///   - retryPolicy: Retries of client operations.
    package init(
        endpoint: URL, region: String = "us-east-1", credentials: AWSCredentials? = nil,
        addressingStyle: S3AddressingStyle = .path, caBundlePath: String? = nil, verifyTLS: Bool = true,
        connectTimeout: TimeInterval = 10, stallTimeout: TimeInterval = 30, maxConnections: Int = 16,
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
        self.addressingStyle = addressingStyle
        self.caBundlePath = caBundlePath
        self.verifyTLS = verifyTLS
        self.connectTimeout = connectTimeout
        self.stallTimeout = stallTimeout
        self.maxConnections = maxConnections
        self.retryPolicy = retryPolicy
    }

    /// Reads `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` (or
    /// `AWS_DEFAULT_REGION`) and `AWS_ENDPOINT_URL`.
    /// - Parameter environment: The environment to read (the process's by default).
    /// - Returns: The configuration; without `AWS_ENDPOINT_URL` the endpoint is AWS's for the region, with
    ///   virtual-hosted addressing.
    /// - Throws: ``S3Error/malformedResponse(_:)`` is never thrown; a bad `AWS_ENDPOINT_URL` throws
    ///   ``S3ConfigurationError``.
    package static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(S3ConfigurationError) -> S3ClientConfiguration
    {
        let region = environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        var credentials: AWSCredentials?
        if let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty {
            guard let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else {
                throw .missingSecretKey
            }
            let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            credentials = AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token)
        }
        if let raw = environment["AWS_ENDPOINT_URL"], !raw.isEmpty {
            guard let url = URL(string: raw), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https",
                url.host != nil
            else { throw .invalidEndpoint(raw) }
            return S3ClientConfiguration(
                endpoint: url, region: region, credentials: credentials, addressingStyle: .path)
        }
        return S3ClientConfiguration(
            endpoint: URL(string: "https://s3.\(region).amazonaws.com")!, region: region, credentials: credentials,
            addressingStyle: .virtualHosted)
    }
}

/// A configuration that cannot work.
package enum S3ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `AWS_ENDPOINT_URL` is not an http(s) URL with a host.
    case invalidEndpoint(String)
    /// `AWS_ACCESS_KEY_ID` is set but `AWS_SECRET_ACCESS_KEY` is not.
    case missingSecretKey

    package var description: String {
        switch self {
        case .invalidEndpoint(let raw):
            return "AWS_ENDPOINT_URL \"\(raw)\" is not an http:// or https:// URL with a host."
        case .missingSecretKey: return "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not. Set both."
        }
    }
}
