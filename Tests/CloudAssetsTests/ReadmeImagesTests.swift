import CloudAssets
import FakeS3
import Foundation
import Images
import TestSupport
import Testing

// The README's Images example ("Images: sized, upright, private"), compiled and run against the fake server. Keep
// the two in step: the lines between the markers, less their indentation, are the README's.

/// The example, with what it names (`library`, `asset`, `visible`, `cell`) as parameters; returns its `jpeg`.
private func readmeImagesExample(library: AssetLibrary, asset: Asset, visible: [Asset], cell: CGSize) async throws
    -> Data
{
    // --- README images: begin ---
    var options = ImageRequestOptions()
    options.isNetworkAccessAllowed = true  // download the original if it is not local
    options.deliveryMode = .opportunistic  // the local thumbnail first (isDegraded), then the final image
    options.resizeMode = .exact  // exactly the fitted size (`.fast`, the default: up to 2× it)
    library.requestImage(
        for: asset, targetSize: CGSize(width: 512, height: 512), contentMode: .aspectFit, options: options
    ) { image, info in /* AssetImage: RGBA8 width × height, upright */ }
    // The final image only (what requestImage answers last), of the version the asset shows (an edit's rendering).
    let jpeg = try await library.image(for: asset, targetSize: CGSize(width: 256, height: 256), options: options)
        .jpegData()
    library.startCachingImages(for: visible, targetSize: cell)  // PHCachingImageManager, bounded by a byte budget
    // --- README images: end ---
    return jpeg
}

@Suite(.heavy) struct ReadmeImagesTests {
    @Test func theReadmeShowsThisCodeVerbatim() throws {
        try ReadmeSample.expectVerbatim("images")
    }

    @Test func theExampleDrawsTheFittedImage() async throws {
        let server = try FakeS3Server(
            configuration: FakeS3Configuration(accessKeyID: "demo", secretAccessKey: "demo-secret"))
        try await server.start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("readme-images-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try SampleLibrary.seed(into: server, bucket: "photos", assets: 6)
            var configuration = AssetLibrary.Configuration(storeURL: folder)
            configuration.endpoint = server.endpoint
            configuration.bucket = "photos"
            configuration.credentials = .static(accessKeyID: "demo", secretAccessKey: "demo-secret")
            let library = try await AssetLibrary(configuration: configuration)
            try await library.sync()
            let assets = Array(try library.fetchAssets(FetchOptions(predicate: .mediaType(.image))))
            let asset = try #require(assets.first)
            let jpeg = try await readmeImagesExample(
                library: library, asset: asset, visible: assets, cell: CGSize(width: 100, height: 100))
            // `.exact`: the asset's drawn size (pixelWidth × pixelHeight) fitted in 256 × 256, no larger.
            let decoded = try ImageDecoder.decode(
                data: [UInt8](jpeg), request: DecodeRequest(targetWidth: 1, targetHeight: 1, resizeMode: .none)
            ).image
            let scale = min(256 / Double(asset.pixelWidth), 256 / Double(asset.pixelHeight))
            #expect(max(decoded.width, decoded.height) == 256)
            #expect(abs(decoded.width - Int((Double(asset.pixelWidth) * scale).rounded())) <= 1)
            #expect(abs(decoded.height - Int((Double(asset.pixelHeight) * scale).rounded())) <= 1)
            library.stopCachingImagesForAllAssets()
            library.close()
            try await server.stop()
        } catch {
            try? await server.stop()
            throw error
        }
    }
}
