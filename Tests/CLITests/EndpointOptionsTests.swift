import FakeS3
import FakeS3TLS
import Foundation
import TestSupport
import Testing

/// How the command line reaches the endpoint: `AWS_ENDPOINT_URL_S3` before `AWS_ENDPOINT_URL`, the addressing
/// style (flag, environment, config file), and HTTPS with a private CA (`AWS_CA_BUNDLE`, `--ca-bundle`,
/// `caBundle`), a refused certificate, and `--no-verify-ssl`.
@Suite("cloudassets endpoint, addressing and TLS options", .heavy)
struct EndpointOptionsTests {
    /// A fixture whose server serves HTTPS with a certificate for 127.0.0.1 and localhost from a throwaway CA.
    static func withTLSFixture(
        assets: Int = 3, _ body: (CLIFixture, TestCertificates) async throws -> Void
    ) async throws {
        let certificates = try TestCertificates.makeAuthority()
        defer { certificates.remove() }
        let issued = try certificates.issueServer(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        var configuration = FakeS3Configuration(
            accessKeyID: CLIFixture.accessKey, secretAccessKey: CLIFixture.secretKey)
        configuration.tls = FakeS3TLS(certificateChainPath: issued.certificatePath, privateKeyPath: issued.keyPath)
        let server = try FakeS3Server(configuration: configuration, tlsProvider: .nioSSL)
        try SampleLibrary.seed(into: server, bucket: CLIFixture.bucket, assets: assets)
        try await server.start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cloudassets-cli-tls-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixture = CLIFixture(server: server, executable: try CLIBinary.locate(), folder: folder)
        do {
            try await body(fixture, certificates)
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }

    @Test(
        "over HTTPS, the CA from AWS_CA_BUNDLE, --ca-bundle or the config file's caBundle is trusted",
        arguments: ["AWS_CA_BUNDLE", "--ca-bundle", "caBundle"])
    func privateCAIsTrusted(source: String) async throws {
        try await Self.withTLSFixture { fixture, certificates in
            #expect(fixture.server.endpoint.scheme == "https")
            var globals = fixture.globalArguments
            var environment: [String: String] = [:]
            switch source {
            case "AWS_CA_BUNDLE": environment["AWS_CA_BUNDLE"] = certificates.caPath
            case "--ca-bundle": globals += ["--ca-bundle", certificates.caPath]
            default:
                let config = fixture.folder.appendingPathComponent("tls.json")
                try ConfigurationTests.writeConfig(["caBundle": certificates.caPath], to: config)
                globals += ["--config", config.path]
            }
            expectSuccess(try await fixture.run("sync", globals: globals, environment: environment))
            let listed = try await fixture.run("ls", ["--json"], globals: globals, environment: environment)
            expectSuccess(listed)
            #expect(try JSONDecoder().decode([AssetRow].self, from: Data(listed.stdout.utf8)).count == 3)
        }
    }

    @Test("a certificate no trusted CA issued ends the command with one error line naming AWS_CA_BUNDLE")
    func untrustedCertificateIsOneErrorLine() async throws {
        try await Self.withTLSFixture { fixture, _ in
            let stranger = try TestCertificates.makeAuthority(name: "Some other CA")
            defer { stranger.remove() }
            let result = try await fixture.run("sync", environment: ["AWS_CA_BUNDLE": stranger.caPath])
            expectUserError(result, status: 4, mentioning: "TLS certificate is not trusted")
            #expect(result.stderr.contains("AWS_CA_BUNDLE"), "\(result)")
            #expect(fixture.server.requestLog.entries().isEmpty)
        }
    }

    @Test("--no-verify-ssl reaches the server without its CA and warns once on stderr")
    func noVerifySSLWarnsOnce() async throws {
        try await Self.withTLSFixture { fixture, _ in
            let result = try await fixture.run("sync", globals: fixture.globalArguments + ["--no-verify-ssl"])
            expectSuccess(result)
            let warnings = result.stderrLines.filter { $0.contains("TLS verification is off") }
            #expect(warnings.count == 1, "\(result)")
        }
    }

    @Test("a CA bundle that does not exist is a usage error before any request")
    func missingCABundleIsAUsageError() async throws {
        try await Self.withTLSFixture { fixture, _ in
            let missing = fixture.folder.appendingPathComponent("no-such-ca.pem").path
            let result = try await fixture.run("sync", environment: ["AWS_CA_BUNDLE": missing])
            expectUserError(result, status: 2, mentioning: "CA bundle")
            #expect(fixture.server.requestLog.entries().isEmpty)
        }
    }

    @Test("AWS_ENDPOINT_URL_S3 wins over AWS_ENDPOINT_URL; either names the endpoint without --endpoint")
    func serviceEndpointVariableWins() async throws {
        try await withFixture(assets: 2) { fixture in
            let globals = ["--store", fixture.store.path, "--bucket", CLIFixture.bucket]
            // Nothing listens on port 9: the command fails if it uses AWS_ENDPOINT_URL.
            let both = try await fixture.run(
                "sync", globals: globals,
                environment: [
                    "AWS_ENDPOINT_URL_S3": fixture.server.endpoint.absoluteString,
                    "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
                ])
            expectSuccess(both)
            let general = try await fixture.run(
                "sync", globals: globals, environment: ["AWS_ENDPOINT_URL": fixture.server.endpoint.absoluteString])
            expectSuccess(general)
            let empty = try await fixture.run(
                "sync", globals: globals,
                environment: [
                    "AWS_ENDPOINT_URL_S3": "", "AWS_ENDPOINT_URL": fixture.server.endpoint.absoluteString,
                ])
            expectUserError(empty, status: 2, mentioning: "AWS_ENDPOINT_URL_S3 is empty")
        }
    }

    @Test(
        "the addressing style comes from --addressing-style, CLOUDASSETS_ADDRESSING_STYLE or addressingStyle",
        arguments: ["flag", "env", "config"])
    func addressingStyleIsHonoured(source: String) async throws {
        try await withFixture(assets: 2) { fixture in
            let endpoint = fixture.server.endpoint(host: "localhost").absoluteString
            var globals = ["--store", fixture.store.path, "--endpoint", endpoint, "--bucket", CLIFixture.bucket]
            var environment: [String: String] = [:]
            switch source {
            case "flag": globals += ["--addressing-style", "virtual"]
            case "env": environment["CLOUDASSETS_ADDRESSING_STYLE"] = "virtual"
            default:
                let config = fixture.folder.appendingPathComponent("style.json")
                try ConfigurationTests.writeConfig(["addressingStyle": "virtual"], to: config)
                globals += ["--config", config.path]
            }
            fixture.server.requestLog.clear()
            expectSuccess(try await fixture.run("sync", globals: globals, environment: environment))
            let entries = fixture.server.requestLog.entries()
            #expect(!entries.isEmpty)
            #expect(entries.allSatisfy { $0.isVirtualHosted && $0.bucket == CLIFixture.bucket })
            #expect(entries.allSatisfy { $0.host == "photos.localhost:\(fixture.server.port)" })

            // Without it, a localhost endpoint is addressed path-style (automatic).
            fixture.server.requestLog.clear()
            let plain = ["--store", fixture.store.path, "--endpoint", endpoint, "--bucket", CLIFixture.bucket]
            expectSuccess(try await fixture.run("sync", globals: plain))
            #expect(fixture.server.requestLog.entries().allSatisfy { !$0.isVirtualHosted })
        }
    }

    @Test("an unknown addressing style is a usage error naming the three")
    func unknownAddressingStyleIsAUsageError() async throws {
        try await withFixture(assets: 1) { fixture in
            let result = try await fixture.run(
                "sync", globals: fixture.globalArguments + ["--addressing-style", "dns"])
            expectUserError(result, status: 2, mentioning: "auto, path or virtual")
        }
    }
}
