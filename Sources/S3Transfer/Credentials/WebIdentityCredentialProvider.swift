import Essentials
import Foundation

/// `AWS_WEB_IDENTITY_TOKEN_FILE`, `AWS_ROLE_ARN` and `AWS_ROLE_SESSION_NAME` (or the profile's
/// `web_identity_token_file`, `role_arn`, `role_session_name`; the environment wins), as on EKS with IRSA: the token
/// file is read and exchanged through STS `AssumeRoleWithWebIdentity` (unsigned) — botocore's
/// `AssumeRoleWithWebIdentityProvider`. A refresh reads the token file again (Kubernetes rotates it).
///
/// Not configured without a token file; a token file without a role, a token file that cannot be read or an STS
/// error is an error. The environment is not read when a profile was named explicitly (as botocore does). A value
/// type; thread-safe. Offline: ``CredentialError/unreachable(provider:endpoint:reason:)``.
package struct WebIdentityCredentialProvider: CredentialProvider {
    /// The profile read; nil for the context's.
    package var profile: String?
    /// Whether the `AWS_*` variables are read (not for a source profile, nor with an explicit profile).
    package var readsEnvironment: Bool

    /// - Parameters:
    ///   - profile: The profile to read; nil for the context's profile.
    ///   - readsEnvironment: Whether the environment's variables are read first.
    package init(profile: String? = nil, readsEnvironment: Bool = true) {
        self.profile = profile
        self.readsEnvironment = readsEnvironment
    }

    package var name: String { "assume-role-with-web-identity" }

    /// The largest token file read (an OIDC token is a few KB).
    static let tokenLimit = 64 * 1024

    package func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials? {
        let profile = self.profile ?? context.profile
        let environment = readsEnvironment && !context.isProfileExplicit
        var profileValues: [String: String]?
        func value(_ variable: String, _ key: String) throws(CredentialError) -> String? {
            if environment, let value = context.variable(variable) { return value }
            if profileValues == nil { profileValues = try context.profiles().merged(profile) ?? [:] }
            return profileValues?[key].flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let tokenPath = try value("AWS_WEB_IDENTITY_TOKEN_FILE", "web_identity_token_file") else { return nil }
        guard let role = try value("AWS_ROLE_ARN", "role_arn") else {
            throw .incomplete(source: "the web identity configuration", missing: "AWS_ROLE_ARN (or role_arn)")
        }
        let sessionName = try value("AWS_ROLE_SESSION_NAME", "role_session_name")
        let token = try Self.readToken(context.expandingTilde(tokenPath))
        // try?: no profile file: the environment's values are used
        if profileValues == nil { profileValues = (try? context.profiles().merged(profile)) ?? [:] }
        let sts = STSClient(
            context: context, region: context.region(profile: profileValues),
            provider: "STS AssumeRoleWithWebIdentity")
        let issued = try await sts.assumeRoleWithWebIdentity(
            roleARN: role, sessionName: STSClient.sessionName(sessionName, now: context.now()), token: token)
        // The profile is named when the token file came from it, not from the environment.
        let fromEnvironment = environment && context.variable("AWS_WEB_IDENTITY_TOKEN_FILE") != nil
        return ProvidedCredentials(
            credentials: issued.credentials,
            origin: CredentialOrigin(
                provider: name, profile: fromEnvironment ? nil : profile, expiration: issued.expiration, detail: role),
            refresher: self)
    }

    package func searched(_ context: CredentialContext) -> String {
        readsEnvironment && !context.isProfileExplicit
            ? "AWS_WEB_IDENTITY_TOKEN_FILE (unset)" : "web_identity_token_file of profile \(profile ?? context.profile)"
    }

    /// The token, without surrounding white space.
    static func readToken(_ path: String) throws(CredentialError) -> String {
        let data: Data
        do {
            data = try LocalFile.read(URL(fileURLWithPath: path), limit: tokenLimit + 1)
        } catch {
            throw .unreadableFile(path: path, reason: LocalFile.reason(error, otherwise: "it is not a readable file"))
        }
        guard data.count <= tokenLimit else {
            throw .unreadableFile(path: path, reason: "it is not a readable file of at most 64 KiB")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw .unreadableFile(path: path, reason: "it is empty") }
        return token
    }
}
