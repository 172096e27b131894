import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Errors point the way to the fix: a configuration that cannot work is refused at `init`, before any request,
/// as a configuration error that is not transient; the library's own errors name the asset and say what to set.
@Suite("Library: configuration errors and what errors carry", .heavy)
struct ConfigurationErrorTests {
    @Test(
        "an empty bucket, empty keys or an endpoint without http(s) are refused at init, before any request",
        arguments: ["bucket", "key", "secret", "scheme", "slash"])
    func unusableConfigurationIsRefusedAtOnce(field: String) async throws {
        try await withHarness { harness in
            var configuration = harness.configuration()
            switch field {
            case "bucket": configuration.bucket = ""
            case "key": configuration.credentials = .static(accessKeyID: "", secretAccessKey: "secret")
            case "secret": configuration.credentials = .static(accessKeyID: "key", secretAccessKey: "")
            case "scheme": configuration.endpoint = URL(string: "ftp://127.0.0.1:\(harness.server.port)")
            default: configuration.bucket = "photos/2024"
            }
            let requests = harness.log.count
            let error = await expectError(.invalidConfiguration) {
                try await AssetLibrary(configuration: configuration)
            }
            #expect(error?.isTransient == false)
            #expect(error?.description.contains("configuration") == true)
            #expect(harness.log.count == requests)
        }
    }

    @Test("a library bound to another bucket says how an app moves it: Configuration.rebind")
    func boundToAnotherBucketNamesTheSetting() {
        let error = CloudAssetsError(
            AssetLibraryError.boundToAnotherBucket(library: "/lib", bound: "s3://a", requested: "s3://b"))
        #expect(error.code == .boundToAnotherBucket)
        #expect(error.description.contains("Configuration.rebind"))
        #expect(!error.description.contains("--rebind"))
    }

    @Test("networkNotAllowed names the asset; the library's own errors do not repeat themselves as their cause")
    func inCloudNamesTheAsset() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(with: "a.jpg", data: testBytes(count: 100, seed: 1))
            let error = await expectError(.networkNotAllowed) { try await library.data(for: asset) }
            #expect(error?.localIdentifier == asset.localIdentifier)
            #expect(error?.path == asset.key)
            #expect(error?.underlyingError == nil)
            library.close()
            let closed = await expectError(.libraryClosed) { try await library.sync() }
            #expect(closed?.underlyingError == nil)
        }
    }

    @Test("networkNotAllowed says what refused: the request's own option, or the library-wide network policy")
    func inCloudNamesWhatRefused() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(with: "a.jpg", data: testBytes(count: 100, seed: 1))
            let byRequest = await expectError(.networkNotAllowed) { try await library.data(for: asset) }
            #expect(
                byRequest?.description.contains("not allowed for this request") == true,
                "\(String(describing: byRequest))")
            #expect(byRequest?.description.contains("policy") == false)

            library.networkPolicy = .offline
            var allowed = AssetRequestOptions()
            allowed.isNetworkAccessAllowed = true
            let calls: [(String, () async throws -> Void)] = [
                ("data(for:)", { _ = try await library.data(for: asset, options: allowed) }),
                ("read(_:range:)", { _ = try await library.read(asset, range: 0..<10) }),
                (
                    "image(for:)",
                    {
                        var options = ImageRequestOptions()
                        options.isNetworkAccessAllowed = true
                        _ = try await library.image(
                            for: asset, targetSize: CGSize(width: 10, height: 10), contentMode: .aspectFit,
                            options: options)
                    }
                ),
            ]
            for (name, call) in calls {
                let byPolicy = await expectError(.networkNotAllowed) { try await call() }
                let text = byPolicy?.description ?? ""
                #expect(text.contains("library-wide network policy (AssetLibrary.networkPolicy)"), "\(name): \(text)")
                #expect(!text.contains("this request"), "\(name): \(text)")
                #expect(byPolicy?.path == asset.key, "\(name)")
            }
        }
    }

    @Test("a file error says the system's reason and keeps its POSIX code (a full disk is a full disk)")
    func fileErrorsKeepTheirPOSIXReason() throws {
        let error = LocalFile.error(ENOSPC, path: "/library/thumbnails/7.jpg.part", writing: true)
        let mapped = try #require(CloudAssetsError.fileSystemError(error))
        #expect(mapped.code == .localFileFailed)
        #expect(
            mapped.description == "/library/thumbnails/7.jpg.part: \(String(cString: strerror(ENOSPC)))", "\(mapped)")
        #expect(CloudAssetsError.posixCode(of: error) == ENOSPC)
        // Foundation's own errors (a POSIX error kept under NSUnderlyingErrorKey) are read the same way.
        let foundation = CocoaError(.fileWriteUnknown, userInfo: [NSUnderlyingErrorKey: POSIXError(.EROFS)])
        #expect(CloudAssetsError.posixCode(of: foundation) == EROFS)
    }
}
