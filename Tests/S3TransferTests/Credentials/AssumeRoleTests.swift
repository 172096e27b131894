import AWSSigV4
import Essentials
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

/// The STS answers of a fake STS on 127.0.0.1.
enum FakeSTS {
    static func issued(_ action: String, key: String, expiration: Date) -> ScriptedHTTPServer.Response {
        let xml = """
            <\(action)Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><\(action)Result><Credentials>\
            <AccessKeyId>\(key)</AccessKeyId><SecretAccessKey>secret-\(key)</SecretAccessKey>\
            <SessionToken>token-\(key)</SessionToken><Expiration>\(CredentialDate.format(expiration))</Expiration>\
            </Credentials></\(action)Result></\(action)Response>
            """
        return ScriptedHTTPServer.Response(status: 200, headers: [("Content-Type", "text/xml")], body: Data(xml.utf8))
    }

    static func error(status: Int, code: String, message: String) -> ScriptedHTTPServer.Response {
        let xml = """
            <ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>\
            <Code>\(code)</Code><Message>\(message)</Message></Error><RequestId>r-1</RequestId></ErrorResponse>
            """
        return ScriptedHTTPServer.Response(status: status, body: Data(xml.utf8))
    }

    /// The form parameters of a request's body.
    static func parameters(_ request: ScriptedHTTPServer.Request) -> [String: String] {
        var result: [String: String] = [:]
        for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            result[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return result
    }
}

@Suite("Credentials: roles through STS (AssumeRole, AssumeRoleWithWebIdentity)", .heavy)
struct AssumeRoleTests {
    let role = "arn:aws:iam::123456789012:role/photos"

