import Foundation

/// Container credentials (ECS task roles, EKS Pod Identity) — botocore's `ContainerProvider`:
/// `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` against ECS's `169.254.170.2` (``CredentialSettings/containerRelativeBase``),
/// else `AWS_CONTAINER_CREDENTIALS_FULL_URI`, which must be `https`, a loopback address or one of the container
/// hosts botocore allows (`169.254.170.2`, `169.254.170.23`, `fd00:ec2::23`, `localhost`); with an `Authorization`
/// header from `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` (read on every request: it rotates) or
/// `AWS_CONTAINER_AUTHORIZATION_TOKEN`. The answer is JSON with `AccessKeyId`, `SecretAccessKey`, `Token` and
/// `Expiration`; a refresh asks again.
///
/// Not configured when neither variable is set. Each request may take ``CredentialSettings/containerTimeout``;
/// a failure is tried ``CredentialSettings/containerAttempts`` times, ``CredentialSettings/containerRetryDelay``
/// apart, then reported (unreachable, an error status, malformed JSON). A value type; thread-safe.
package struct ContainerCredentialProvider: CredentialProvider {
    package init() {}

    package var name: String { "container-role" }

    /// The hosts a full URI may name over plain HTTP besides loopback addresses.
    static let allowedHosts: Set<String> = ["169.254.170.2", "169.254.170.23", "fd00:ec2::23", "localhost"]

    package func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials? {
        let relative = context.variable("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        let full = context.variable("AWS_CONTAINER_CREDENTIALS_FULL_URI")
        guard relative != nil || full != nil else { return nil }
        let endpoint: String
        if let relative {
            endpoint = context.settings.containerRelativeBase + relative
        } else {
            endpoint = full!
            try Self.checkAllowed(endpoint)
        }
        let settings = context.settings
        var failure: CredentialError?
        for attempt in 0..<max(1, settings.containerAttempts) {
            if attempt > 0 {
                // try?: cancelled: the next attempt's request sees it
                try? await Task.sleep(nanoseconds: UInt64(settings.containerRetryDelay * 1_000_000_000))
            }
            do {
                let fields = try await fetch(endpoint, context: context)
                return ProvidedCredentials(
                    credentials: fields.credentials,
                    origin: CredentialOrigin(provider: name, expiration: fields.expiration, detail: endpoint),
                    refresher: self)
            } catch {
                failure = error
                // A token that cannot be read or an endpoint refused by name fails the same way every time.
                if case .unreadableFile = error { break }
            }
        }
        throw failure!
    }

    package func searched(_ context: CredentialContext) -> String {
        "container credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and _FULL_URI unset)"
    }

    /// Refuses a full URI that is neither HTTPS, loopback nor an allowed container host.
    static func checkAllowed(_ endpoint: String) throws(CredentialError) {
        let provider = "container credentials"
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(), let host = url.host,
            !host.isEmpty
        else {
            throw .forbiddenEndpoint(provider: provider, endpoint: endpoint, reason: "it is not a URL with a host")
        }
        if scheme == "https" { return }
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        guard scheme == "http", isLoopback(bare) || allowedHosts.contains(bare.lowercased()) else {
            throw .forbiddenEndpoint(
                provider: provider, endpoint: endpoint,
                reason: "a full URI must be https, a loopback address or a container host (169.254.170.2, "
                    + "169.254.170.23, fd00:ec2::23, localhost)")
        }
    }

    /// Whether `host` is an IPv4 address in 127.0.0.0/8 or the IPv6 `::1`.
    static func isLoopback(_ host: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
    }

    private func fetch(_ endpoint: String, context: CredentialContext) async throws(CredentialError)
        -> CredentialJSON.Fields
    {
        let provider = "container credentials"
        var headers: [(name: String, value: String)] = [("accept", "application/json")]
        var token: String?
        if let file = context.variable("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
            token = try WebIdentityCredentialProvider.readToken(file)
        } else if let value = context.variable("AWS_CONTAINER_AUTHORIZATION_TOKEN") {
            token = value
        }
        if let token {
            guard !token.contains("\r"), !token.contains("\n") else {
                throw .forbiddenEndpoint(
                    provider: provider, endpoint: endpoint, reason: "the authorization token holds a line break")
            }
            headers.append(("authorization", token))
        }
        let head: HTTPResponseHead
        let body: Data
        do {
            (head, body) = try await context.http.send(
                HTTPRequest(method: "GET", url: endpoint, headers: headers), timeout: context.settings.containerTimeout)
        } catch {
            throw .unreachable(provider: provider, endpoint: endpoint, reason: error.reason)
        }
        guard head.status == 200 else {
            let (code, message) = Self.errorFields(body)
            throw .service(
                provider: provider, code: code ?? "HTTP\(head.status)", message: message, status: head.status)
        }
        switch CredentialJSON.parse(body, tokenKey: "Token", requiresExpiration: true) {
        case .success(let fields): return fields
        case .failure(let failure): throw .malformedResponse(provider: provider, reason: failure.reason)
        }
    }

    /// `Code`/`code` and `Message`/`message` of a JSON error answer, when it has them.
    static func errorFields(_ body: Data) -> (code: String?, message: String) {
        // try?: a body that is not JSON has no fields; the status is reported
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return (nil, "") }
        let code = (object["Code"] ?? object["code"]) as? String
        let message = (object["Message"] ?? object["message"]) as? String ?? ""
        return (code, message)
    }
}
