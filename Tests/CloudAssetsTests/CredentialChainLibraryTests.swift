import AWSSigV4
import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets
@testable import S3Transfer

/// The time of a credentials test: it moves only when the test moves it, so that expiry does not depend on how fast
/// a loaded machine runs (the issuer, the fake S3 and the library all read it).
final class VirtualClock: Sendable {
    private let time = LockedBox(Date())
    var now: Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
}

/// A container credentials endpoint on 127.0.0.1 that hands out numbered credentials valid for `lifetime` on
/// `clock`, has the fake S3 accept each until it expires (and refuse it after, with `ExpiredToken`), and records
/// when it issued them.
final class CredentialIssuer: Sendable {
    struct Issue: Sendable {
        var key: String
        var issued: Date
        var expiration: Date
    }

    let server: ScriptedHTTPServer
    private let issues: LockedBox<[Issue]>

    init(s3: FakeS3Server, lifetime: TimeInterval, clock: VirtualClock) throws {
        let issues = LockedBox<[Issue]>([])
        self.issues = issues
        server = try ScriptedHTTPServer { _ in
            let now = clock.now
            let expiration = now + lifetime
            let number = issues.withLock { $0.count + 1 }
            let credentials = AWSCredentials(
                accessKeyID: "ASIATEMP\(number)", secretAccessKey: "secret-\(number)", sessionToken: "token-\(number)")
            s3.acceptTemporaryCredentials(credentials, until: expiration, clock: { clock.now })
            issues.withLock { $0.append(Issue(key: credentials.accessKeyID, issued: now, expiration: expiration)) }
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let json = """
                {"AccessKeyId": "\(credentials.accessKeyID)", "SecretAccessKey": "\(credentials.secretAccessKey)", \
                "Token": "\(credentials.sessionToken!)", "Expiration": "\(formatter.string(from: expiration))"}
                """
            return ScriptedHTTPServer.Response(status: 200, body: Data(json.utf8))
        }
    }

    var url: String { server.endpoint.absoluteString + "/v2/credentials" }
    var all: [Issue] { issues.withLock { $0 } }
    /// How many of the issued credentials have expired by `date`.
    func expired(by date: Date) -> Int { all.filter { $0.expiration <= date }.count }
}

@Suite("Library: the AWS credential chain", .heavy)
struct CredentialChainLibraryTests {
    /// The environment of a chain that finds nothing but what a test puts in `home`.
    static func environment(home: URL, _ extra: [String: String] = [:]) -> [String: String] {
        ["HOME": home.path, "AWS_EC2_METADATA_DISABLED": "true"].merging(extra) { $1 }
    }

