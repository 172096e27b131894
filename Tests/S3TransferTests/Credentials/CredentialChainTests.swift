import AWSSigV4
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

@Suite("Credentials: the environment and the shared files, in botocore's order", .heavy)
struct CredentialChainTests {
    @Test func theEnvironmentComesFirstWithItsSessionTokenAndExpiration() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeCredentials("[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = file\n")
        let found = try await sandbox.resolve(
            sandbox.context([
                "AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "env", "AWS_SESSION_TOKEN": "tok",
                "AWS_CREDENTIAL_EXPIRATION": "2030-01-02T03:04:05Z",
            ]))
        #expect(
            found?.credentials == AWSCredentials(accessKeyID: "ENVKEY", secretAccessKey: "env", sessionToken: "tok"))
        #expect(found?.origin.provider == "env")
        #expect(found?.expiration == CredentialDate.parse("2030-01-02T03:04:05Z"))
    }

    @Test func anAccessKeyWithoutItsSecretIsAnErrorNotTheNextProvider() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeCredentials("[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = file\n")
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context(["AWS_ACCESS_KEY_ID": "K"])) }
        #expect(error == .incomplete(source: "the environment", missing: "AWS_SECRET_ACCESS_KEY"))
    }

    @Test func theDefaultProfileOfTheCredentialsFile() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeCredentials(
            "[default]\naws_access_key_id = AKID\naws_secret_access_key = s3cret\naws_session_token = t\n")
        let found = try await sandbox.resolve(sandbox.context())
        #expect(found?.credentials == AWSCredentials(accessKeyID: "AKID", secretAccessKey: "s3cret", sessionToken: "t"))
        #expect(
            found?.origin
                == CredentialOrigin(
                    provider: "shared-credentials-file", profile: "default", detail: sandbox.credentialsFile.path))
        #expect(found?.expiration == nil)
    }

    @Test func awsProfileNamesTheProfileOfEitherFile() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeCredentials("[default]\naws_access_key_id = D\naws_secret_access_key = d\n")
        try sandbox.writeConfig(
            "[profile photos]\naws_access_key_id = CONFIGKEY\naws_secret_access_key = c\n"
                + "[photos]\naws_access_key_id = NOTAPROFILE\naws_secret_access_key = x\n")
        let found = try await sandbox.resolve(sandbox.context(["AWS_PROFILE": "photos"]))
        #expect(found?.credentials.accessKeyID == "CONFIGKEY")
        #expect(found?.origin.provider == "config-file" && found?.origin.profile == "photos")

        // The credentials file comes before the config file.
        try sandbox.writeCredentials(
            "[default]\naws_access_key_id = D\naws_secret_access_key = d\n"
                + "[photos]\naws_access_key_id = CREDKEY\naws_secret_access_key = k\n")
        #expect(
            try await sandbox.resolve(sandbox.context(["AWS_PROFILE": "photos"]))?.credentials.accessKeyID == "CREDKEY")
        // AWS_DEFAULT_PROFILE is read first, as botocore reads it.
        let both = sandbox.context(["AWS_PROFILE": "photos", "AWS_DEFAULT_PROFILE": "default"])
        #expect(try await sandbox.resolve(both)?.credentials.accessKeyID == "D")
    }

    @Test func theFilesCanBeElsewhere() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let credentials = sandbox.home.appendingPathComponent("creds.ini")
        let config = sandbox.home.appendingPathComponent("conf.ini")
        try Data("[p]\naws_access_key_id = ELSEWHERE\naws_secret_access_key = e\n".utf8).write(to: credentials)
        try Data("[profile q]\naws_access_key_id = CONF\naws_secret_access_key = c\n".utf8).write(to: config)
        let context = sandbox.context([
            "AWS_SHARED_CREDENTIALS_FILE": credentials.path, "AWS_CONFIG_FILE": config.path, "AWS_PROFILE": "p",
        ])
        #expect(try await sandbox.resolve(context)?.credentials.accessKeyID == "ELSEWHERE")
        let q = sandbox.context(
            ["AWS_SHARED_CREDENTIALS_FILE": credentials.path, "AWS_CONFIG_FILE": config.path], profile: "q")
        #expect(try await sandbox.resolve(q)?.credentials.accessKeyID == "CONF")
    }

    @Test func anExplicitProfileWinsOverTheEnvironmentsKeys() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeCredentials("[photos]\naws_access_key_id = PROFILEKEY\naws_secret_access_key = p\n")
        let variables = ["AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "e"]
        #expect(
            try await sandbox.resolve(sandbox.context(variables, profile: "photos"))?.credentials.accessKeyID
                == "PROFILEKEY")
        // AWS_PROFILE is not explicit: the environment's keys still come first (botocore's order).
        var withVariable = variables
        withVariable["AWS_PROFILE"] = "photos"
        #expect(try await sandbox.resolve(sandbox.context(withVariable))?.credentials.accessKeyID == "ENVKEY")
    }

    @Test func aProfileInNeitherFileIsAnErrorNamingBoth() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context(["AWS_PROFILE": "photos"])) }
        #expect(
            error
                == .profileNotFound(profile: "photos", files: [sandbox.credentialsFile.path, sandbox.configFile.path]))
        #expect(error?.description.contains("AWS_PROFILE") == true)
    }

    @Test func aMalformedFileIsAnErrorWithItsPathAndLine() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeCredentials("[default]\naws_access_key_id AKID\n")
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context()) }
        #expect(error == .malformedFile(path: sandbox.credentialsFile.path, line: 2, reason: "expected key = value"))
        // Credentials in the environment are found before the files are read (as botocore does).
        let found = try await sandbox.resolve(
            sandbox.context(["AWS_ACCESS_KEY_ID": "K", "AWS_SECRET_ACCESS_KEY": "S"]))
        #expect(found?.credentials.accessKeyID == "K")
    }

    @Test func aKeyWithoutItsSecretInAProfileIsAnError() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try sandbox.writeCredentials("[default]\naws_access_key_id = AKID\n")
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context()) }
        #expect(
            error
                == .incomplete(
                    source: "profile default of \(sandbox.credentialsFile.path)", missing: "aws_secret_access_key"))
    }

    @Test func nothingFoundIsOneLineNamingEverythingTried() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context()) }
        guard case .notFound(let profile, let tried) = error else {
            Issue.record("expected notFound, got \(String(describing: error))")
            return
        }
        #expect(profile == "default")
        #expect(tried.count == 8)
        let line = error!.description
        #expect(!line.contains("\n"))
        for part in [
            "AWS_ACCESS_KEY_ID", "role_arn", "AWS_WEB_IDENTITY_TOKEN_FILE", sandbox.credentialsFile.path,
            "credential_process", sandbox.configFile.path, "AWS_CONTAINER_CREDENTIALS", "AWS_EC2_METADATA_DISABLED",
        ] {
            #expect(line.contains(part), "\(part) is not named in: \(line)")
        }
    }

    @Test func anUnreadableFileIsAnErrorNotAnAbsentOne() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        try FileManager.default.createDirectory(at: sandbox.credentialsFile, withIntermediateDirectories: true)
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context()) }
        guard case .unreadableFile(let path, _) = error else {
            Issue.record("expected unreadableFile, got \(String(describing: error))")
            return
        }
        #expect(path == sandbox.credentialsFile.path)
    }

    @Test func aChangedFileIsReadAgain() async throws {
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let context = sandbox.context()
        try sandbox.writeCredentials("[default]\naws_access_key_id = FIRST\naws_secret_access_key = 1\n")
        #expect(try await sandbox.resolve(context)?.credentials.accessKeyID == "FIRST")
        try sandbox.writeCredentials("[default]\naws_access_key_id = SECOND-LONGER\naws_secret_access_key = 2\n")
        #expect(try await sandbox.resolve(context)?.credentials.accessKeyID == "SECOND-LONGER")
    }
}
