import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The `fake-s3` executable's command line.
@Suite("fake-s3 serve", .heavy)
struct FakeS3CommandTests {
    static func start(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(
            executable: try CLIBinary.locate("fake-s3"), arguments: arguments,
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], timeout: .seconds(30))
    }

    @Test(arguments: ["99999", "65536", "-1"])
    func servePortOutsideTheRangeExitsTwoWithOneErrorLine(port: String) async throws {
        let result = try await Self.start(["serve", "--memory", "--port=\(port)"]).finish()
        expectUserError(result, status: 2, mentioning: "0…65535")
    }

    @Test func servePortZeroListensOnAFreePortAndPrintsIt() async throws {
        let serve = try Self.start(["serve", "--memory", "--port", "0"])
        let printed = await serve.stdout.wait { $0.contains("\n  port: ") }
        #expect(printed, "stdout: \(serve.stdout.text) stderr: \(serve.stderr.text)")
        let line = try #require(serve.stdout.lines.first { $0.hasPrefix("  port: ") })
        let port = try #require(Int(line.dropFirst("  port: ".count).prefix { $0.isNumber }))
        #expect((1...65535).contains(port))
        #expect(serve.stdout.text.contains("listening on http://127.0.0.1:\(port)"))
        #expect(LoopbackSocket.canConnect(port: port), "the printed port is the one listening")
        serve.interrupt()
        let result = await serve.finish()
        #expect(result.status == 0 && !result.killedBySignal, "\(result)")
    }

    @Test func serveWithACertificateAndKeyServesHTTPS() async throws {
        let certificates = try TestCertificates.makeAuthority()
        defer { certificates.remove() }
        let issued = try certificates.issueServer(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let serve = try Self.start([
            "serve", "--memory", "--port", "0", "--tls-cert", issued.certificatePath, "--tls-key", issued.keyPath,
        ])
        let printed = await serve.stdout.wait { $0.contains("\n  port: ") }
        #expect(printed, "stdout: \(serve.stdout.text) stderr: \(serve.stderr.text)")
        let line = try #require(serve.stdout.lines.first { $0.hasPrefix("  port: ") })
        let port = try #require(Int(line.dropFirst("  port: ".count).prefix { $0.isNumber }))
        #expect(serve.stdout.text.contains("listening on https://127.0.0.1:\(port)"))
        // curl trusting the CA gets S3's own answer over TLS (an unsigned listing is refused); without it, curl
        // refuses the certificate (exit 60).
        let trusted = try await Self.curl(["--cacert", certificates.caPath, "https://127.0.0.1:\(port)/"])
        #expect(trusted.status == 0 && trusted.stdout.contains("<Code>AccessDenied</Code>"), "\(trusted)")
        let refused = try await Self.curl(["https://127.0.0.1:\(port)/"])
        #expect(refused.status == 60, "\(refused)")
        serve.interrupt()
        let result = await serve.finish()
        #expect(result.status == 0 && !result.killedBySignal, "\(result)")
    }

    @Test func serveTLSCertWithoutKeyIsAUsageError() async throws {
        let result = try await Self.start(["serve", "--memory", "--port", "0", "--tls-cert", "server.pem"]).finish()
        expectUserError(result, status: 2, mentioning: "--tls-key")
    }

    @Test func serveWithAnUnreadableCertificateFailsInOneLine() async throws {
        let result = try await Self.start([
            "serve", "--memory", "--port", "0", "--tls-cert", "/nonexistent/server.pem", "--tls-key",
            "/nonexistent/server.key",
        ]).finish()
        expectUserError(result, status: 1, mentioning: "TLS certificate or key cannot be used")
    }

    /// `curl -sS ARGUMENTS` to the end.
    static func curl(_ arguments: [String]) async throws -> CLIResult {
        try await ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/curl"), arguments: ["-sS", "-m", "10"] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], timeout: .seconds(30)
        ).finish()
    }
}
