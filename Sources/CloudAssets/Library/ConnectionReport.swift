/// What ``AssetLibrary/checkConnection()`` found, one line per aspect, in this order: credentials, endpoint,
/// TLS, bucket, binding, clock. No line ever holds a secret (an access key id is shortened, a secret never shown).
public struct ConnectionReport: Sendable {
    /// One aspect of the connection.
    public struct Check: Sendable {
        /// Which aspect.
        public enum Aspect: String, Sendable, CaseIterable {
            case credentials, endpoint, tls, bucket, binding, clock
        }

        public var aspect: Aspect
        /// One line: what was found (or why the check could not run).
        public var summary: String
        /// What is wrong, when something is; the CLI exits with this error's status.
        public var problem: CloudAssetsError?
    }

    public var checks: [Check]

    /// The problems found, in check order.
    public var problems: [CloudAssetsError] { checks.compactMap(\.problem) }
}
