/// What ``AssetLibrary/checkConnection()`` found, one line per aspect, in this order: credentials, endpoint,
/// TLS, bucket, binding, clock. No line ever holds a secret (an access key id is shortened, a secret never shown).
public struct ConnectionReport: Sendable {
    /// One aspect of the connection.
    public struct Check: Sendable {
        /// Which aspect.
        public enum Aspect: String, Sendable, CaseIterable {
            /// Where the credentials come from (the provider that answered, the profile, the expiry; never a secret).
            case credentials
            /// The endpoint and how requests name the bucket (path-style or virtual-hosted).
            case endpoint
            /// Whether HTTPS verifies the server, and against which CAs.
            case tls
            /// The bucket answers a listing of at most one key with these credentials.
            case bucket
            /// The endpoint, bucket and prefix the catalog is bound to match this configuration.
            case binding
            /// The service's clock against this computer's (signatures fail past a skew).
            case clock
        }

        /// Which aspect this line is about.
        public var aspect: Aspect
        /// One line: what was found (or why the check could not run).
        public var summary: String
        /// What is wrong, when something is; the CLI exits with this error's status.
        public var problem: CloudAssetsError?
    }

    /// One line per aspect, in the order of ``Check/Aspect``.
    public var checks: [Check]

    /// The problems found, in check order.
    public var problems: [CloudAssetsError] { checks.compactMap(\.problem) }
}
