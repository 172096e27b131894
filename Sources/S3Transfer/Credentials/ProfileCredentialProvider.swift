import AWSSigV4
import Foundation

/// Long-term keys written in a profile: `aws_access_key_id`, `aws_secret_access_key` and optionally
/// `aws_session_token` (or `aws_security_token`), from the shared credentials file's `[name]` or the config
/// file's `[profile name]` (`[default]`) — botocore's `SharedCredentialProvider` and `ConfigProvider`, one
/// value of this type each. Not configured when the file or the profile is absent or has no access key id; an
/// access key id without its secret is an error. A value type; thread-safe; reads files only.
package struct ProfileCredentialProvider: CredentialProvider {
    /// Which shared file the keys are read from.
    package enum File: Sendable, Hashable {
        /// `AWS_SHARED_CREDENTIALS_FILE` (`~/.aws/credentials`).
        case credentials
        /// `AWS_CONFIG_FILE` (`~/.aws/config`).
        case config
    }

    /// The file read.
    package var file: File
    /// The profile read; nil for the context's.
    package var profile: String?

    /// - Parameters:
    ///   - file: The file to read.
    ///   - profile: The profile to read; nil for the context's profile.
    package init(file: File, profile: String? = nil) {
        self.file = file
        self.profile = profile
    }

    package var name: String { file == .credentials ? "shared-credentials-file" : "config-file" }

    package func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials? {
        let profile = self.profile ?? context.profile
        let profiles = try context.profiles()
        let path = file == .credentials ? profiles.credentialsPath : profiles.configPath
        let section = file == .credentials ? profiles.credentials?[profile] : profiles.config?[profile]
        guard let section, let key = section["aws_access_key_id"], !key.isEmpty else { return nil }
        guard let secret = section["aws_secret_access_key"], !secret.isEmpty else {
            throw .incomplete(source: "profile \(profile) of \(path)", missing: "aws_secret_access_key")
        }
        let token = [section["aws_security_token"], section["aws_session_token"]].compactMap { $0 }.first {
            !$0.isEmpty
        }
        return ProvidedCredentials(
            credentials: AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token),
            origin: CredentialOrigin(provider: name, profile: profile, detail: path), refresher: self)
    }

    package func searched(_ context: CredentialContext) -> String {
        let path = file == .credentials ? context.credentialsFilePath : context.configFilePath
        return "keys of profile \(profile ?? context.profile) in \(path)"
    }
}
