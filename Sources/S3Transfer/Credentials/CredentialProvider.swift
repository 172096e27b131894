package import AWSSigV4
package import Foundation

/// Where a set of credentials came from — never the secret: the provider that answered (its botocore method name:
/// `env`, `shared-credentials-file`, `custom-process`, `assume-role`, …), the profile it read and when the
/// credentials expire. What `cloudassets doctor` prints and what a log may show.
package struct CredentialOrigin: Sendable, Hashable, CustomStringConvertible {
    /// The provider's name (``CredentialProvider/name``).
    package var provider: String
    /// The profile of the shared files the provider read, nil for providers that read none.
    package var profile: String?
    /// When the credentials expire; nil for long-term keys.
    package var expiration: Date?
    /// A hint that carries no secret: the role assumed, the file read, the endpoint asked.
    package var detail: String?

    /// - Parameters:
    ///   - provider: The provider's name.
    ///   - profile: The profile read, if any.
    ///   - expiration: When the credentials expire, if they do.
    ///   - detail: A hint without a secret.
    package init(provider: String, profile: String? = nil, expiration: Date? = nil, detail: String? = nil) {
        self.provider = provider
        self.profile = profile
        self.expiration = expiration
        self.detail = detail
    }

    /// `assume-role (profile photos, arn:aws:iam::…:role/x), expires 2024-05-01T12:00:00Z`.
    package var description: String {
        var inside: [String] = []
        if let profile { inside.append("profile \(profile)") }
        if let detail { inside.append(detail) }
        var text = provider + (inside.isEmpty ? "" : " (" + inside.joined(separator: ", ") + ")")
        if let expiration { text += ", expires " + CredentialDate.format(expiration) }
        return text
    }
}

/// Credentials one provider found, with their origin and the provider to ask again when they near their expiry.
package struct ProvidedCredentials: Sendable {
    /// The key pair and session token to sign with.
    package var credentials: AWSCredentials
    /// Where they came from, with their expiry.
    package var origin: CredentialOrigin
    /// The provider that answered: a refresh asks it again rather than walking the whole chain.
    package var refresher: (any CredentialProvider)?

    /// When the credentials expire; nil for long-term keys.
    package var expiration: Date? { origin.expiration }

    /// - Parameters:
    ///   - credentials: The key pair and token.
    ///   - origin: Where they came from.
    ///   - refresher: The provider to ask again; the one that answered.
    package init(credentials: AWSCredentials, origin: CredentialOrigin, refresher: (any CredentialProvider)? = nil) {
        self.credentials = credentials
        self.origin = origin
        self.refresher = refresher
    }
}

/// One source of AWS credentials (the environment, a profile's keys, a `credential_process`, STS, a container or
/// instance metadata endpoint), as botocore's providers are.
///
/// The contract every provider keeps:
/// - it answers nil when it is not configured at all (its variables unset, no such key in the profile), so that a
///   chain goes on to the next provider;
/// - it throws a ``CredentialError`` when it is configured but fails (a malformed file, a process that prints
///   garbage, an STS error): a chain stops there, as botocore's does, rather than silently using other
///   credentials than those the user configured;
/// - it never logs, and no error it throws carries a secret;
/// - offline, a provider that needs the network fails within its timeout (instance metadata answers nil).
///
/// Providers are values without state, safe to call from any task, several times at once.
package protocol CredentialProvider: Sendable {
    /// botocore's name for the method (`env`, `assume-role`, `container-role`, …).
    var name: String { get }
    /// Resolves credentials; nil when this provider is not configured.
    func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials?
    /// What this provider looked at, for the one-line error that lists everything a chain tried.
    func searched(_ context: CredentialContext) -> String
}
