import AWSSigV4
import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

/// Hands out credentials valid for `lifetime` on `clock`, each accepted by the fake S3 until then.
struct RegisteringIssuer: CredentialProvider {
    let server: FakeS3Server
    let clock: TestClock
    let lifetime: TimeInterval
    let count = LockedCounter()

    var name: String { "registering-issuer" }

    func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials? {
        let number = count.next()
        let credentials = AWSCredentials(
            accessKeyID: "ASIA\(number)", secretAccessKey: "secret\(number)", sessionToken: "token\(number)")
        let expiration = clock.now + lifetime
        let clock = self.clock
        server.acceptTemporaryCredentials(credentials, until: expiration, clock: { clock.now })
        return ProvidedCredentials(
            credentials: credentials, origin: CredentialOrigin(provider: name, expiration: expiration), refresher: self)
    }

    func searched(_ context: CredentialContext) -> String { name }
}

@Suite("S3Client: credentials resolved before each attempt", .heavy)
struct S3ClientCredentialTests {
    static func client(_ fixture: FakeS3Fixture, cache: CredentialCache) -> S3Client {
        var configuration = fixture.client.configuration
        configuration.credentials = nil
        configuration.credentialCache = cache
        return S3Client(configuration: configuration)
    }

    @Test func everyAttemptIsSignedWithTheCurrentCredentialsAndTheirToken() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("a.bin", size: 200_000)
        let clock = TestClock()
        let issuer = RegisteringIssuer(server: fixture.server, clock: clock, lifetime: 900)
        let cache = CredentialCache(
            provider: issuer, context: CredentialContext(environment: [:], now: { clock.now }))
        let client = Self.client(fixture, cache: cache)
        #expect(try await client.listObjectsV2(bucket: FakeS3Fixture.bucket).objects.count == 1)
        clock.advance(1000)  // ASIA1 expired: the fake S3 refuses it now; the next request refreshes first
        let (body, _) = try await client.getObject(bucket: FakeS3Fixture.bucket, key: "a.bin")
        #expect(body == data)
        let downloader = Downloader(client: client, configuration: fixture.downloader.configuration)
        clock.advance(1000)
        _ = try await downloader.download(fixture.request("a.bin")).result()
        #expect(try Data(contentsOf: fixture.directory.appendingPathComponent("out.bin")) == data)
        #expect(issuer.count.count == 3 && cache.origin?.provider == "registering-issuer")
        #expect(fixture.server.requestLog.entries().allSatisfy { $0.status < 400 })
        let url = try #require(client.presignedURL(bucket: FakeS3Fixture.bucket, key: "a.bin"))
        #expect(url.absoluteString.contains("X-Amz-Security-Token=token3"))
    }

    @Test func noCredentialsFailsAtOnceWithoutSendingAnything() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        try fixture.put("a.bin", size: 1000)
        let sandbox = try CredentialSandbox()
        defer { sandbox.remove() }
        let context = sandbox.context()
        let client = Self.client(fixture, cache: CredentialCache(context: context))
        do {
            _ = try await client.listObjectsV2(bucket: FakeS3Fixture.bucket)
            Issue.record("listed without credentials")
        } catch {
            guard case .credentials(.notFound) = error else {
                Issue.record("expected a credentials failure, got \(error)")
                return
            }
            #expect(!error.isRetryable)
        }
        let downloader = Downloader(client: client, configuration: fixture.downloader.configuration)
        do {
            _ = try await downloader.download(fixture.request("a.bin")).result()
            Issue.record("downloaded without credentials")
        } catch {
            guard case .credentials(.notFound) = error else {
                Issue.record("expected a credentials failure, got \(error)")
                return
            }
        }
        #expect(fixture.server.requestLog.entries().isEmpty, "nothing unsigned went out")
    }
}
