import Foundation

/// An EC2 instance's role through the instance metadata service, IMDSv2 first — botocore's
/// `InstanceMetadataProvider`: `PUT /latest/api/token` with `x-aws-ec2-metadata-token-ttl-seconds: 21600`, then
/// `GET /latest/meta-data/iam/security-credentials/` for the role's name and `GET …/<role>` for its credentials
/// (JSON with `AccessKeyId`, `SecretAccessKey`, `Token`, `Expiration`), each with `x-aws-ec2-metadata-token`. A
/// service that refuses the token request (403, 404, 405) is asked without one (IMDSv1) unless
/// `AWS_EC2_METADATA_V1_DISABLED=true`. The endpoint is `AWS_EC2_METADATA_SERVICE_ENDPOINT`, else the profile's
/// `ec2_metadata_service_endpoint`, else `http://169.254.169.254`.
///
/// Off with `AWS_EC2_METADATA_DISABLED=true`. Anywhere but on EC2 (or offline) nothing answers: each request gives
/// up after ``CredentialSettings/metadataTimeout`` (1 s) and the provider answers nil, so that the chain reports
/// no credentials. A 200 whose document is an error (`Code`, `Message`) or not the credentials JSON is an error.
/// A value type; thread-safe.
package struct InstanceMetadataCredentialProvider: CredentialProvider {
    package init() {}

    package var name: String { "iam-role" }

    static let provider = "instance metadata"
    static let credentialsPath = "/latest/meta-data/iam/security-credentials/"

    package func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials? {
        if context.variable("AWS_EC2_METADATA_DISABLED")?.lowercased() == "true" { return nil }
        let base = try Self.endpoint(context)
        let timeout = context.settings.metadataTimeout
        func send(_ method: String, _ path: String, _ headers: [(name: String, value: String)]) async
            -> (HTTPResponseHead, Data)?
        {
            // try?: no answer means "not on EC2": the caller reports it
            try? await context.http.send(
                HTTPRequest(method: method, url: base + path, headers: headers), timeout: timeout)
        }
        var tokenHeader: [(name: String, value: String)] = []
        guard
            let (tokenHead, tokenBody) = await send(
                "PUT", "/latest/api/token",
                [
                    ("x-aws-ec2-metadata-token-ttl-seconds", "21600")
                ])
        else { return nil }
        switch tokenHead.status {
        case 200:
            let token = String(decoding: tokenBody, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty, !token.contains("\r"), !token.contains("\n") else { return nil }
            tokenHeader = [("x-aws-ec2-metadata-token", token)]
        case 403, 404, 405:
            if context.variable("AWS_EC2_METADATA_V1_DISABLED")?.lowercased() == "true" { return nil }
        default:
            return nil
        }
        guard let (roleHead, roleBody) = await send("GET", Self.credentialsPath, tokenHeader), roleHead.status == 200,
            let role = String(decoding: roleBody, as: UTF8.self).split(whereSeparator: \.isNewline).first
                .map({ $0.trimmingCharacters(in: .whitespaces) }), !role.isEmpty,
            !role.contains("/"), !role.contains("?"), !role.contains("#")
        else { return nil }
        guard let (head, body) = await send("GET", Self.credentialsPath + role, tokenHeader), head.status == 200,
            !body.isEmpty
        else { return nil }
        switch CredentialJSON.parse(body, tokenKey: "Token", requiresExpiration: true) {
        case .success(let fields):
            return ProvidedCredentials(
                credentials: fields.credentials,
                origin: CredentialOrigin(provider: name, expiration: fields.expiration, detail: "role \(role)"),
                refresher: self)
        case .failure(let failure):
            let (code, message) = ContainerCredentialProvider.errorFields(body)
            if let code, code != "Success" {
                throw .service(provider: Self.provider, code: code, message: message, status: head.status)
            }
            throw .malformedResponse(provider: Self.provider, reason: failure.reason)
        }
    }

    package func searched(_ context: CredentialContext) -> String {
        if context.variable("AWS_EC2_METADATA_DISABLED")?.lowercased() == "true" {
            return "instance metadata (off: AWS_EC2_METADATA_DISABLED)"
        }
        // try?: a description only
        return "instance metadata at \((try? Self.endpoint(context)) ?? context.settings.metadataEndpoint) (no answer)"
    }

    /// The service's base URL, without a trailing `/`.
    static func endpoint(_ context: CredentialContext) throws(CredentialError) -> String {
        var configured = context.variable("AWS_EC2_METADATA_SERVICE_ENDPOINT")
        if configured == nil {
            configured = try context.profiles().merged(context.profile)?["ec2_metadata_service_endpoint"]
        }
        let endpoint = configured.flatMap { $0.isEmpty ? nil : $0 } ?? context.settings.metadataEndpoint
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", url.host != nil
        else {
            throw .forbiddenEndpoint(
                provider: provider, endpoint: endpoint, reason: "it is not an http(s) URL with a host")
        }
        return endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
    }
}
