import AWSSigV4
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

@Suite("Credentials: container credentials and instance metadata, from servers on 127.0.0.1", .heavy)
struct CredentialEndpointTests {
    static func json(_ key: String, expiration: Date) -> ScriptedHTTPServer.Response {
        ScriptedHTTPServer.Response(
            status: 200, headers: [("Content-Type", "application/json")],
            body: Data(credentialsJSON(key: key, expiration: expiration, tokenKey: "Token", version: nil).utf8))
    }

    @Test func aFullURIOnLoopbackWithItsAuthorizationToken() async throws {
        let expiration = Date().addingTimeInterval(3600).rounded()
        let server = try ScriptedHTTPServer { request in
            request.headers["authorization"] == "Bearer from-file"
                ? Self.json("ASIACONTAINER", expiration: expiration) : ScriptedHTTPServer.Response(status: 401)
        }
        defer { server.stop() }
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let tokenFile = sandbox.home.appendingPathComponent("auth-token")
        try Data("Bearer from-file\n".utf8).write(to: tokenFile)
        let found = try await sandbox.resolve(
            sandbox.context([
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": server.endpoint.absoluteString + "/v1/credentials?id=1",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": tokenFile.path,
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": "Bearer ignored-when-a-file-is-named",
            ]))
        #expect(
            found?.credentials
                == AWSCredentials(
                    accessKeyID: "ASIACONTAINER", secretAccessKey: "secret", sessionToken: "token"))
        #expect(found?.origin.provider == "container-role" && found?.expiration == expiration)
        let request = try #require(server.requests.first)
        #expect(request.method == "GET" && request.path == "/v1/credentials?id=1")
        #expect(request.headers["accept"] == "application/json")
    }

    @Test func aRelativeURIGoesToTheContainerHostWithTheTokenVariable() async throws {
        let server = try ScriptedHTTPServer { request in
            request.path == "/v2/credentials/abc" && request.headers["authorization"] == "tok"
                ? Self.json("ASIARELATIVE", expiration: Date().addingTimeInterval(600))
                : ScriptedHTTPServer.Response(status: 404)
        }
        defer { server.stop() }
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        var settings = CredentialSettings()
        settings.containerRelativeBase = server.endpoint.absoluteString  // 169.254.170.2 in a container
        let found = try await sandbox.resolve(
            sandbox.context(
                [
                    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/abc",
                    "AWS_CONTAINER_AUTHORIZATION_TOKEN": "tok",
                ],
                settings: settings))
        #expect(found?.credentials.accessKeyID == "ASIARELATIVE")
    }

    @Test(arguments: [
        "http://example.com/creds", "http://10.0.0.1/creds", "ftp://127.0.0.1/creds", "http:///nohost",
    ])
    func aFullURIMustBeLoopbackHTTPSOrAContainerHost(uri: String) async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let error = await credentialError {
            _ = try await sandbox.resolve(sandbox.context(["AWS_CONTAINER_CREDENTIALS_FULL_URI": uri]))
        }
        guard case .forbiddenEndpoint(let provider, let endpoint, _) = error else {
            Issue.record("expected forbiddenEndpoint, got \(String(describing: error))")
            return
        }
        #expect(provider == "container credentials" && endpoint == uri)
        for allowed in [
            "https://creds.example.com/x", "http://127.0.0.2:9/x", "http://[::1]:9/x", "http://localhost:9/x",
            "http://169.254.170.23/x",
        ] {
            #expect(throws: Never.self) { try ContainerCredentialProvider.checkAllowed(allowed) }
        }
    }

    @Test func aFailingContainerEndpointIsTriedAgainThenReported() async throws {
        let calls = LockedCounter()
        let server = try ScriptedHTTPServer { _ in
            calls.next() == 1
                ? ScriptedHTTPServer.Response(status: 500, body: Data(#"{"code":"Busy","message":"try again"}"#.utf8))
                : Self.json("ASIASECOND", expiration: Date().addingTimeInterval(600))
        }
        defer { server.stop() }
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        var settings = CredentialSettings()
        settings.containerRetryDelay = 0.01
        let variables = ["AWS_CONTAINER_CREDENTIALS_FULL_URI": server.endpoint.absoluteString + "/c"]
        #expect(
            try await sandbox.resolve(sandbox.context(variables, settings: settings))?.credentials.accessKeyID
                == "ASIASECOND")
        #expect(calls.count == 2)

        let refusing = try ScriptedHTTPServer { _ in
            ScriptedHTTPServer.Response(status: 403, body: Data(#"{"code":"AccessDenied","message":"no role"}"#.utf8))
        }
        defer { refusing.stop() }
        let denied = await credentialError {
            _ = try await sandbox.resolve(
                sandbox.context(
                    ["AWS_CONTAINER_CREDENTIALS_FULL_URI": refusing.endpoint.absoluteString], settings: settings))
        }
        #expect(
            denied == .service(provider: "container credentials", code: "AccessDenied", message: "no role", status: 403)
        )
        #expect(refusing.requests.count == 3, "botocore's three attempts")

        let garbage = try ScriptedHTTPServer { _ in ScriptedHTTPServer.Response(status: 200, body: Data("{}".utf8)) }
        defer { garbage.stop() }
        let malformed = await credentialError {
            _ = try await sandbox.resolve(
                sandbox.context(
                    ["AWS_CONTAINER_CREDENTIALS_FULL_URI": garbage.endpoint.absoluteString], settings: settings))
        }
        #expect(malformed == .malformedResponse(provider: "container credentials", reason: "AccessKeyId is missing"))
    }

    @Test func instanceMetadataAsksForATokenThenTheRoleThenItsCredentials() async throws {
        let expiration = Date().addingTimeInterval(6 * 3600).rounded()
        let server = try ScriptedHTTPServer { request in
            switch (request.method, request.path) {
            case ("PUT", "/latest/api/token") where request.headers["x-aws-ec2-metadata-token-ttl-seconds"] == "21600":
                return ScriptedHTTPServer.Response(status: 200, body: Data("imds-token".utf8))
            case (_, _) where request.headers["x-aws-ec2-metadata-token"] != "imds-token":
                return ScriptedHTTPServer.Response(status: 401)
            case ("GET", "/latest/meta-data/iam/security-credentials/"):
                return ScriptedHTTPServer.Response(status: 200, body: Data("photos-role\n".utf8))
            case ("GET", "/latest/meta-data/iam/security-credentials/photos-role"):
                return Self.json("ASIAIMDS", expiration: expiration)
            default:
                return ScriptedHTTPServer.Response(status: 404)
            }
        }
        defer { server.stop() }
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let found = try await sandbox.resolve(
            sandbox.context([
                "AWS_EC2_METADATA_DISABLED": "false",
                "AWS_EC2_METADATA_SERVICE_ENDPOINT": server.endpoint.absoluteString,
            ]))
        #expect(found?.credentials.accessKeyID == "ASIAIMDS")
        #expect(
            found?.origin == CredentialOrigin(provider: "iam-role", expiration: expiration, detail: "role photos-role"))
        #expect(
            server.requests.map { "\($0.method) \($0.path)" } == [
                "PUT /latest/api/token", "GET /latest/meta-data/iam/security-credentials/",
                "GET /latest/meta-data/iam/security-credentials/photos-role",
            ])
    }

    @Test func instanceMetadataFallsBackToV1OnlyWhenTheTokenIsRefusedAndAllowed() async throws {
        let server = try ScriptedHTTPServer { request in
            switch (request.method, request.path) {
            case ("PUT", _): return ScriptedHTTPServer.Response(status: 405)
            case ("GET", "/latest/meta-data/iam/security-credentials/"):
                return ScriptedHTTPServer.Response(status: 200, body: Data("r".utf8))
            default: return Self.json("ASIAV1", expiration: Date().addingTimeInterval(600))
            }
        }
        defer { server.stop() }
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let variables = [
            "AWS_EC2_METADATA_DISABLED": "false", "AWS_EC2_METADATA_SERVICE_ENDPOINT": server.endpoint.absoluteString,
        ]
        #expect(try await sandbox.resolve(sandbox.context(variables))?.credentials.accessKeyID == "ASIAV1")
        #expect(server.requests.allSatisfy { $0.headers["x-aws-ec2-metadata-token"] == nil })
        let v2Only = await credentialError {
            _ = try await sandbox.resolve(
                sandbox.context(variables.merging(["AWS_EC2_METADATA_V1_DISABLED": "true"]) { $1 }))
        }
        guard case .notFound = v2Only else {
            Issue.record("expected notFound, got \(String(describing: v2Only))")
            return
        }
    }

    @Test func instanceMetadataThatIsOffOrSilentMeansNoCredentialsQuickly() async throws {
        let server = try ScriptedHTTPServer { _ in ScriptedHTTPServer.Response(status: 200, body: Data("x".utf8)) }
        defer { server.stop() }
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let off = await credentialError {
            _ = try await sandbox.resolve(
                sandbox.context([
                    "AWS_EC2_METADATA_DISABLED": "TRUE",
                    "AWS_EC2_METADATA_SERVICE_ENDPOINT": server.endpoint.absoluteString,
                ]))
        }
        #expect(off?.description.contains("instance metadata (off: AWS_EC2_METADATA_DISABLED)") == true)
        #expect(server.requests.isEmpty, "disabled means not asked at all")

        // A listener that never answers: given up after the metadata timeout.
        guard let (silent, port) = LoopbackSocket.listen() else { throw MotoError("no port") }
        defer { close(silent) }
        var settings = CredentialSettings()
        settings.metadataTimeout = 0.3
        let silentError = await credentialError {
            _ = try await sandbox.resolve(
                sandbox.context(
                    [
                        "AWS_EC2_METADATA_DISABLED": "false",
                        "AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:\(port)",
                    ],
                    settings: settings))
        }
        guard case .notFound(_, let tried) = silentError else {
            Issue.record("expected notFound, got \(String(describing: silentError))")
            return
        }
        #expect(tried.last == "instance metadata at http://127.0.0.1:\(port) (no answer)")
    }

    @Test func instanceMetadataThatAnswersAnErrorDocumentIsATypedError() async throws {
        let server = try ScriptedHTTPServer { request in
            switch (request.method, request.path) {
            case ("PUT", _): return ScriptedHTTPServer.Response(status: 200, body: Data("t".utf8))
            case (_, "/latest/meta-data/iam/security-credentials/"):
                return ScriptedHTTPServer.Response(status: 200, body: Data("r".utf8))
            default:
                return ScriptedHTTPServer.Response(
                    status: 200,
                    body: Data(#"{"Code":"AssumeRoleUnauthorizedAccess","Message":"EC2 cannot assume the role"}"#.utf8))
            }
        }
        defer { server.stop() }
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let error = await credentialError {
            _ = try await sandbox.resolve(
                sandbox.context([
                    "AWS_EC2_METADATA_DISABLED": "false",
                    "AWS_EC2_METADATA_SERVICE_ENDPOINT": server.endpoint.absoluteString,
                ]))
        }
        #expect(
            error
                == .service(
                    provider: "instance metadata", code: "AssumeRoleUnauthorizedAccess",
                    message: "EC2 cannot assume the role",
                    status: 200))
    }
}
