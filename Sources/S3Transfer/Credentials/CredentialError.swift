import Foundation

/// Why no credentials could be had. Each ``description`` is one line that says what failed and what to do, and
/// never contains a secret (no key, token, process output or response body is quoted).
package enum CredentialError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No provider of the chain is configured; `tried` lists what each looked at.
    case notFound(profile: String, tried: [String])
    /// The profile asked for (`AWS_PROFILE`, `--profile`) is in neither shared file.
    case profileNotFound(profile: String, files: [String])
    /// A shared credentials or config file is not a valid INI file.
    case malformedFile(path: String, line: Int, reason: String)
    /// A file named by the configuration cannot be read (a web identity token, a container authorization token).
    case unreadableFile(path: String, reason: String)
    /// A provider is configured but a required value is missing (`AWS_SECRET_ACCESS_KEY` without its key, a
    /// profile's `aws_access_key_id` without its secret).
    case incomplete(source: String, missing: String)
    /// A profile cannot work as written (a `source_profile` that does not exist, a loop of profiles, a role
    /// without a source).
    case invalidProfile(profile: String, reason: String)
    /// A `credential_process` failed: it could not start, exited with an error, timed out, or printed something
    /// that is not the credentials JSON.
    case processFailed(command: String, reason: String)
    /// A credentials service (STS, a container endpoint, instance metadata) answered with an error.
    case service(provider: String, code: String, message: String, status: Int)
    /// A credentials service could not be reached in time.
    case unreachable(provider: String, endpoint: String, reason: String)
    /// A credentials service answered something that is not what it should (malformed XML or JSON, missing fields).
    case malformedResponse(provider: String, reason: String)
    /// An endpoint the configuration names may not be used (a container URI that is neither loopback nor HTTPS).
    case forbiddenEndpoint(provider: String, endpoint: String, reason: String)
    /// The credentials expired and could not be refreshed; `cause` is the refresh's failure.
    case expired(provider: String, cause: String)

    /// Whether the service refused the identity (as opposed to not being reachable or being misconfigured).
    package var isDenied: Bool {
        guard case .service(_, let code, _, let status) = self else { return false }
        return status == 403
            || ["AccessDenied", "InvalidClientTokenId", "ExpiredToken", "SignatureDoesNotMatch"].contains(code)
            || code.hasPrefix("InvalidIdentityToken")
    }

    /// Whether the failure is the network's (another attempt later may succeed).
    package var isUnreachable: Bool {
        if case .unreachable = self { return true }
        return false
    }

    package var description: String {
        switch self {
        case .notFound(let profile, let tried):
            return "No AWS credentials found (profile \(profile)); tried: " + tried.joined(separator: "; ")
                + ". Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE naming a profile with credentials."
        case .profileNotFound(let profile, let files):
            return "The profile \"\(profile)\" is not in " + files.joined(separator: " or ")
                + "; check AWS_PROFILE (or --profile) and the files."
        case .malformedFile(let path, let line, let reason):
            return "\(path) line \(line) cannot be read: \(reason); fix the file (INI: [section] then key = value)."
        case .unreadableFile(let path, let reason):
            return "\(path) cannot be read: \(reason)."
        case .incomplete(let source, let missing):
            return "Incomplete credentials in \(source): \(missing) is missing; set it or remove the other values."
        case .invalidProfile(let profile, let reason):
            return "The profile \"\(profile)\" cannot be used: \(reason)."
        case .processFailed(let command, let reason):
            return "credential_process \(command) failed: \(reason)."
        case .service(let provider, let code, let message, let status):
            let text = message.isEmpty ? "" : ": " + Self.oneLine(message, limit: 300)
            return "\(provider) refused to issue credentials (HTTP \(status) \(code))\(text)."
        case .unreachable(let provider, let endpoint, let reason):
            return "\(provider) could not reach \(endpoint) (\(reason)); check the network and the endpoint."
        case .malformedResponse(let provider, let reason):
            return "\(provider) answered something that is not credentials: \(reason)."
        case .forbiddenEndpoint(let provider, let endpoint, let reason):
            return "\(provider) may not use \(endpoint): \(reason)."
        case .expired(let provider, let cause):
            return "The credentials from \(provider) expired and could not be refreshed: \(cause)"
        }
    }

    /// `text` on one line (control characters become spaces), cut to `limit` characters.
    static func oneLine(_ text: some StringProtocol, limit: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(limit) {
            scalars.append(scalar.properties.generalCategory == .control ? " " : scalar)
        }
        let line = String(scalars).trimmingCharacters(in: .whitespaces)
        return text.unicodeScalars.count > limit ? line + "…" : line
    }
}
