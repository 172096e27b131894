package import AWSSigV4
package import Foundation

/// The two STS calls the chain makes, in STS's Query API (a form-encoded `POST /` answered with XML, version
/// `2011-06-15`): `AssumeRole`, signed with SigV4 for the service `sts` by the source credentials, and
/// `AssumeRoleWithWebIdentity`, unsigned (the token is the proof).
///
/// The endpoint is `AWS_ENDPOINT_URL_STS`, else `AWS_ENDPOINT_URL` (as botocore reads them), else
/// `https://sts.<region>.amazonaws.com`. A value type; thread-safe. Offline, a call fails with
/// ``CredentialError/unreachable(provider:endpoint:reason:)`` within ``CredentialSettings/stsTimeout``.
package struct STSClient: Sendable {
    let context: CredentialContext
    /// The region of the endpoint and of the signature.
    let region: String
    /// Who calls, for errors (`assume-role`, `assume-role-with-web-identity`).
    let provider: String

    /// The endpoint requests go to.
    var endpoint: String {
        if let url = context.variable("AWS_ENDPOINT_URL_STS") ?? context.variable("AWS_ENDPOINT_URL") { return url }
        let suffix = region.hasPrefix("cn-") ? "amazonaws.com.cn" : "amazonaws.com"
        return "https://sts.\(region).\(suffix)"
    }

    /// A role's temporary credentials.
    package struct Issued: Sendable {
        package var credentials: AWSCredentials
        package var expiration: Date
    }

    /// `AssumeRole`.
    /// - Parameters:
    ///   - roleARN: The role.
    ///   - sessionName: `RoleSessionName`.
    ///   - externalID: `ExternalId`, when the role's trust policy asks for one.
    ///   - duration: `DurationSeconds`, nil for STS's default (one hour).
    ///   - source: The credentials that sign the call.
    func assumeRole(
        roleARN: String, sessionName: String, externalID: String?, duration: Int?, source: AWSCredentials
    ) async throws(CredentialError) -> Issued {
        var parameters = [("Action", "AssumeRole"), ("Version", "2011-06-15"), ("RoleArn", roleARN)]
        parameters.append(("RoleSessionName", sessionName))
        if let externalID { parameters.append(("ExternalId", externalID)) }
        if let duration { parameters.append(("DurationSeconds", String(duration))) }
        return try await call(parameters, result: "AssumeRoleResult", signedBy: source)
    }

    /// `AssumeRoleWithWebIdentity` (unsigned).
    /// - Parameters:
    ///   - roleARN: The role.
    ///   - sessionName: `RoleSessionName`.
    ///   - token: The OIDC token read from the token file.
    func assumeRoleWithWebIdentity(roleARN: String, sessionName: String, token: String) async throws(CredentialError)
        -> Issued
    {
        let parameters = [
            ("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", roleARN),
            ("RoleSessionName", sessionName), ("WebIdentityToken", token),
        ]
        return try await call(parameters, result: "AssumeRoleWithWebIdentityResult", signedBy: nil)
    }

    /// A session name STS accepts (`[\w+=,.@-]{2,64}`) made from `name`, or `cloudassets-<seconds>` without one.
    static func sessionName(_ name: String?, now: Date) -> String {
        if let name, !name.isEmpty { return name }
        return "cloudassets-\(Int(now.timeIntervalSince1970))"
    }

    private func call(_ parameters: [(String, String)], result: String, signedBy source: AWSCredentials?)
        async throws(CredentialError) -> Issued
    {
        let endpoint = self.endpoint
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = HTTPRequest.hostHeader(of: url)
        else {
            throw .forbiddenEndpoint(provider: provider, endpoint: endpoint, reason: "not an http(s) URL with a host")
        }
        let body = Data(
            parameters.map { SigV4.uriEncode($0.0) + "=" + SigV4.uriEncode($0.1) }.joined(separator: "&").utf8)
        var headers: [(name: String, value: String)] = [
            ("content-type", "application/x-www-form-urlencoded; charset=utf-8")
        ]
        let path = url.path.isEmpty ? "/" : url.path
        if let source {
            let signer = SigV4Signer(credentials: source, region: region, service: "sts")
            headers += signer.sign(
                method: "POST", path: path, host: host, headers: headers, payloadHash: SigV4.sha256Hex(data: body),
                date: context.now())
        }
        let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        let target = url.path.isEmpty ? base + "/" : base
        let request = HTTPRequest(method: "POST", url: target, headers: headers, body: body)
        let head: HTTPResponseHead
        let answer: Data
        do {
            (head, answer) = try await context.http.send(request, timeout: context.settings.stsTimeout)
        } catch {
            throw .unreachable(provider: provider, endpoint: endpoint, reason: error.reason)
        }
        return try Self.issued(answer, status: head.status, result: result, provider: provider)
    }

    /// The credentials an STS answer (`<RESULT><Credentials>…`) issues, or the error it reports.
    package static func issued(_ answer: Data, status: Int, result: String, provider: String) throws(CredentialError)
        -> Issued
    {
        // try?: not XML: reported by the else branch
        guard let root = try? S3XMLParser.parse(answer) else {
            if (200..<300).contains(status) {
                throw .malformedResponse(provider: provider, reason: "the answer is not XML")
            }
            throw .service(provider: provider, code: "HTTP\(status)", message: "", status: status)
        }
        guard (200..<300).contains(status) else {
            let error = root.child("Error") ?? root
            throw .service(
                provider: provider, code: error.child("Code")?.text ?? "HTTP\(status)",
                message: error.child("Message")?.text ?? "", status: status)
        }
        guard let issued = root.child(result)?.child("Credentials"),
            let key = issued.child("AccessKeyId")?.text, !key.isEmpty,
            let secret = issued.child("SecretAccessKey")?.text, !secret.isEmpty,
            let expirationText = issued.child("Expiration")?.text
        else {
            throw .malformedResponse(provider: provider, reason: "<\(result)><Credentials> is missing or incomplete")
        }
        guard let expiration = CredentialDate.parse(expirationText) else {
            throw .malformedResponse(provider: provider, reason: "the Expiration is not an ISO 8601 date")
        }
        let token = issued.child("SessionToken")?.text
        return Issued(
            credentials: AWSCredentials(
                accessKeyID: key, secretAccessKey: secret, sessionToken: token.flatMap { $0.isEmpty ? nil : $0 }),
            expiration: expiration)
    }
}
