import AWSSigV4
import Foundation

/// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (or the older `AWS_SECURITY_TOKEN`) and
/// `AWS_CREDENTIAL_EXPIRATION`, as botocore's `EnvProvider` reads them: not configured without an access key id;
/// an access key id without its secret is an error. Read from the context's copy of the environment (a refresh
/// reads that copy again: credentials that expire are not renewed by this provider, the chain reports them
/// expired). A value type; thread-safe; no I/O.
package struct EnvironmentCredentialProvider: CredentialProvider {
    package var name: String { "env" }

    package init() {}

    package func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials? {
        guard let key = context.variable("AWS_ACCESS_KEY_ID") else { return nil }
        guard let secret = context.variable("AWS_SECRET_ACCESS_KEY") else {
            throw .incomplete(source: "the environment", missing: "AWS_SECRET_ACCESS_KEY")
        }
        let token = context.variable("AWS_SESSION_TOKEN") ?? context.variable("AWS_SECURITY_TOKEN")
        var expiration: Date?
        if let text = context.variable("AWS_CREDENTIAL_EXPIRATION") {
            guard let date = CredentialDate.parse(text) else {
                throw .incomplete(
                    source: "the environment", missing: "AWS_CREDENTIAL_EXPIRATION as an ISO 8601 date")
            }
            expiration = date
        }
        return ProvidedCredentials(
            credentials: AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token),
            origin: CredentialOrigin(provider: name, expiration: expiration), refresher: self)
    }

    package func searched(_ context: CredentialContext) -> String {
        "environment (AWS_ACCESS_KEY_ID unset)"
    }
}
