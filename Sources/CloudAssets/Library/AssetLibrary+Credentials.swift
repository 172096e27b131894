import AWSSigV4
import Essentials
public import Foundation
import S3Transfer

extension AssetLibrary {
    /// Where the library's credentials came from — never the secret: what `cloudassets doctor` prints.
    public struct CredentialSource: Sendable, Hashable, CustomStringConvertible {
        /// The provider that answered, by botocore's names: `env`, `shared-credentials-file`, `config-file`,
        /// `custom-process`, `assume-role`, `assume-role-with-web-identity`, `container-role`, `iam-role`; `static`
        /// for keys given in the configuration, `anonymous` for unsigned requests.
        public let provider: String
        /// The profile of `~/.aws` that was read, if any.
        public let profile: String?
        /// When the credentials expire (they are refreshed before); nil for long-term keys.
        public let expiration: Date?
        /// A hint without a secret: the role assumed, the file read, the endpoint asked, the command run.
        public let detail: String?

        /// `assume-role (profile photos, arn:aws:iam::…:role/x), expires 2024-05-01T12:00:00Z`.
        public var description: String {
            CredentialOrigin(provider: provider, profile: profile, expiration: expiration, detail: detail).description
        }

        init(_ origin: CredentialOrigin) {
            provider = origin.provider
            profile = origin.profile
            expiration = origin.expiration
            detail = origin.detail
        }
    }

    /// Where the credentials in use came from: for ``Credentials/default`` and ``Credentials/profile(_:)`` the
    /// provider of the chain that answered (nil until a request, or ``resolveCredentials()``, resolved them); for
    /// fixed credentials `static` or `env`; `anonymous`; nil without an endpoint. Never blocks, never a secret.
    public var credentialSource: CredentialSource? {
        guard let client = remote?.client else { return nil }
        if let cache = client.configuration.credentialCache { return cache.origin.map(CredentialSource.init) }
        return CredentialSource(configuration.credentials.fixedOrigin)
    }

    /// How far the service's clock is from this computer's (service − local, in seconds) as the service's last
    /// error answer stated it in its `Date` header; nil without an endpoint, or before an error answer with one.
    /// A refused request (a wrong key, `RequestTimeTooSkewed`) still measures the clocks: what
    /// `cloudassets doctor` shows when no listing answered. Whole seconds at best (a `Date` header's precision).
    public var clockSkewOfLastErrorAnswer: TimeInterval? {
        guard let reading = remote?.client.lastErrorAnswerClock else { return nil }
        return reading.service.timeIntervalSince(reading.local)
    }

    /// Resolves the credentials now, as the first request would (or uses those resolved already), and says where
    /// they came from. For a check before any transfer (`cloudassets doctor`).
    /// - Throws: ``CloudAssetsError`` with ``CloudAssetsError/Code/missingCredentials`` (nothing found, or a
    ///   configured source failed: the message names it), ``CloudAssetsError/Code/accessDenied`` (STS refused the
    ///   role), ``CloudAssetsError/Code/endpointUnreachable``, ``CloudAssetsError/Code/noEndpoint``,
    ///   ``CloudAssetsError/Code/networkNotAllowed`` (network policy `.offline`) or
    ///   ``CloudAssetsError/Code/libraryClosed``.
    public func resolveCredentials() async throws -> CredentialSource {
        try await entry {
            guard let remote = remote else { throw AssetRequestError.noRemote }
            guard let cache = remote.client.configuration.credentialCache else {
                return CredentialSource(configuration.credentials.fixedOrigin)
            }
            guard network.policy != .offline else { throw AssetLibraryError.offline }
            do throws(CredentialError) {
                return CredentialSource(try await cache.resolve())
            } catch {
                throw S3Error.credentials(error)
            }
        }
    }
}

extension Credentials {
    /// The origin of credentials that need no chain.
    var fixedOrigin: CredentialOrigin {
        switch self {
        case .static: CredentialOrigin(provider: "static")
        case .environment: CredentialOrigin(provider: "env")
        case .anonymous: CredentialOrigin(provider: "anonymous")
        case .default, .profile: CredentialOrigin(provider: "chain")
        }
    }
}

extension AssetLibrary.Configuration {
    /// What the S3 client signs with: fixed credentials (nil for anonymous requests), or a cache over the AWS
    /// credential chain (resolved on the first request, refreshed before expiry).
    /// - Throws: ``AssetLibraryError/missingCredentials`` for ``Credentials/environment`` without the variables,
    ///   ``AssetLibraryError/invalidConfiguration(reason:)`` for an empty profile name.
    func signingCredentials() throws -> (credentials: AWSCredentials?, cache: CredentialCache?) {
        switch credentials {
        case .anonymous:
            return (nil, nil)
        case .static(let key, let secret, let token):
            return (AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token), nil)
        case .environment:
            let env = credentialEnvironment ?? ProcessInfo.processInfo.environment
            guard let key = env["AWS_ACCESS_KEY_ID"], let secret = env["AWS_SECRET_ACCESS_KEY"], !key.isEmpty,
                !secret.isEmpty
            else {
                throw AssetLibraryError.missingCredentials
            }
            return (
                AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: env["AWS_SESSION_TOKEN"]), nil
            )
        case .default:
            return (nil, credentialCache(profile: nil))
        case .profile(let name):
            guard !name.isEmpty else {
                throw AssetLibraryError.invalidConfiguration(reason: "the credentials' profile name is empty")
            }
            return (nil, credentialCache(profile: name))
        }
    }

    /// The standard chain over the environment (``credentialEnvironment``, ``credentialTiming`` and
    /// ``credentialClock`` in tests), for the profile and region.
    private func credentialCache(profile: String?) -> CredentialCache {
        let context = CredentialContext(
            environment: credentialEnvironment ?? ProcessInfo.processInfo.environment,
            settings: CredentialSettings(profile: profile, region: region), now: credentialClock ?? { Date() })
        return CredentialCache(
            provider: CredentialChain.standard(for: context), context: context,
            timing: credentialTiming ?? CredentialRefreshState.Timing())
    }
}
