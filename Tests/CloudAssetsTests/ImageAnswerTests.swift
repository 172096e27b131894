import CloudAssets
import FakeS3
import Foundation
import Images
import TestSupport
import Testing

/// The answers an app gets from the two image requests, and the sizes it lays its grid out with: the async
/// ``AssetLibrary/image(for:targetSize:contentMode:options:)`` serves what `requestImage` with `.highQualityFormat`
/// serves, ``Asset/pixelWidth`` and ``Asset/pixelHeight`` are the size the asset is drawn at, and `.fast` never
/// answers more than twice the `.exact` size.
@Suite("Library: image answers agree, sizes are the size drawn", .heavy)
struct ImageAnswerTests {
    /// A JPEG of one colour stored `width` × `height` with this EXIF orientation (any of 1–8).
    static func orientedJPEG(width: Int, height: Int, orientation: Int) throws -> Data {
        var exif = ExifBuilder()
        exif.orientation = orientation
        return Data(
            try ImageEncoder.jpeg(
                RGBAImage(width: width, height: height, fill: (90, 120, 200, 255)), quality: 90,
                exif: exif.tiffPayload()))
    }

    /// The final answer of `requestImage` (its degraded answers skipped), or the info of an answer without image.
    static func requestedImage(
        _ library: AssetLibrary, _ asset: Asset, targetSize: CGSize, contentMode: ImageContentMode = .aspectFit,
        options: ImageRequestOptions
    ) async -> (image: AssetImage?, info: ImageRequestInfo) {
        await withCheckedContinuation { (done: CheckedContinuation<(AssetImage?, ImageRequestInfo), Never>) in
            library.requestImage(for: asset, targetSize: targetSize, contentMode: contentMode, options: options) {
                image, info in
                if info.isFinal { done.resume(returning: (image, info)) }
            }
        }
    }

    /// Whether two answers are the same image (a `Bool`, so that a failure does not print every pixel).
    static func same(_ a: AssetImage?, _ b: AssetImage?) -> Bool { a == b }

    /// "width × height", or "none".
    static func size(_ image: AssetImage?) -> String { image.map { "\($0.width) × \($0.height)" } ?? "none" }

    static func highQuality(network: Bool, resizeMode: ImageResizeMode = .exact) -> ImageRequestOptions {
        var options = ImageRequestOptions()
        options.isNetworkAccessAllowed = network
        options.deliveryMode = .highQualityFormat
        options.resizeMode = resizeMode
        return options
    }

    // MARK: - image(for:) and requestImage serve the same version

