import AWSSigV4
import Foundation
import Testing

@testable import S3Transfer

/// A private home folder for one test: `~/.aws/credentials` and `~/.aws/config` written there, scripts for
/// `credential_process`, and contexts that read only this folder and the variables given (never the process's
/// environment, never instance metadata unless a test points it at its own server).
struct CredentialSandbox {
    let home: URL

    init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("creds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: home.appendingPathComponent(".aws"), withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: home) }

    var credentialsFile: URL { home.appendingPathComponent(".aws/credentials") }
    var configFile: URL { home.appendingPathComponent(".aws/config") }

    func writeCredentials(_ text: String) throws { try Data(text.utf8).write(to: credentialsFile) }
    func writeConfig(_ text: String) throws { try Data(text.utf8).write(to: configFile) }

    /// Writes a `/bin/sh` script and returns the command that runs it: `/bin/sh <path>` (executing a file just
    /// written can fail with ETXTBSY while a child another test forks at that moment still holds it open).
    func script(_ name: String, _ body: String) throws -> String {
        let url = home.appendingPathComponent(name)
        try Data((body + "\n").utf8).write(to: url)
        return "/bin/sh " + url.path
    }

    /// A context reading this home and `variables`; instance metadata is off unless `variables` say otherwise.
    func context(
        _ variables: [String: String] = [:], profile: String? = nil, settings: CredentialSettings? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) -> CredentialContext {
        var environment = ["HOME": home.path, "PATH": "/usr/bin:/bin", "AWS_EC2_METADATA_DISABLED": "true"]
        environment.merge(variables) { _, new in new }
        var settings = settings ?? CredentialSettings()
        if let profile { settings.profile = profile }
        return CredentialContext(environment: environment, settings: settings, now: now)
    }

    /// The standard chain's answer for `context`.
    func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials? {
        try await CredentialChain.standard(for: context).resolve(context)
    }
}

/// The ``CredentialError`` `body` throws, nil when it throws none (another error is recorded as an issue).
func credentialError(_ body: () async throws -> Void) async -> CredentialError? {
    do {
        try await body()
        return nil
    } catch let error as CredentialError {
        return error
    } catch {
        Issue.record("not a CredentialError: \(error)")
        return nil
    }
}

/// The credentials JSON of `credential_process` and of the container and metadata endpoints.
func credentialsJSON(
    key: String, secret: String = "secret", token: String? = "token", expiration: Date? = nil,
    tokenKey: String = "SessionToken", version: Int? = 1
) -> String {
    var fields: [String: Any] = ["AccessKeyId": key, "SecretAccessKey": secret]
    if let token { fields[tokenKey] = token }
    if let expiration { fields["Expiration"] = CredentialDate.format(expiration) }
    if let version { fields["Version"] = version }
    return String(decoding: try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self)
}
