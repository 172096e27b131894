/// An access key pair, with the session token of temporary credentials.
public struct AWSCredentials: Sendable, Hashable {
    /// The access key id (`AKIA…`, or any string a compatible service issues).
    public var accessKeyID: String
    /// The secret access key. Never logged.
    public var secretAccessKey: String
    /// The session token of temporary credentials, sent as `x-amz-security-token`.
    public var sessionToken: String?

    /// - Parameters:
    ///   - accessKeyID: The access key id.
    ///   - secretAccessKey: The secret access key.
    ///   - sessionToken: The session token of temporary credentials, if any.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}

extension AWSCredentials: CustomStringConvertible {
    /// Shows the access key id only; the secret never appears in logs.
    public var description: String { "AWSCredentials(\(accessKeyID))" }
}