    @Test func aSourceProfileSignsAnAssumeRoleWithTheProfilesSettings() async throws {
        let expiration = Date().addingTimeInterval(3600).rounded()
        let sts = try ScriptedHTTPServer { _ in FakeSTS.issued("AssumeRole", key: "ASIAROLE", expiration: expiration) }
        defer { sts.stop() }
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeCredentials(
            "[base]\naws_access_key_id = SOURCEKEY\naws_secret_access_key = s\naws_session_token = st\n")
        try sandbox.writeConfig(
            """
            [profile photos]
            role_arn = \(role)
            source_profile = base
            role_session_name = nightly-sync
            external_id = ext-42
            duration_seconds = 900
            region = eu-west-1
            """)
        let found = try await sandbox.resolve(
            sandbox.context(["AWS_ENDPOINT_URL_STS": sts.endpoint.absoluteString], profile: "photos"))
        #expect(
            found?.credentials
                == AWSCredentials(
                    accessKeyID: "ASIAROLE", secretAccessKey: "secret-ASIAROLE", sessionToken: "token-ASIAROLE"))
        #expect(
            found?.origin
                == CredentialOrigin(
                    provider: "assume-role", profile: "photos", expiration: expiration, detail: role))
        let request = try #require(sts.requests.first)
        #expect(sts.requests.count == 1)
        #expect(request.method == "POST" && request.path == "/")
        #expect(request.headers["content-type"] == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(
            FakeSTS.parameters(request) == [
                "Action": "AssumeRole", "Version": "2011-06-15", "RoleArn": role, "RoleSessionName": "nightly-sync",
                "ExternalId": "ext-42", "DurationSeconds": "900",
            ])
        let authorization = try #require(request.headers["authorization"].flatMap(SigV4Authorization.init(header:)))
        #expect(authorization.accessKeyID == "SOURCEKEY")
        #expect(authorization.service == "sts" && authorization.region == "eu-west-1")
        #expect(request.headers["x-amz-security-token"] == "st")
        #expect(request.headers["x-amz-content-sha256"] == SigV4.sha256Hex(data: request.body))
    }

    @Test func rolesChainThroughSourceProfilesAndCredentialSources() async throws {
        let counter = LockedCounter()
        let sts = try ScriptedHTTPServer { request in
            let auth = request.headers["authorization"].flatMap(SigV4Authorization.init(header:))
            // Each role's key says which key signed for it.
            return FakeSTS.issued(
                "AssumeRole", key: "ROLE\(counter.next())-BY-\(auth?.accessKeyID ?? "NOBODY")",
                expiration: Date().addingTimeInterval(3600))
        }
        defer { sts.stop() }
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(
            """
            [profile base]
            aws_access_key_id = BASEKEY
            aws_secret_access_key = b
            [profile middle]
            role_arn = \(role)-middle
            source_profile = base
            [profile top]
            role_arn = \(role)-top
            source_profile = middle
            [profile fromenv]
            role_arn = \(role)-env
            credential_source = Environment
            """)
        let variables = ["AWS_ENDPOINT_URL_STS": sts.endpoint.absoluteString]
        let top = try await sandbox.resolve(sandbox.context(variables, profile: "top"))
        #expect(top?.credentials.accessKeyID == "ROLE2-BY-ROLE1-BY-BASEKEY")
        #expect(FakeSTS.parameters(sts.requests[1])["RoleArn"] == role + "-top")
        let fromEnvironment = try await sandbox.resolve(
            sandbox.context(
                variables.merging(["AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "e"]) { $1 },
                profile: "fromenv"))
        #expect(fromEnvironment?.credentials.accessKeyID == "ROLE3-BY-ENVKEY")
        // The default session name is made up, within STS's rules.
        let name = try #require(FakeSTS.parameters(sts.requests[2])["RoleSessionName"])
        #expect(name.hasPrefix("cloudassets-") && (2...64).contains(name.count))
    }

    @Test(arguments: [
        ("[profile a]\nrole_arn = R\n", "a", "role_arn needs a source_profile or a credential_source"),
        ("[profile a]\nrole_arn = R\nsource_profile = nobody\n", "a", "its source_profile nobody does not exist"),
        (
            "[profile a]\nrole_arn = R\nsource_profile = b\n[profile b]\nrole_arn = R\nsource_profile = a\n", "a",
            "its source_profile a leads back to itself (a → b → a)"
        ),
        (
            "[profile a]\nrole_arn = R\nsource_profile = b\n[profile b]\nregion = x\n", "a",
            "its source_profile b has no credentials"
        ),
        ("[profile a]\nrole_arn = R\ncredential_source = Ec2\n", "a", "credential_source Ec2 is not Environment"),
        (
            "[profile a]\nrole_arn = R\nsource_profile = a\ncredential_source = Environment\n", "a",
            "both source_profile and credential_source"
        ),
        ("[profile a]\nrole_arn = R\nmfa_serial = arn:mfa\nsource_profile = a\n", "a", "mfa_serial needs a code"),
        ("[profile a]\nrole_arn = R\nduration_seconds = hour\nsource_profile = a\n", "a", "duration_seconds \"hour\""),
    ])
    func aRoleThatCannotBeAssumedAsWrittenIsATypedError(config: String, profile: String, reason: String) async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(config)
        // Nothing listens there: any STS request would fail otherwise.
        let error = await credentialError {
            _ = try await sandbox.resolve(
                sandbox.context(["AWS_ENDPOINT_URL_STS": "http://127.0.0.1:1"], profile: profile))
        }
        guard case .invalidProfile(let named, let why) = error else {
            Issue.record("expected invalidProfile, got \(String(describing: error))")
            return
        }
        // A loop is reported by the profile that closes it.
        #expect(named == (reason.contains("leads back") ? "b" : profile) && why.contains(reason), "\(why)")
    }

    @Test func anSTSRefusalIsATypedDeniedErrorAndGarbageIsMalformed() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(
            "[profile a]\nrole_arn = \(role)\nsource_profile = b\n[profile b]\naws_access_key_id = K\naws_secret_access_key = s\n"
        )
        let refusing = try ScriptedHTTPServer { _ in
            FakeSTS.error(
                status: 403, code: "AccessDenied", message: "User K is not authorized to perform: sts:AssumeRole")
        }
        defer { refusing.stop() }
        let denied = await credentialError {
            _ = try await sandbox.resolve(
                sandbox.context(["AWS_ENDPOINT_URL_STS": refusing.endpoint.absoluteString], profile: "a"))
        }
        #expect(
            denied
                == .service(
                    provider: "STS AssumeRole", code: "AccessDenied",
                    message: "User K is not authorized to perform: sts:AssumeRole",
                    status: 403))
        #expect(denied?.isDenied == true)
        #expect(denied?.description.contains("\n") == false)

        let garbage = try ScriptedHTTPServer { _ in
            ScriptedHTTPServer.Response(status: 200, body: Data("<html>hi".utf8))
        }
        defer { garbage.stop() }
        let malformed = await credentialError {
            _ = try await sandbox.resolve(
                sandbox.context(["AWS_ENDPOINT_URL_STS": garbage.endpoint.absoluteString], profile: "a"))
        }
        #expect(malformed == .malformedResponse(provider: "STS AssumeRole", reason: "the answer is not XML"))

        let unreachable = await credentialError {
            _ = try await sandbox.resolve(sandbox.context(["AWS_ENDPOINT_URL_STS": "http://127.0.0.1:1"], profile: "a"))
        }
        #expect(unreachable?.isUnreachable == true, "\(String(describing: unreachable))")
    }

    @Test func aWebIdentityTokenFileIsExchangedUnsigned() async throws {
        let expiration = Date().addingTimeInterval(900).rounded()
        let sts = try ScriptedHTTPServer { _ in
            FakeSTS.issued("AssumeRoleWithWebIdentity", key: "ASIAWEB", expiration: expiration)
        }
        defer { sts.stop() }
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let tokenFile = sandbox.home.appendingPathComponent("token")
        try Data("eyJhbGciOi.token.sig\n".utf8).write(to: tokenFile)
        let found = try await sandbox.resolve(
            sandbox.context([
                "AWS_ENDPOINT_URL_STS": sts.endpoint.absoluteString, "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile.path,
                "AWS_ROLE_ARN": role, "AWS_ROLE_SESSION_NAME": "pod-7",
            ]))
        #expect(found?.credentials.accessKeyID == "ASIAWEB")
        #expect(found?.origin.provider == "assume-role-with-web-identity" && found?.expiration == expiration)
        let request = try #require(sts.requests.first)
        #expect(request.headers["authorization"] == nil, "AssumeRoleWithWebIdentity is not signed")
        #expect(
            FakeSTS.parameters(request) == [
                "Action": "AssumeRoleWithWebIdentity", "Version": "2011-06-15", "RoleArn": role,
                "RoleSessionName": "pod-7", "WebIdentityToken": "eyJhbGciOi.token.sig",
            ])

        // The same from the profile's keys; a token file without a role is an error.
        try sandbox.writeConfig("[default]\nweb_identity_token_file = \(tokenFile.path)\nrole_arn = \(role)\n")
        let fromProfile = try await sandbox.resolve(
            sandbox.context(["AWS_ENDPOINT_URL_STS": sts.endpoint.absoluteString]))
        #expect(fromProfile?.credentials.accessKeyID == "ASIAWEB")
        let noRole = await credentialError {
            _ = try await sandbox.resolve(
                sandbox.context(["AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile.path, "AWS_CONFIG_FILE": "/nonexistent"]))
        }
        #expect(noRole == .incomplete(source: "the web identity configuration", missing: "AWS_ROLE_ARN (or role_arn)"))
        let noToken = await credentialError {
            _ = try await sandbox.resolve(
                sandbox.context(["AWS_WEB_IDENTITY_TOKEN_FILE": "/nonexistent/token", "AWS_ROLE_ARN": role]))
        }
        guard case .unreadableFile(let path, _) = noToken else {
            Issue.record("expected unreadableFile, got \(String(describing: noToken))")
            return
        }
        #expect(path == "/nonexistent/token")
    }

    @Test func motoIssuesRolesAndWebIdentities() async throws {
        let moto = try MotoServer()
        defer { moto.stop() }
        try moto.waitUntilReady()
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeCredentials("[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = base-secret\n")
        try sandbox.writeConfig("[profile photos]\nrole_arn = \(role)\nsource_profile = base\nduration_seconds = 900\n")
        let before = Date()
        let assumed = try #require(
            try await sandbox.resolve(
                sandbox.context(["AWS_ENDPOINT_URL_STS": moto.endpoint.absoluteString], profile: "photos")))
        #expect(assumed.origin.provider == "assume-role")
        #expect(!assumed.credentials.accessKeyID.isEmpty && assumed.credentials.accessKeyID != "AKIDBASE")
        #expect(assumed.credentials.sessionToken?.isEmpty == false)
        let expiration = try #require(assumed.expiration)
        #expect(abs(expiration.timeIntervalSince(before) - 900) < 120, "moto honours DurationSeconds")

        let tokenFile = sandbox.home.appendingPathComponent("token")
        try Data("a-kubernetes-token".utf8).write(to: tokenFile)
        let web = try #require(
            try await sandbox.resolve(
                sandbox.context([
                    "AWS_ENDPOINT_URL_STS": moto.endpoint.absoluteString, "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile.path,
                    "AWS_ROLE_ARN": role,
                ])))
        #expect(web.origin.provider == "assume-role-with-web-identity")
        #expect(web.credentials.sessionToken?.isEmpty == false && web.expiration != nil)
    }
}

/// A counter shared by a server's handler threads.
final class LockedCounter: Sendable {
    private let value = LockedBox(0)
    func next() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
    var count: Int { value.withLock { $0 } }
}

extension Date {
    /// To the whole second (what ISO 8601 without fractions carries).
    func rounded() -> Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}
