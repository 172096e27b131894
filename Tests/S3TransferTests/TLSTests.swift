import AWSSigV4
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

/// HTTPS: libcurl verifies the server's certificate by default, a custom CA bundle makes a private CA trusted,
/// and a refused certificate is a permanent error (not retried). Against a small Python HTTPS server
/// (`Fixtures/tls/tls_server.py`) with a certificate for 127.0.0.1 issued by the test CA in the same folder; HTTP/2
/// against `h2_server.py` (the `h2` protocol library), which speaks nothing else.
@Suite(.heavy, .serialized, .timeLimit(.minutes(1)))
struct TLSTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/tls")
    static let caBundle = fixtures.appendingPathComponent("ca.pem").path

    func downloader(_ server: TLSServer, caBundlePath: String?, verifyTLS: Bool = true) -> Downloader {
        let client = S3Client(
            configuration: S3ClientConfiguration(
                endpoint: server.endpoint,
                credentials: AWSCredentials(accessKeyID: "tls-key", secretAccessKey: "tls-secret"),
                caBundlePath: caBundlePath, verifyTLS: verifyTLS))
        return Downloader(
            client: client,
            configuration: DownloaderConfiguration(
                retryPolicy: RetryPolicy(maxAttempts: 4, baseDelay: 0.001, maxDelay: 0.01), integrity: .all))
    }

    @Test("a download over HTTPS trusts a server whose certificate the configured CA bundle issued")
    func customCABundleIsTrusted() async throws {
        let server = try TLSServer(bodySize: 200_000)
        defer { server.stop() }
        let folder = try makeTempDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("photo.jpg")
        let result = try await downloader(server, caBundlePath: Self.caBundle)
            .download(DownloadRequest(bucket: "photos", key: "a.jpg", destination: destination)).result()
        #expect(try Data(contentsOf: destination) == server.body)
        #expect(result.verification.contains(.md5))
        #expect(result.attempts == 1)
    }

    @Test("by default a certificate no trusted CA issued is refused at once, not retried, and no file appears")
    func unknownIssuerIsRefusedWithoutRetries() async throws {
        let server = try TLSServer(bodySize: 1000)
        defer { server.stop() }
        let folder = try makeTempDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("photo.jpg")
        let handle = downloader(server, caBundlePath: nil)
            .download(DownloadRequest(bucket: "photos", key: "a.jpg", destination: destination))
        await #expect {
            _ = try await handle.result()
        } throws: { error in
            // CURLE_PEER_FAILED_VERIFICATION: the certificate chain does not end at a trusted CA.
            guard case S3Error.transport(let code, _) = error else { return false }
            return code == 60 && "\(error)".contains("caBundlePath")
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(server.connectionsAccepted() == 1, "a certificate error is permanent: one connection, no retry")
    }

    @Test("over HTTPS, downloads speak HTTP/2 when the server offers it: several at once, each verified")
    func http2IsUsedWhenTheServerOffersIt() async throws {
        // 1.5 MB: more than one write chunk and than HTTP/2's initial flow-control window, so the body crosses
        // window updates and takes the large-object path (sidecar, worker-queue hashing).
        let server = try TLSServer(bodySize: 1_500_000, script: "h2_server.py")
        defer { server.stop() }
        let folder = try makeTempDirectory()
        let loader = downloader(server, caBundlePath: Self.caBundle)
        let handles = (0..<6).map { index in
            loader.download(
                DownloadRequest(
                    bucket: "photos", key: "p\(index).jpg", destination: folder.appendingPathComponent("p\(index).jpg"))
            )
        }
        for (index, handle) in handles.enumerated() {
            let result = try await handle.result()
            #expect(result.verification.contains(.md5))
            #expect(try Data(contentsOf: folder.appendingPathComponent("p\(index).jpg")) == server.body)
        }
        let lines = server.outputLines()
        let connections = lines.filter { $0.hasPrefix("connection") }
        // The server refuses any connection whose ALPN did not choose h2, so every download above came over HTTP/2.
        #expect(!connections.isEmpty)
        #expect(connections.allSatisfy { $0 == "connection h2" }, "\(connections)")
        #expect(lines.filter { $0.hasPrefix("stream GET /photos/p") }.count == 6, "\(lines)")
    }

    @Test("verification can be turned off for a server known by other means")
    func verificationCanBeTurnedOff() async throws {
        let server = try TLSServer(bodySize: 5000)
        defer { server.stop() }
        let folder = try makeTempDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("photo.jpg")
        _ = try await downloader(server, caBundlePath: nil, verifyTLS: false)
            .download(DownloadRequest(bucket: "photos", key: "a.jpg", destination: destination)).result()
        #expect(try Data(contentsOf: destination) == server.body)
    }
}

/// `tls_server.py` as a child process: the port it printed, its body, and the connections it accepted.
final class TLSServer: Sendable {
    let endpoint: URL
    let body: Data
    private let process: Process
    private let input: Pipe
    private let output: FileHandle

    /// - Parameter script: `tls_server.py` (HTTP/1.1) or `h2_server.py` (HTTP/2 only).
    init(bodySize: Int, script: String = "tls_server.py") throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", TLSTests.fixtures.appendingPathComponent(script).path, String(bodySize),
        ]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // The first line is the port; the rest are the connections the server accepted, one line each.
        var line = Data()
        while true {
            guard let byte = try output.fileHandleForReading.read(upToCount: 1), let first = byte.first else {
                process.terminate()
                throw POSIXError(.EIO)
            }
            if first == UInt8(ascii: "\n") { break }
            line.append(first)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else { throw POSIXError(.EIO) }
        endpoint = URL(string: "https://127.0.0.1:\(port)")!
        body = Data((0..<bodySize).map { UInt8(($0 * 31 + 7) % 251) })
        self.process = process
        self.input = input
        self.output = output.fileHandleForReading
    }

    /// Connections accepted (each one a line the server printed); stops the server.
    func connectionsAccepted() -> Int { outputLines().filter { $0.hasPrefix("connection") }.count }

    /// Every line the server printed after its port; stops the server.
    func outputLines() -> [String] {
        stop()
        let rest = (try? output.readToEnd()) ?? Data()
        return String(decoding: rest, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func stop() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