    @Test("image(for:) serves an edited asset's rendering, the pixels requestImage .highQualityFormat serves")
    func asyncImageServesTheEdit() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(
                with: "turn.jpg", data: try QuadrantJPEG.make(width: 640, height: 480))
            let edited = try await library.applyBasicEdit(to: asset) { try $0.setRotation(degrees: 90) }
            #expect(edited.hasAdjustments && edited.availability == .full)
            let target = CGSize(width: 300, height: 300)
            for resizeMode in [ImageResizeMode.exact, .fast, .none] {
                // Local only: the rendering is here, whatever the original is.
                let options = Self.highQuality(network: false, resizeMode: resizeMode)
                let served = try await library.image(for: edited, targetSize: target, options: options)
                let requested = await Self.requestedImage(library, edited, targetSize: target, options: options)
                #expect(requested.info.error == nil)
                #expect(
                    Self.same(served, requested.image),
                    "\(resizeMode): \(Self.size(served)), \(Self.size(requested.image))")
                if resizeMode == .exact {
                    // Turned a quarter clockwise: 480 × 640 fitted in 300 × 300.
                    #expect(served.width == 225 && served.height == 300)
                }
            }
            // The original is still there when asked for.
            var originalOptions = Self.highQuality(network: true)
            originalOptions.version = .original
            let original = try await library.image(for: edited, targetSize: target, options: originalOptions)
            #expect(original.width == 300 && original.height == 225 && QuadrantJPEG.isUpright(original))
        }
    }

    @Test("another library's image(for:) downloads the edit's rendering, never the original")
    func asyncImageDownloadsTheRendering() async throws {
        try await withHarness { harness in
            let (writer, asset, _) = try await harness.libraryWithPhoto("a")
            let (reader, seen, _) = try await harness.libraryWithPhoto("b")
            _ = try await writer.applyBasicEdit(to: asset) { try $0.setRotation(degrees: 90) }
            await writer.waitForUploads()
            try await reader.sync(mode: .incremental, fetchThumbnails: false)
            let edited = try reader.current(seen)
            #expect(edited.hasAdjustments && edited.availability != .full)
            harness.server.requestLog.clear()
            let target = CGSize(width: 32, height: 32)
            // Offline: in the cloud, like requestImage.
            await expectError(.networkNotAllowed) {
                _ = try await reader.image(for: edited, targetSize: target, options: Self.highQuality(network: false))
            }
            let offline = await Self.requestedImage(
                reader, edited, targetSize: target, options: Self.highQuality(network: false))
            #expect(offline.image == nil && offline.info.isInCloud)
            // Online: the rendering (the 64 × 48 photo turned: 24 × 32 in the box), downloaded; the original not.
            let served = try await reader.image(
                for: edited, targetSize: target, options: Self.highQuality(network: true))
            #expect(served.width == 24 && served.height == 32)
            #expect(harness.gets(of: "edit/photo.jpg").isEmpty)
            #expect(try reader.current(seen).availability == .full)
            let requested = await Self.requestedImage(
                reader, edited, targetSize: target, options: Self.highQuality(network: true))
            #expect(Self.same(requested.image, served), "\(Self.size(requested.image)), \(Self.size(served))")
        }
    }

    @Test("images prepared for an edited asset are its rendering, the ones requests answer with")
    func cachedImagesServeTheEdit() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(
                with: "turn.jpg", data: try QuadrantJPEG.make(width: 640, height: 480))
            let edited = try await library.applyBasicEdit(to: asset) { try $0.setRotation(degrees: 90) }
            let target = CGSize(width: 100, height: 100)
            let options = Self.highQuality(network: false)
            let expected = try await library.image(for: edited, targetSize: target, options: options)
            library.startCachingImages(for: [edited], targetSize: target, options: options)
            try await eventually { library.cachedImageBytes > 0 }
            // The prepared image answers (the files may go): it must be the rendering's.
            try library.evict([edited])
            let cached = try await library.image(for: edited, targetSize: target, options: options)
            #expect(Self.same(cached, expected) && cached.width == 75 && cached.height == 100, "\(Self.size(cached))")
            library.stopCachingImagesForAllAssets()
        }
    }

    // MARK: - pixelWidth and pixelHeight are the size drawn

    @Test("pixelWidth × pixelHeight is the size drawn: orientation applied, then an edit's; the stored size apart")
    func pixelSizeIsTheSizeDrawn() async throws {
        try await withHarness { harness in
            // Stored 173 × 532 with EXIF orientation 7 (transverse): drawn 532 × 173.
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: "originals/a-turned.jpg",
                data: try Self.orientedJPEG(width: 173, height: 532, orientation: 7))
            try harness.put("b-plain.jpg", data: try QuadrantJPEG.make(width: 640, height: 480))
            let library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            let turned = try library.asset(path: "a-turned.jpg")
            #expect(turned.orientation == 7)
            #expect(turned.storedPixelWidth == 173 && turned.storedPixelHeight == 532)
            #expect(turned.pixelWidth == 532 && turned.pixelHeight == 173)
            let full = try await library.image(
                for: turned, targetSize: AssetLibrary.maximumImageSize, options: Self.highQuality(network: true))
            #expect(full.width == turned.pixelWidth && full.height == turned.pixelHeight)

            let sorted = FetchOptions(sortBy: [.key()])
            let before = try library.fetchAssets(sorted)
            #expect(before.map(\.pixelWidth) == [532, 640] && before.map(\.pixelHeight) == [173, 480])

            // A quarter turn: drawn 480 × 640, wherever the app reads the asset.
            let plain = try library.asset(path: "b-plain.jpg")
            var changes = ChangeReader(observing: library)
            let edited = try await library.applyBasicEdit(to: plain) { try $0.setRotation(degrees: 90) }
            #expect(edited.pixelWidth == 480 && edited.pixelHeight == 640)
            #expect(edited.storedPixelWidth == 640 && edited.storedPixelHeight == 480)
            let drawn = try await library.image(
                for: edited, targetSize: AssetLibrary.maximumImageSize, options: Self.highQuality(network: false))
            #expect(drawn.width == 480 && drawn.height == 640)
            let change = try await changes.next(where: { $0.contentChangedIdentifiers.contains(plain.localIdentifier) })
            let details = try #require(change.details(for: before))
            #expect(details.changedObjects.map(\.pixelWidth) == [480])
            #expect(details.fetchResultAfterChanges[1].pixelWidth == 480)
            #expect(details.fetchResultAfterChanges[1].pixelHeight == 640)
            #expect(details.fetchResultBeforeChanges[1].pixelWidth == 640)
            let objectDetails = try #require(change.details(for: plain))
            #expect(objectDetails.objectBeforeChanges.pixelWidth == 640)
            #expect(objectDetails.objectAfterChanges?.pixelWidth == 480)
            #expect(try library.fetchAssets(sorted)[1].pixelHeight == 640)
            #expect(try library.asset(forKey: plain.key)?.pixelHeight == 640)
            #expect(try library.fetchAssets(withLocalIdentifiers: [plain.localIdentifier])[0].pixelHeight == 640)

            // A crop on top: the rendering's size.
            let cropped = try await library.applyBasicEdit(to: edited, resume: true) {
                $0.crop = CGRect(x: 10, y: 20, width: 200, height: 100)
            }
            #expect(cropped.pixelWidth == 200 && cropped.pixelHeight == 100)
            #expect(cropped.storedPixelWidth == 640 && cropped.storedPixelHeight == 480)

            // Reverted: the original's size again.
            try await library.performChanges { $0.revertAssetContentToOriginal(cropped) }
            let reverted = try library.current(plain)
            #expect(!reverted.hasAdjustments && reverted.pixelWidth == 640 && reverted.pixelHeight == 480)
        }
    }

    // MARK: - .fast is bounded

    @Test(".fast answers at least the .exact size and at most twice it: a cheap decode too large is downsampled")
    func fastIsAtMostTwiceTheExactSize() async throws {
        try await withHarness { harness in
            // Drawn 2400 × 1800 (stored 1800 × 2400, orientation 6): libjpeg's 1/8 scale is 300 × 225.
            let (library, asset) = try await harness.openSynced(
                with: "big.jpg", data: try QuadrantJPEG.make(width: 2400, height: 1800, orientation: 6))
            let cases: [(target: CGSize, mode: ImageContentMode, exact: (Int, Int))] = [
                (CGSize(width: 100, height: 100), .aspectFit, (100, 75)),
                (CGSize(width: 100, height: 100), .aspectFill, (133, 100)),
                (CGSize(width: 64, height: 64), .aspectFit, (64, 48)),
                (CGSize(width: 40, height: 200), .aspectFit, (40, 30)),
                (CGSize(width: 200, height: 200), .aspectFit, (200, 150)),
                (CGSize(width: 700, height: 700), .aspectFit, (700, 525)),
            ]
            var options = ImageRequestOptions()
            options.isNetworkAccessAllowed = true
            #expect(options.resizeMode == .fast)
            for (target, mode, exact) in cases {
                let image = try await library.image(for: asset, targetSize: target, contentMode: mode, options: options)
                let label = "\(target) \(mode): \(image.width) × \(image.height)"
                #expect(image.width >= exact.0 && image.height >= exact.1, "\(label)")
                #expect(image.width <= 2 * exact.0 && image.height <= 2 * exact.1, "\(label)")
                #expect(QuadrantJPEG.isUpright(image), "\(label)")
                let requested = await Self.requestedImage(
                    library, asset, targetSize: target, contentMode: mode, options: options)
                #expect(Self.same(requested.image, image), "\(label)")
            }
            // Still the cheap size when it is within twice the target: 1/8 scale for 200 × 200, 1/2 for 700 × 700.
            let cheap = try await library.image(
                for: asset, targetSize: CGSize(width: 200, height: 200), options: options)
            #expect(cheap.width == 300 && cheap.height == 225)
            let half = try await library.image(
                for: asset, targetSize: CGSize(width: 700, height: 700), options: options)
            #expect(half.width == 1200 && half.height == 900)
        }
    }
}
