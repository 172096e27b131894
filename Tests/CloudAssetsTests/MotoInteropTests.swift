import CloudAssets
import Foundation
import TestSupport
import Testing

/// The library against another S3 implementation: moto's server (PyPI `moto`, installed by `make test`), with
/// the bucket filled by boto3. Proves the client side does not depend on quirks of the bundled fake server.
@Suite(.heavy, .serialized) struct MotoInteropTests {
    @Test func syncDownloadAndRangedReadAgainstMoto() async throws {
        let moto = try MotoServer()
        defer { moto.stop() }
        try moto.waitUntilReady()
        let original = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let fill = """
            import boto3, sys
            s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                              aws_access_key_id="test", aws_secret_access_key="test")
            s3.create_bucket(Bucket="photos")
            s3.put_object(Bucket="photos", Key="originals/2024/a b+c.png", Body=open(sys.argv[2], "rb").read(),
                          Metadata={"creation-date": "2024-05-01T12:00:00Z", "pixel-width": "640",
                                    "pixel-height": "480", "media-type": "image", "orientation": "6"})
            s3.put_object(Bucket="photos", Key="originals/2023/old.png", Body=b"x" * 10,
                          Metadata={"creation-date": "2023-01-01T00:00:00Z", "media-type": "image"})
            s3.put_object(Bucket="photos", Key="thumbnails/2024/a b+c.png.jpg", Body=b"thumb")
            """
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let originalFile = folder.appendingPathComponent("original.bin")
        try original.write(to: originalFile)
        try runPython(fill, arguments: [moto.endpoint.absoluteString, originalFile.path])

        var configuration = AssetLibrary.Configuration(storeURL: folder.appendingPathComponent("store"))
        configuration.endpoint = moto.endpoint
        configuration.bucket = "photos"
        configuration.credentials = .static(accessKeyID: "test", secretAccessKey: "test")
        let library = try await AssetLibrary(configuration: configuration)
        defer { library.close() }
        let summary = try await library.sync()
        #expect(summary.inserted == 2)
        #expect(summary.thumbnailsFetched == 1)

        let sorted = try library.fetchAssets(FetchOptions(sortBy: [.creationDate(ascending: false)]))
        #expect(sorted.map(\.key) == ["originals/2024/a b+c.png", "originals/2023/old.png"])
        let asset = try #require(sorted.firstObject)
        #expect(asset.storedPixelWidth == 640 && asset.storedPixelHeight == 480 && asset.orientation == 6)
        #expect(asset.pixelWidth == 480 && asset.pixelHeight == 640)
        #expect(asset.availability == .thumbnail)

        let head = try await library.read(asset, range: 1000..<2000)
        #expect(head == original[1000..<2000])
        #expect(try library.asset(withLocalIdentifier: asset.localIdentifier)?.availability == .partial)

        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        let data = try await library.data(for: asset, options: options)
        #expect(data == original)
        #expect(try library.asset(withLocalIdentifier: asset.localIdentifier)?.availability == .full)

        // A second sync of the unchanged bucket writes nothing.
        let token = library.currentChangeToken
        let again = try await library.sync()
        #expect(again.transactions == 0 && library.currentChangeToken == token)
    }
}

func runPython(_ script: String, arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script] + arguments
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    let message = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw MotoError("python failed: \(String(decoding: message, as: UTF8.self))")
    }
}
