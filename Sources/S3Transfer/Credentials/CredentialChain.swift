import Foundation

/// Providers tried in order; the first that answers wins (its answer names it, and a refresh asks it alone). A
/// provider that is configured but fails stops the chain with its error, as botocore's `CredentialResolver` does;
/// when none is configured the error lists what each looked at.
///
/// ``standard(for:)`` is botocore's default chain. A value type; thread-safe. Offline, the providers that need the
/// network fail within their timeouts (instance metadata, last, then answers nil: "nothing found").
package struct CredentialChain: CredentialProvider {
    /// The providers, in the order they are tried.
    package var providers: [any CredentialProvider]

    /// - Parameter providers: The providers, in the order to try them.
    package init(_ providers: [any CredentialProvider]) { self.providers = providers }

    package var name: String { "chain" }

    /// botocore's default chain (its `create_credential_resolver`), for the context's profile:
    /// 1. the environment (`env`; left out when a profile was named explicitly, as botocore leaves it out);
    /// 2. `role_arn` with a `source_profile` or `credential_source` (`assume-role`);
    /// 3. a web identity token (`assume-role-with-web-identity`);
    /// 4. the profile's keys in the shared credentials file (`shared-credentials-file`);
    /// 5. the profile's `credential_process` (`custom-process`);
    /// 6. the profile's keys in the config file (`config-file`);
    /// 7. container credentials (`container-role`);
    /// 8. instance metadata (`iam-role`).
    ///
    /// Not included: IAM Identity Center (SSO) and console login profiles, which need a browser sign-in.
    package static func standard(for context: CredentialContext) -> CredentialChain {
        var providers: [any CredentialProvider] = []
        if !context.isProfileExplicit { providers.append(EnvironmentCredentialProvider()) }
        providers += [
            AssumeRoleCredentialProvider(), WebIdentityCredentialProvider(),
            ProfileCredentialProvider(file: .credentials), ProcessCredentialProvider(),
            ProfileCredentialProvider(file: .config), ContainerCredentialProvider(),
            InstanceMetadataCredentialProvider(),
        ]
        return CredentialChain(providers)
    }

    /// The first answer of the providers.
    /// - Throws: ``CredentialError/profileNotFound(profile:files:)`` when a profile other than `default` is in
    ///   neither shared file (botocore's `ProfileNotFound`), the error of a configured provider that failed, or
    ///   ``CredentialError/notFound(profile:tried:)``.
    package func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials? {
        if context.profile != "default" {
            let profiles = try context.profiles()
            guard profiles.contains(context.profile) else {
                throw .profileNotFound(
                    profile: context.profile, files: [profiles.credentialsPath, profiles.configPath])
            }
        }
        var tried: [String] = []
        for provider in providers {
            if let found = try await provider.resolve(context) { return found }
            tried.append(provider.searched(context))
        }
        throw .notFound(profile: context.profile, tried: tried)
    }

    package func searched(_ context: CredentialContext) -> String {
        providers.map { $0.searched(context) }.joined(separator: "; ")
    }
}
