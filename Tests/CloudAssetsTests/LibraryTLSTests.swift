import CloudAssets
import FakeS3
import Foundation
import InMemoryLogging
import Logging
import TestSupport
import Testing

/// The library over HTTPS against the fake server serving TLS, with a throwaway CA made for each test: the CA given
/// as `Configuration.caBundlePath` is trusted (in both addressing styles); a certificate another CA issued, or one
/// for another host name, is refused with one typed line and no retry; `verifyTLS = false` works and warns once.
@Suite("Library: HTTPS", .heavy, .timeLimit(.minutes(2)))
struct LibraryTLSTests {
    /// A CA, a server certificate issued by it for `dnsNames` and 127.0.0.1, and a harness serving HTTPS with it.
    static func withTLSHarness(
        dnsNames: [String] = ["localhost", "photos.localhost"],
        _ body: (LibraryHarness, TestCertificates) async throws -> Void
    ) async throws {
        let certificates = try TestCertificates.makeAuthority()
        defer { certificates.remove() }
        let server = try certificates.issueServer(dnsNames: dnsNames, ipAddresses: ["127.0.0.1"])
        try await withHarness(configure: {
            $0.tls = FakeS3TLS(certificateChainPath: server.certificatePath, privateKeyPath: server.keyPath)
        }) { harness in
            #expect(harness.server.endpoint.scheme == "https")
            try await body(harness, certificates)
        }
    }

    @Test(
        "with the CA as caBundlePath, sync, download and upload go over HTTPS in each addressing style",
        arguments: [AssetLibrary.AddressingStyle.path, .virtualHosted])
    func privateCAIsTrustedThroughTheBundle(style: AssetLibrary.AddressingStyle) async throws {
        try await Self.withTLSHarness { harness, certificates in
            let original = testBytes(count: 200_000, seed: 41)
            try harness.put("tls/a.jpg", data: original)
            var configuration = harness.quietConfiguration()
            configuration.endpoint = harness.server.endpoint(host: "localhost")
            configuration.addressingStyle = style
            configuration.caBundlePath = certificates.caPath
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            let asset = try library.asset(path: "tls/a.jpg")
            #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == original)
            let ids = try await harness.importAll(try harness.sourceFiles(1, prefix: "tls", seed: 42), into: library)
            let status = await library.waitForUploads()
            #expect(status.failures.isEmpty, "\(status.failures)")
            let uploaded = try #require(try library.fetchAssets(withLocalIdentifiers: ids).first)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: uploaded.key) != nil)
            #expect(harness.log.allSatisfy { $0.isVirtualHosted == (style == .virtualHosted) })
        }
    }

    @Test(
        "a certificate no trusted CA issued is refused in one typed line, at once, before any request",
        arguments: ["another CA", "the system's CAs"])
    func untrustedIssuerIsRefused(bundle: String) async throws {
        try await Self.withTLSHarness { harness, _ in
            let stranger = try TestCertificates.makeAuthority(name: "Some other CA")
            defer { stranger.remove() }
            var configuration = harness.quietConfiguration()
            configuration.caBundlePath = bundle == "another CA" ? stranger.caPath : nil
            let library = try await harness.open(configuration)
            let error = await expectError(.tlsNotTrusted) { try await library.sync(fetchThumbnails: false) }
            let line = try #require(error?.description)
            #expect(!line.contains("\n"))
            #expect(line.contains("not trusted") && line.contains("caBundlePath"), "\(line)")
            #expect(!line.contains("gave up after"), "a refused certificate is not retried: \(line)")
            #expect(error?.isTransient == false)
            #expect(harness.log.isEmpty, "no request passed the handshake")
        }
    }

    @Test("a certificate for another host name is refused in one typed line that says so")
    func certificateForAnotherHostIsRefused() async throws {
        // Issued for localhost and 127.0.0.1 only: virtual-hosted requests go to photos.localhost.
        try await Self.withTLSHarness(dnsNames: ["localhost"]) { harness, certificates in
            var configuration = harness.quietConfiguration()
            configuration.endpoint = harness.server.endpoint(host: "localhost")
            configuration.addressingStyle = .virtualHosted
            configuration.caBundlePath = certificates.caPath
            let library = try await harness.open(configuration)
            let error = await expectError(.tlsNotTrusted) { try await library.sync(fetchThumbnails: false) }
            let line = try #require(error?.description)
            #expect(!line.contains("\n"))
            #expect(line.contains("another host name") && line.contains("photos.localhost"), "\(line)")
            #expect(harness.log.isEmpty)

            // The same certificate is fine for path-style requests to the name it was issued for.
            configuration.addressingStyle = .path
            let pathStyle = try await harness.open(configuration)
            try await pathStyle.sync(fetchThumbnails: false)
        }
    }

    @Test("verifyTLS = false reaches a server no CA vouches for, and warns once through the logger")
    func unverifiedTLSWorksAndWarnsOnce() async throws {
        try await Self.withTLSHarness { harness, _ in
            let original = testBytes(count: 10_000, seed: 43)
            try harness.put("tls/b.jpg", data: original)
            let handler = InMemoryLogHandler()
            var configuration = harness.quietConfiguration()
            configuration.verifyTLS = false
            configuration.logger = Logger(label: "tls-test", factory: { _ in handler })
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            let asset = try library.asset(path: "tls/b.jpg")
            #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == original)
            try await library.sync(fetchThumbnails: false)
            let warnings = handler.entries.filter { "\($0.message)".contains("TLS verification is off") }
            #expect(warnings.count == 1, "\(handler.entries.map { "\($0.message)" })")
            #expect(warnings.first?.level == .warning)

            // Verification on (the default) says nothing of the kind.
            let quiet = InMemoryLogHandler()
            var verified = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("verified"))
            verified.logger = Logger(label: "tls-test", factory: { _ in quiet })
            _ = try await harness.open(verified)
            #expect(!quiet.entries.contains { "\($0.message)".contains("TLS verification") })
        }
    }
}
