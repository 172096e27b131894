import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// `Configuration.addressingStyle`: which style `.automatic` picks, which virtual-hosted set-ups are refused before
/// any request, and a whole round (sync, download, upload, listing) against the fake server in each style. The
/// virtual-hosted requests go to `photos.localhost`, which libcurl resolves to the loopback address itself: no DNS,
/// nothing but 127.0.0.1.
@Suite("Library: addressing styles", .heavy)
struct AddressingStyleTests {
    @Test(
        "automatic is virtual-hosted for AWS endpoints and buckets that can be a host name label, else path-style",
        arguments: [
            ("https://s3.eu-west-1.amazonaws.com", "photos", AssetLibrary.AddressingStyle.virtualHosted),
            ("https://s3.amazonaws.com", "my-photos-2024", .virtualHosted),
            ("https://s3.cn-north-1.amazonaws.com.cn", "photos", .virtualHosted),
            ("https://S3.EU-WEST-1.AMAZONAWS.COM", "photos", .virtualHosted),
            ("http://s3.eu-west-1.amazonaws.com", "my.photos", .virtualHosted),
            ("https://s3.eu-west-1.amazonaws.com", "my.photos", .path),  // AWS's certificate covers one label
            ("https://s3.eu-west-1.amazonaws.com", "My_Photos", .path),
            ("https://s3.eu-west-1.amazonaws.com", "ab", .path),
            ("https://s3.eu-west-1.amazonaws.com", "-photos", .path),
            ("https://s3.eu-west-1.amazonaws.com", "photos-", .path),
            ("http://s3.eu-west-1.amazonaws.com", "my..photos", .path),
            ("http://s3.eu-west-1.amazonaws.com", "192.168.1.20", .path),
            ("https://s3.eu-west-1.amazonaws.com", String(repeating: "a", count: 64), .path),
            ("http://127.0.0.1:9000", "photos", .path),
            ("http://localhost:9000", "photos", .path),
            ("https://minio.example.com", "photos", .path),
            ("https://s3.amazonaws.com.example.net", "photos", .path),
            ("https://notamazonaws.com", "photos", .path),
        ])
    func automaticPicksPerEndpointAndBucket(endpoint: String, bucket: String, expected: AssetLibrary.AddressingStyle)
        throws
    {
        let url = try #require(URL(string: endpoint))
        #expect(AssetLibrary.AddressingStyle.automatic.resolved(endpoint: url, bucket: bucket) == expected)
        // An explicit style is kept as it is.
        #expect(AssetLibrary.AddressingStyle.path.resolved(endpoint: url, bucket: bucket) == .path)
        #expect(AssetLibrary.AddressingStyle.virtualHosted.resolved(endpoint: url, bucket: bucket) == .virtualHosted)
    }

    @Test("the default is automatic")
    func theDefaultIsAutomatic() {
        let configuration = AssetLibrary.Configuration(storeURL: URL(fileURLWithPath: "/tmp/unused"))
        #expect(configuration.addressingStyle == .automatic)
    }

    @Test(
        "virtual-hosted addressing that cannot work is refused at init, before any request",
        arguments: ["address endpoint", "bucket with capitals", "bucket with underscore"])
    func impossibleVirtualHostingIsRefused(setup: String) async throws {
        try await withHarness { harness in
            var configuration = harness.quietConfiguration()
            configuration.addressingStyle = .virtualHosted
            switch setup {
            case "address endpoint": configuration.endpoint = harness.server.endpoint  // http://127.0.0.1:port
            case "bucket with capitals":
                configuration.endpoint = harness.server.endpoint(host: "localhost")
                configuration.bucket = "Photos"
            default:
                configuration.endpoint = harness.server.endpoint(host: "localhost")
                configuration.bucket = "my_photos"
            }
            let error = await expectError(.invalidConfiguration) {
                try await AssetLibrary(configuration: configuration)
            }
            #expect(error?.description.contains("addressingStyle .path") == true, "\(String(describing: error))")
            #expect(harness.log.isEmpty)
        }
    }

    @Test(
        "sync, download, upload and listing go through in each style, and the server saw that style on every request",
        arguments: [AssetLibrary.AddressingStyle.path, .virtualHosted, .automatic])
    func roundTripInEachStyle(style: AssetLibrary.AddressingStyle) async throws {
        try await withHarness { harness in
            let first = testBytes(count: 3000, seed: 31)
            try harness.put("2024/a.jpg", data: first)
            try harness.put("2024/b.jpg", data: testBytes(count: 5000, seed: 32))
            var configuration = harness.quietConfiguration()
            configuration.endpoint = harness.server.endpoint(host: "localhost")
            configuration.addressingStyle = style
            let library = try await harness.open(configuration)

            try await library.sync(fetchThumbnails: false)
            #expect(try library.fetchAssets(FetchOptions()).count == 2)
            let asset = try library.asset(path: "2024/a.jpg")
            #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == first)
            let ids = try await harness.importAll(try harness.sourceFiles(1, prefix: "up", seed: 33), into: library)
            let status = await library.waitForUploads()
            #expect(status.failures.isEmpty, "\(status.failures)")
            let uploaded = try #require(try library.fetchAssets(withLocalIdentifiers: ids).first)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: uploaded.key) != nil)

            // A second library finds all three through a listing in the same style.
            var second = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("second"))
            second.endpoint = configuration.endpoint
            second.addressingStyle = style
            let other = try await harness.open(second)
            try await other.sync(fetchThumbnails: false)
            #expect(try other.fetchAssets(FetchOptions()).count == 3)

            let virtual = style == .virtualHosted
            let requests = harness.log
            #expect(!harness.listings.isEmpty)
            #expect(requests.contains { $0.method == "GET" && $0.key == "originals/2024/a.jpg" })
            #expect(requests.contains { $0.method == "PUT" && $0.key == uploaded.key })
            #expect(requests.allSatisfy { $0.bucket == LibraryHarness.bucket }, "\(requests.map(\.bucket))")
            #expect(requests.allSatisfy { $0.isVirtualHosted == virtual })
            let host = virtual ? "photos.localhost:\(harness.server.port)" : "localhost:\(harness.server.port)"
            #expect(requests.allSatisfy { $0.host == host }, "\(Set(requests.compactMap(\.host)))")
            // Every signature was checked against the Host header as sent, and none was refused.
            #expect(!requests.contains { $0.status == 403 }, "\(requests.filter { $0.status == 403 })")
        }
    }
}