    @Test("temporary credentials: one refresh per expiry, shared by a long download and syncs, no request fails")
    func temporaryCredentialsAreRefreshedOncePerExpiryWhileADownloadAndSyncsRun() async throws {
        try await withHarness { harness in
            let big = testBytes(count: 2_000_000, seed: 7)
            try harness.put("big.bin", data: big)
            for i in 0..<4 { try harness.put("small\(i).jpg", data: testBytes(count: 3000, seed: UInt64(i))) }
            // Credentials live 3 s of the test's clock, which moves 0.1 s after each sync: expiry happens between
            // requests the test can count, however slowly a loaded machine runs them.
            let clock = VirtualClock()
            let lifetime: TimeInterval = 3
            let step: TimeInterval = 0.1
            let issuer = try CredentialIssuer(s3: harness.server, lifetime: lifetime, clock: clock)
            defer { issuer.server.stop() }
            var configuration = harness.configuration()
            configuration.credentials = .default
            configuration.credentialEnvironment = Self.environment(
                home: harness.folder, ["AWS_CONTAINER_CREDENTIALS_FULL_URI": issuer.url])
            configuration.credentialClock = { clock.now }
            // Refreshed from half their life on, awaited in the last 40 %.
            var timing = CredentialRefreshState.Timing()
            timing.refreshFraction = 0.5
            timing.mandatoryFraction = 0.4
            configuration.credentialTiming = timing
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            let asset = try library.asset(path: "big.bin")

            // The long download: 300 KB/s, cut twice, so that it goes on with requests signed later.
            harness.server.faults.add(
                .bandwidthLimit(bytesPerSecond: 300_000), keyPattern: "originals/big.bin", method: "GET")
            harness.server.faults.add(
                .resetAfter(bytes: 700_000), keyPattern: "originals/big.bin", method: "GET", times: 2)
            let downloaded = LockedBox(false)
            let download = Task {
                defer { downloaded.withLock { $0 = true } }
                return try await library.data(for: asset, options: AssetLibrary.networkOptions())
            }
            // Syncs one after another, paced at 50 ms (a busy `watch`, not a loop starving the machine), each
            // moving the clock on, until the download is done and three credentials have expired.
            var syncs = 0
            while !downloaded.withLock({ $0 }) || issuer.expired(by: clock.now) < 3 {
                try await library.sync()
                syncs += 1
                clock.advance(step)
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await download.value == big)

            let refused = harness.log.filter { $0.status >= 400 }
            #expect(refused.isEmpty, "refused: \(refused.map { "\($0.method) \($0.key ?? "") \($0.status)" })")
            let issues = issuer.all
            #expect(issues.count >= 4, "three expiries crossed: the first credentials and three refreshes")
            for (previous, next) in zip(issues, issues.dropFirst()) {
                #expect(next.issued < previous.expiration, "\(next.key) came before \(previous.key) expired")
                #expect(
                    next.issued >= previous.issued + lifetime * (1 - timing.refreshFraction),
                    "\(next.key) is the one refresh of \(previous.key), not an extra one")
            }
            #expect(harness.gets(of: "big.bin").count == 3, "the download went on twice with new requests")
            #expect(syncs >= 30)
            let source = try #require(library.credentialSource)
            #expect(source.provider == "container-role")
            let latest = try #require(issues.last?.expiration)
            #expect(abs((source.expiration ?? .distantPast).timeIntervalSince(latest)) < 0.01, "the latest credentials")
        }
    }

    @Test func aProfileOfTheSharedFilesSignsTheRequests() async throws {
        try await withHarness { harness in
            try harness.put("a.jpg", data: testBytes(count: 100, seed: 1))
            let aws = harness.folder.appendingPathComponent(".aws")
            try FileManager.default.createDirectory(at: aws, withIntermediateDirectories: true)
            try Data(
                "[photos]\naws_access_key_id = \(LibraryHarness.accessKey)\naws_secret_access_key = \(LibraryHarness.secretKey)\n"
                    .utf8
            ).write(to: aws.appendingPathComponent("credentials"))
            for (credentials, variables) in [
                (Credentials.profile("photos"), [String: String]()), (.default, ["AWS_PROFILE": "photos"]),
            ] {
                var configuration = harness.configuration(
                    storeURL: harness.folder.appendingPathComponent("library-\(UUID().uuidString)"))
                configuration.credentials = credentials
                configuration.credentialEnvironment = Self.environment(home: harness.folder, variables)
                let library = try await harness.open(configuration)
                #expect(library.credentialSource == nil, "resolved by the first request, not by the open")
                #expect(try await library.sync().inserted == 1)
                let source = try #require(library.credentialSource)
                #expect(source.provider == "shared-credentials-file" && source.profile == "photos")
                #expect(source.expiration == nil)
                #expect(!source.description.contains(LibraryHarness.secretKey))
            }
        }
    }

    @Test func nothingFoundFailsTheFirstRequestWithOneLineNamingWhatWasTried() async throws {
        try await withHarness { harness in
            try harness.put("a.jpg", data: testBytes(count: 100, seed: 1))
            var configuration = harness.configuration()
            configuration.credentials = .default
            configuration.credentialEnvironment = Self.environment(home: harness.folder)
            let library = try await harness.open(configuration)
            let error = try #require(await #expect(throws: CloudAssetsError.self) { try await library.sync() })
            #expect(error.code == .missingCredentials)
            #expect(!error.description.contains("\n"))
            for named in ["AWS_ACCESS_KEY_ID", ".aws/credentials", "credential_process", "AWS_CONTAINER_CREDENTIALS"] {
                #expect(error.description.contains(named), "\(named) missing from: \(error.description)")
            }
            #expect(harness.log.isEmpty, "no request went out unsigned")
            let resolved = try #require(
                await #expect(throws: CloudAssetsError.self) { try await library.resolveCredentials() })
            #expect(resolved.code == .missingCredentials)

            // A profile that does not exist, and an empty one, are errors too.
            var missing = harness.configuration(storeURL: harness.folder.appendingPathComponent("other"))
            missing.credentials = .profile("nobody")
            missing.credentialEnvironment = Self.environment(home: harness.folder)
            let other = try await harness.open(missing)
            let notFound = try #require(await #expect(throws: CloudAssetsError.self) { try await other.sync() })
            #expect(notFound.code == .missingCredentials && notFound.description.contains("\"nobody\""))
            var empty = missing
            empty.credentials = .profile("")
            let invalid = try #require(
                await #expect(throws: CloudAssetsError.self) { try await AssetLibrary(configuration: empty) })
            #expect(invalid.code == .invalidConfiguration)
        }
    }

    @Test func anSTSRefusalIsAccessDeniedInOneLine() async throws {
        try await withHarness { harness in
            let sts = try ScriptedHTTPServer { _ in
                let xml =
                    "<ErrorResponse><Error><Code>AccessDenied</Code><Message>not trusted</Message></Error></ErrorResponse>"
                return ScriptedHTTPServer.Response(status: 403, body: Data(xml.utf8))
            }
            defer { sts.stop() }
            let aws = harness.folder.appendingPathComponent(".aws")
            try FileManager.default.createDirectory(at: aws, withIntermediateDirectories: true)
            try Data(
                "[profile role]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = base\n[profile base]\naws_access_key_id = K\naws_secret_access_key = S\n"
                    .utf8
            ).write(to: aws.appendingPathComponent("config"))
            var configuration = harness.configuration()
            configuration.credentials = .profile("role")
            configuration.credentialEnvironment = Self.environment(
                home: harness.folder, ["AWS_ENDPOINT_URL_STS": sts.endpoint.absoluteString])
            let library = try await harness.open(configuration)
            let error = try #require(
                await #expect(throws: CloudAssetsError.self) { try await library.resolveCredentials() })
            #expect(error.code == .accessDenied)
            #expect(
                error.description == "STS AssumeRole refused to issue credentials (HTTP 403 AccessDenied): not trusted."
            )
        }
    }

    @Test func aRoleAssumedThroughMotosSTSSignsRequestsToMotosS3() async throws {
        let moto = try MotoServer()
        defer { moto.stop() }
        try moto.waitUntilReady()
        let fill = """
            import boto3, sys
            s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                              aws_access_key_id="test", aws_secret_access_key="test")
            s3.create_bucket(Bucket="photos")
            s3.put_object(Bucket="photos", Key="originals/a.png", Body=b"x" * 10,
                          Metadata={"creation-date": "2024-01-01T00:00:00Z", "media-type": "image"})
            """
        try runPython(fill, arguments: [moto.endpoint.absoluteString])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moto-role-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(
            "[profile photos]\nrole_arn = arn:aws:iam::123456789012:role/photos\nsource_profile = base\nduration_seconds = 900\n[profile base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = base\n"
                .utf8
        ).write(to: folder.appendingPathComponent(".aws/config"))
        var configuration = AssetLibrary.Configuration(storeURL: folder.appendingPathComponent("store"))
        configuration.endpoint = moto.endpoint
        configuration.bucket = "photos"
        configuration.credentials = .profile("photos")
        configuration.credentialEnvironment = Self.environment(
            home: folder, ["AWS_ENDPOINT_URL_STS": moto.endpoint.absoluteString])
        let library = try await AssetLibrary(configuration: configuration)
        defer { library.close() }
        #expect(try await library.sync().inserted == 1)
        let source = try #require(library.credentialSource)
        #expect(source.provider == "assume-role" && source.profile == "photos")
        #expect(source.detail == "arn:aws:iam::123456789012:role/photos")
        let expiration = try #require(source.expiration)
        #expect(expiration > Date() + 600 && expiration < Date() + 1000)
    }
}
