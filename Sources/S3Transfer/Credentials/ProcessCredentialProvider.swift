import Foundation

/// A profile's `credential_process` (botocore's `ProcessProvider`): the command is split into words as botocore
/// splits it (``ShellWords``, no shell), run with the chain's environment, and its standard output read as
/// `{"Version": 1, "AccessKeyId": …, "SecretAccessKey": …, "SessionToken": …, "Expiration": …}`; with an
/// `Expiration` the credentials are refreshed by running the command again.
///
/// Not configured when the profile (either file) has no `credential_process`. A command that cannot start, exits
/// with an error, outlives ``CredentialSettings/processTimeout``, prints more than
/// ``CredentialSettings/processOutputLimit`` bytes or prints anything but that JSON is an error naming the command
/// (its first word) and the reason — never its output, which may hold a secret. A value type; thread-safe.
package struct ProcessCredentialProvider: CredentialProvider {
    /// The profile read; nil for the context's.
    package var profile: String?

    /// - Parameter profile: The profile to read; nil for the context's profile.
    package init(profile: String? = nil) { self.profile = profile }

    package var name: String { "custom-process" }

    package func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials? {
        let profile = self.profile ?? context.profile
        guard let command = try context.profiles().merged(profile)?["credential_process"], !command.isEmpty else {
            return nil
        }
        let words: [String]
        do {
            words = try ShellWords.split(command)
        } catch {
            throw .processFailed(command: "of profile \(profile)", reason: "the command cannot be split: \(error)")
        }
        guard let program = words.first, !program.isEmpty else {
            throw .processFailed(command: "of profile \(profile)", reason: "the command is empty")
        }
        let shown = CredentialError.oneLine(program, limit: 80)
        let settings = context.settings
        let outcome: CredentialProcessRunner.Outcome
        switch await CredentialProcessRunner.run(
            words, environment: context.environment, timeout: settings.processTimeout,
            outputLimit: settings.processOutputLimit)
        {
        case .success(let value): outcome = value
        case .failure(.cannotStart(let code)):
            throw .processFailed(command: shown, reason: "it cannot be started (\(String(cString: strerror(code))))")
        case .failure(.timedOut):
            throw .processFailed(
                command: shown,
                reason: "it did not finish within \(String(format: "%g", settings.processTimeout)) s and was killed")
        case .failure(.outputTooLarge):
            throw .processFailed(
                command: shown, reason: "it printed more than \(settings.processOutputLimit) bytes and was killed")
        case .failure(.signalled(let signal)):
            throw .processFailed(command: shown, reason: "it was killed by signal \(signal)")
        case .failure(.cancelled):
            throw .processFailed(command: shown, reason: "it was cancelled and killed")
        }
        guard outcome.status == 0 else {
            let said = outcome.errorLine.isEmpty ? "" : ": " + outcome.errorLine
            throw .processFailed(command: shown, reason: "it exited with status \(outcome.status)\(said)")
        }
        let fields: CredentialJSON.Fields
        switch CredentialJSON.parse(outcome.output, tokenKey: "SessionToken", requiresExpiration: false) {
        case .success(let value): fields = value
        case .failure(let failure):
            throw .processFailed(command: shown, reason: "\(failure.reason) (expected the credentials JSON)")
        }
        guard fields.version == 1 else {
            let version = fields.version.map { $0 == -1 ? "not a number" : String($0) } ?? "missing"
            throw .processFailed(command: shown, reason: "its Version is \(version); only Version 1 is supported")
        }
        return ProvidedCredentials(
            credentials: fields.credentials,
            origin: CredentialOrigin(provider: name, profile: profile, expiration: fields.expiration, detail: shown),
            refresher: self)
    }

    package func searched(_ context: CredentialContext) -> String {
        "credential_process of profile \(profile ?? context.profile)"
    }
}
