import Foundation

/// A profile with `role_arn` (and no `web_identity_token_file`): the role is assumed through STS `AssumeRole`,
/// signed with the credentials of its `source_profile` (itself keys, a `credential_process`, a web identity or
/// another role: chains of roles work, loops are refused) or of its `credential_source` (`Environment`,
/// `Ec2InstanceMetadata`, `EcsContainer`), with the profile's `role_session_name`, `external_id` and
/// `duration_seconds` — botocore's `AssumeRoleProvider`. The credentials expire; a refresh assumes the role
/// again (with fresh source credentials).
///
/// Not configured when the profile has no `role_arn`. A profile that names no source, both sources, a source that
/// does not exist or has no credentials, a loop, an `mfa_serial` (this library cannot prompt for a code) or an STS
/// error is an error. A value type; thread-safe. Offline: ``CredentialError/unreachable(provider:endpoint:reason:)``.
package struct AssumeRoleCredentialProvider: CredentialProvider {
    /// The profile read; nil for the context's.
    package var profile: String?

    /// - Parameter profile: The profile to read; nil for the context's profile.
    package init(profile: String? = nil) { self.profile = profile }

    package var name: String { "assume-role" }

    package func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials? {
        let profile = self.profile ?? context.profile
        let profiles = try context.profiles()
        guard let values = profiles.merged(profile), Self.assumesRole(values) else { return nil }
        return try await assume(profile, profiles: profiles, context: context, visited: [profile])
    }

    package func searched(_ context: CredentialContext) -> String {
        "role_arn of profile \(profile ?? context.profile)"
    }

    /// Whether a profile's keys make it a role to assume with `AssumeRole`.
    static func assumesRole(_ values: [String: String]) -> Bool {
        values["role_arn"] != nil && values["web_identity_token_file"] == nil
    }

    private func assume(_ profile: String, profiles: SharedProfiles, context: CredentialContext, visited: [String])
        async throws(CredentialError) -> ProvidedCredentials
    {
        let values = profiles.merged(profile) ?? [:]
        guard let role = values["role_arn"], !role.isEmpty else {
            throw .invalidProfile(profile: profile, reason: "role_arn is empty")
        }
        if values["mfa_serial"] != nil {
            throw .invalidProfile(
                profile: profile,
                reason: "mfa_serial needs a code typed at a prompt, which this library cannot show; "
                    + "use a credential_process that asks for it")
        }
        var duration: Int?
        if let text = values["duration_seconds"] {
            guard let seconds = Int(text), seconds > 0 else {
                throw .invalidProfile(
                    profile: profile, reason: "duration_seconds \"\(text)\" is not a number of seconds")
            }
            duration = seconds
        }
        let source = try await sourceCredentials(
            profile, values: values, profiles: profiles, context: context, visited: visited)
        let sts = STSClient(context: context, region: context.region(profile: values), provider: "STS AssumeRole")
        let issued = try await sts.assumeRole(
            roleARN: role, sessionName: STSClient.sessionName(values["role_session_name"], now: context.now()),
            externalID: values["external_id"], duration: duration, source: source.credentials)
        return ProvidedCredentials(
            credentials: issued.credentials,
            origin: CredentialOrigin(provider: name, profile: profile, expiration: issued.expiration, detail: role),
            refresher: AssumeRoleCredentialProvider(profile: profile))
    }

    /// The credentials that sign the `AssumeRole` of `profile`.
    private func sourceCredentials(
        _ profile: String, values: [String: String], profiles: SharedProfiles, context: CredentialContext,
        visited: [String]
    ) async throws(CredentialError) -> ProvidedCredentials {
        switch (values["source_profile"], values["credential_source"]) {
        case (_?, _?):
            throw .invalidProfile(profile: profile, reason: "it has both source_profile and credential_source")
        case (nil, nil):
            throw .invalidProfile(profile: profile, reason: "role_arn needs a source_profile or a credential_source")
        case (nil, let named?):
            let provider: any CredentialProvider
            switch named {
            case "Environment": provider = EnvironmentCredentialProvider()
            case "Ec2InstanceMetadata": provider = InstanceMetadataCredentialProvider()
            case "EcsContainer": provider = ContainerCredentialProvider()
            default:
                throw .invalidProfile(
                    profile: profile,
                    reason: "credential_source \(named) is not Environment, Ec2InstanceMetadata or EcsContainer")
            }
            guard let found = try await provider.resolve(context) else {
                throw .invalidProfile(profile: profile, reason: "its credential_source \(named) has no credentials")
            }
            return found
        case (let source?, nil):
            guard let sourceValues = profiles.merged(source) else {
                throw .invalidProfile(profile: profile, reason: "its source_profile \(source) does not exist")
            }
            let hasKeys = sourceValues["aws_access_key_id"] != nil || sourceValues["aws_secret_access_key"] != nil
            if visited.contains(source), source != profile || !hasKeys {
                throw .invalidProfile(
                    profile: profile,
                    reason: "its source_profile \(source) leads back to itself ("
                        + (visited + [source]).joined(separator: " → ") + ")")
            }
            if !hasKeys, Self.assumesRole(sourceValues) {
                return try await assume(source, profiles: profiles, context: context, visited: visited + [source])
            }
            let providers: [any CredentialProvider] = [
                WebIdentityCredentialProvider(profile: source, readsEnvironment: false),
                ProfileCredentialProvider(file: .credentials, profile: source),
                ProcessCredentialProvider(profile: source),
                ProfileCredentialProvider(file: .config, profile: source),
            ]
            for provider in providers {
                if let found = try await provider.resolve(context) { return found }
            }
            throw .invalidProfile(profile: profile, reason: "its source_profile \(source) has no credentials")
        }
    }
}
