import CloudAssets
import Essentials
import FakeS3
import Foundation
import Images
import TestSupport
import Testing

/// Real JPEGs made in the test: a displayed picture of four coloured quadrants (red top left, green top right, blue
/// bottom left, white bottom right), stored rotated for an EXIF orientation so that only a decoder that applies it
/// gets the quadrants back in place.
enum QuadrantJPEG {
    static let red: [UInt8] = [220, 30, 30]
    static let green: [UInt8] = [30, 200, 40]
    static let blue: [UInt8] = [30, 40, 220]
    static let white: [UInt8] = [245, 245, 245]

    /// The displayed colour at (x, y) of a `width` × `height` picture.
    static func displayed(_ x: Int, _ y: Int, _ width: Int, _ height: Int) -> [UInt8] {
        switch (x < width / 2, y < height / 2) {
        case (true, true): red
        case (false, true): green
        case (true, false): blue
        case (false, false): white
        }
    }

    /// The stored pixels for orientation 1 (as displayed) or 6 (stored turned a quarter anticlockwise: the viewer
    /// turns it clockwise).
    /// With `noise`, each channel is off by up to ±12 (so the JPEG is large, as photographs are).
    static func stored(width: Int, height: Int, orientation: Int, noise: Bool = false) -> RGBAImage {
        let (w, h) = orientation == 6 ? (height, width) : (width, height)
        var pixels = [UInt8](repeating: 255, count: w * h * 4)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for sy in 0..<h {
            for sx in 0..<w {
                let colour =
                    orientation == 6
                    ? displayed(width - 1 - sy, sx, width, height) : displayed(sx, sy, width, height)
                let at = (sy * w + sx) * 4
                for channel in 0..<3 {
                    var value = Int(colour[channel])
                    if noise {
                        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                        value += Int((state >> 59) & 0x1F) - 12
                    }
                    pixels[at + channel] = UInt8(max(0, min(255, value)))
                }
            }
        }
        return RGBAImage(width: w, height: h, bytesPerRow: w * 4, pixels: pixels)
    }

    /// A JPEG of the displayed `width` × `height` picture with these EXIF fields.
    static func make(
        width: Int, height: Int, orientation: Int = 1, date: Date? = nil, location: GPSLocation? = nil,
        embeddedThumbnail: Bool = false, noise: Bool = false
    ) throws -> Data {
        var exif = ExifBuilder()
        exif.orientation = orientation
        exif.captureDate = date
        exif.timeZoneOffsetSeconds = date == nil ? nil : 2 * 3600
        exif.location = location
        if embeddedThumbnail {
            exif.thumbnailJPEG = try ImageEncoder.jpeg(
                stored(width: width / 16, height: height / 16, orientation: orientation), quality: 80)
        }
        return Data(
            try ImageEncoder.jpeg(
                stored(width: width, height: height, orientation: orientation, noise: noise), quality: 92,
                exif: exif.tiffPayload()))
    }

    /// Whether `image` shows the four quadrants in place (sampled at each quadrant's centre).
    static func isUpright(_ image: AssetImage) -> Bool {
        let points = [(1, 1), (3, 1), (1, 3), (3, 3)].map { (image.width * $0.0 / 4, image.height * $0.1 / 4) }
        return points.allSatisfy { x, y in
            let at = y * image.bytesPerRow + x * 4
            let want = displayed(x, y, image.width, image.height)
            return (0..<3).allSatisfy { abs(Int(image.pixels[at + $0]) - Int(want[$0])) < 40 }
        }
    }
}

@Suite("Library: image requests, thumbnails without the original, location stripping", .heavy)
struct ImageRequestTests {
    static let eiffel = GPSLocation(latitude: 48.8584, longitude: 2.2945, altitude: 35)
    static let taken = Date(timeIntervalSince1970: 1_650_000_000)

    /// The headers of a whole image file, nil when they do not parse.
    static func metadata(_ data: Data) throws -> ImageMetadata? {
        guard case .parsed(let metadata) = try ImageMetadata.parse(head: [UInt8](data), fileLength: data.count) else {
            return nil
        }
        return metadata
    }

    /// Puts a JPEG the way another tool would: no `x-amz-meta-*` fields.
    static func putForeign(_ harness: LibraryHarness, _ path: String, _ data: Data) throws {
        try harness.server.putObject(bucket: LibraryHarness.bucket, key: "originals/" + path, data: data)
    }

    @Test("a sync reads another tool's JPEG's own headers with one ranged GET of its head")
    func syncReadsImageHeaders() async throws {
        try await withHarness { harness in
            let jpeg = try QuadrantJPEG.make(
                width: 640, height: 480, orientation: 6, date: Self.taken, location: Self.eiffel)
            try Self.putForeign(harness, "trip/rotated.jpg", jpeg)
            var configuration = harness.configuration()
            configuration.locationAccess = .granted
            let library = try await harness.open(configuration)
            harness.server.requestLog.clear()
            try await library.sync(fetchThumbnails: false)
            let asset = try library.asset(path: "trip/rotated.jpg")
            #expect(asset.creationDate == Self.taken)
            #expect(asset.storedPixelWidth == 480 && asset.storedPixelHeight == 640)  // turned by orientation 6:
            #expect(asset.pixelWidth == 640 && asset.pixelHeight == 480)  // drawn as the JPEG was made
            #expect(asset.orientation == 6)
            let location = try #require(asset.location)
            #expect(abs(location.latitude - 48.8584) < 1e-6 && abs(location.longitude - 2.2945) < 1e-6)
            let requests = harness.log.filter { $0.key == "originals/trip/rotated.jpg" }
            #expect(requests.map(\.method) == ["HEAD", "GET"])
            #expect(requests.last?.rangeHeader == "bytes=0-\(min(jpeg.count, 65536) - 1)")
            // A sync told not to fetch thumbnails makes none, not even from the bytes in hand.
            #expect(asset.availability == .cloudOnly)
        }
    }

    @Test("a small image read whole by the header read gets its thumbnail from those bytes, no second request")
    func smallImageThumbnailFromHeaderRead() async throws {
        try await withHarness { harness in
            let small = try QuadrantJPEG.make(width: 400, height: 300, orientation: 6)
            let large = try QuadrantJPEG.make(width: 1600, height: 1200, orientation: 1, noise: true)
            try #require(small.count <= 65536 && large.count > 65536)
            try Self.putForeign(harness, "small.jpg", small)
            try Self.putForeign(harness, "large.jpg", large)
            let library = try await harness.open()
            harness.server.requestLog.clear()
            let summary = try await library.sync()
            #expect(summary.thumbnailsFromImageHeaders == 1)
            let asset = try library.asset(path: "small.jpg")
            #expect(asset.availability == .thumbnail)
            #expect(harness.log.filter { $0.key == "originals/small.jpg" }.map(\.method) == ["HEAD", "GET"])
            // The large one without an EXIF thumbnail gets none from its head.
            #expect(try library.asset(path: "large.jpg").availability == .cloudOnly)
            var options = ImageRequestOptions()
            options.deliveryMode = .fastFormat
            let thumbnail = try await withCheckedThrowingContinuation {
                (done: CheckedContinuation<AssetImage, any Error>) in
                library.requestImage(for: asset, targetSize: CGSize(width: 512, height: 512), options: options) {
                    image, _ in
                    if let image { done.resume(returning: image) } else { done.resume(throwing: CancellationError()) }
                }
            }
            // Upright (orientation 6 applied): 300 × 400 turned to landscape-as-drawn.
            #expect(QuadrantJPEG.isUpright(thumbnail))
            #expect(harness.log.filter { $0.key == "originals/small.jpg" }.count == 2)
        }
    }

    @Test("a sync makes a thumbnail from the EXIF thumbnail its header read fetched, with no request of its own")
    func syncMakesEmbeddedThumbnails() async throws {
        try await withHarness { harness in
            let jpeg = try QuadrantJPEG.make(
                width: 1600, height: 1200, orientation: 6, date: Self.taken, embeddedThumbnail: true, noise: true)
            try Self.putForeign(harness, "camera.jpg", jpeg)
            let library = try await harness.open()
            harness.server.requestLog.clear()
            let summary = try await library.sync()
            #expect(summary.thumbnailsFromImageHeaders == 1)
            let asset = try library.asset(path: "camera.jpg")
            #expect(asset.availability == .thumbnail)
            #expect(harness.gets(of: "camera.jpg").map(\.rangeHeader) == ["bytes=0-65535"])
            var options = ImageRequestOptions()
            options.deliveryMode = .fastFormat
            let thumbnail = try await withCheckedThrowingContinuation {
                (done: CheckedContinuation<AssetImage, any Error>) in
                library.requestImage(for: asset, targetSize: CGSize(width: 512, height: 512), options: options) {
                    image, _ in
                    if let image { done.resume(returning: image) } else { done.resume(throwing: CancellationError()) }
                }
            }
            #expect(thumbnail.width > thumbnail.height && QuadrantJPEG.isUpright(thumbnail))
        }
    }

    @Test("requestImage answers upright pixels at the displayed target size, degraded thumbnail first")
    func requestImageUprightAndSized() async throws {
        try await withHarness { harness in
            let jpeg = try QuadrantJPEG.make(width: 1600, height: 1200, orientation: 6)
            let thumbnail = try QuadrantJPEG.make(width: 160, height: 120, orientation: 1)
            try harness.put("rotated.jpg", data: jpeg, thumbnail: thumbnail)
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "rotated.jpg")
            var options = ImageRequestOptions()
            options.isNetworkAccessAllowed = true
            options.resizeMode = .exact
            let answers = LockedAnswers()
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                library.requestImage(
                    for: asset, targetSize: CGSize(width: 300, height: 300), contentMode: .aspectFit, options: options
                ) { image, info in
                    answers.append(image, info)
                    if info.isFinal { done.resume() }
                }
            }
            let all = answers.all
            #expect(all.count == 2)
            #expect(all.first?.info.isDegraded == true && all.first?.info.isFinal == false)
            let final = try #require(all.last?.image)
            #expect(all.last?.info.isDegraded == false && all.last?.info.error == nil)
            // Displayed 1600 × 1200 (stored 1200 × 1600, turned): fitted in 300 × 300 it is 300 × 225.
            #expect(final.width == 300 && final.height == 225)
            #expect(QuadrantJPEG.isUpright(final))
            // Decoded at 1/4 scale and resampled: far from the 1600 × 1200 × 4 bytes of a full decode.
            #expect(all.last!.info.peakDecodeBytes < 1600 * 1200 * 4 / 4)
            #expect(try library.asset(path: "rotated.jpg").availability == .full)
            let filled = try await library.image(
                for: asset, targetSize: CGSize(width: 300, height: 300), contentMode: .aspectFill, options: options)
            #expect(filled.width == 400 && filled.height == 300)
            #expect(QuadrantJPEG.isUpright(filled))
            let jpegOut = try filled.jpegData()
            #expect(jpegOut.starts(with: [0xFF, 0xD8]))
        }
    }

    @Test("without upscaling a target larger than the original gives the original's size, and is cached apart")
    func imageWithoutUpscaling() async throws {
        try await withHarness { harness in
            try harness.put("small.jpg", data: try QuadrantJPEG.make(width: 160, height: 120, orientation: 6))
            let library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            let asset = try library.asset(path: "small.jpg")
            var options = ImageRequestOptions()
            options.isNetworkAccessAllowed = true
            options.resizeMode = .exact
            let size = CGSize(width: 400, height: 400)
            // Prepared at the same size with upscaling allowed (400 × 300): that image must not answer.
            library.startCachingImages(for: [asset], targetSize: size, options: options)
            try await eventually { library.cachedImageBytes > 0 }
            options.allowsUpscaling = false
            for mode in [ImageContentMode.aspectFit, .aspectFill] {
                // Displayed 160 × 120 (stored 120 × 160, turned).
                let image = try await library.image(for: asset, targetSize: size, contentMode: mode, options: options)
                #expect(image.width == 160 && image.height == 120, "\(mode): \(image.width) × \(image.height)")
                #expect(QuadrantJPEG.isUpright(image))
            }
            library.stopCachingImagesForAllAssets()
        }
    }

    @Test("without network access an image request answers in the cloud, never downloading")
    func imageRequestOffline() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(
                with: "a.jpg", data: try QuadrantJPEG.make(width: 64, height: 48))
            harness.server.requestLog.clear()
            await #expect(throws: CloudAssetsError.self) {
                _ = try await library.image(for: asset, targetSize: CGSize(width: 32, height: 32))
            }
            #expect(harness.gets(of: "a.jpg").isEmpty)
        }
    }

    @Test("a thumbnail is made from the EXIF thumbnail with ranged reads of the head only")
    func thumbnailFromEmbeddedEXIF() async throws {
        try await withHarness { harness in
            // Noise makes the original big (well over the bytes read) and incompressible.
            let jpeg = try QuadrantJPEG.make(
                width: 1600, height: 1200, orientation: 6, date: Self.taken, embeddedThumbnail: true, noise: true)
            #expect(jpeg.count > 256 * 1024)
            try Self.putForeign(harness, "big.jpg", jpeg)
            let library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            let asset = try library.asset(path: "big.jpg")
            harness.server.requestLog.clear()
            let source = try await library.makeThumbnail(for: asset)
            guard case .embeddedThumbnail(let fetched) = source else {
                Issue.record("made from \(source), not the embedded thumbnail")
                return
            }
            #expect(fetched <= 64 * 1024 && fetched < jpeg.count)
            let gets = harness.gets(of: "big.jpg")
            #expect(!gets.isEmpty && gets.allSatisfy { $0.rangeHeader != nil })
            #expect(try library.asset(path: "big.jpg").availability == .thumbnail)
            #expect(try await library.makeThumbnail(for: asset) == .alreadyLocal)
            // The thumbnail is a real JPEG and upright: degraded answers come from it offline.
            let thumb = try await withCheckedThrowingContinuation {
                (done: CheckedContinuation<AssetImage, any Error>) in
                var options = ImageRequestOptions()
                options.deliveryMode = .fastFormat
                library.requestImage(for: asset, targetSize: CGSize(width: 400, height: 400), options: options) {
                    image, info in
                    if let image { done.resume(returning: image) } else { done.resume(throwing: CancellationError()) }
                }
            }
            #expect(thumb.width > thumb.height)
            #expect(QuadrantJPEG.isUpright(thumb))
        }
    }

    @Test("location access denied: data, files, streams and ranged reads come without GPS, otherwise intact")
    func deniedStripsGPS() async throws {
        try await withHarness { harness in
            let jpeg = try QuadrantJPEG.make(width: 320, height: 240, date: Self.taken, location: Self.eiffel)
            try harness.put("located.jpg", data: jpeg)
            var denied = harness.configuration()
            denied.locationAccess = .denied
            let library = try await harness.open(denied)
            try await library.sync(fetchThumbnails: false)
            let asset = try library.asset(path: "located.jpg")
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            let data = try await library.data(for: asset, options: options)
            #expect(data.count == jpeg.count && data != jpeg)
            let original = try Self.metadata(jpeg)
            let stripped = try Self.metadata(data)
            #expect(original?.location != nil && stripped?.location == nil)
            #expect(stripped?.captureDate == original?.captureDate)
            let request = DecodeRequest(targetWidth: 320, targetHeight: 240, resizeMode: .none)
            #expect(
                try ImageDecoder.decode(data: [UInt8](data), request: request).image.pixels
                    == ImageDecoder.decode(data: [UInt8](jpeg), request: request).image.pixels)
            // The file handed out is a copy; the original in the library keeps its bytes.
            let url = try await library.requestFile(for: asset, options: options)
            #expect(try Data(contentsOf: url) == data)
            #expect(url.deletingLastPathComponent().lastPathComponent == "stripped")
            var streamed = Data()
            try await library.streamData(for: asset, options: options) { streamed += $0 }
            #expect(streamed == data)
            let head = try await library.read(asset, range: 0..<4096)
            #expect(head == data.prefix(4096))

            var granted = harness.configuration()
            granted.locationAccess = .granted
            library.close()
            let owner = try await harness.open(granted)
            let mine = try await owner.data(for: try owner.asset(path: "located.jpg"), options: options)
            #expect(mine == jpeg)
        }
    }

    @Test("with no EXIF thumbnail the original is downloaded and downscaled to a 256 px JPEG that counts in the cache")
    func thumbnailDownscaledFromTheOriginal() async throws {
        try await withHarness { harness in
            let png = Data(try ImageEncoder.png(QuadrantJPEG.stored(width: 800, height: 600, orientation: 1)))
            try Self.putForeign(harness, "scan.png", png)
            let library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            let asset = try library.asset(path: "scan.png")
            let before = try library.cacheUsage().bytes
            await #expect(throws: CloudAssetsError.self) {
                try await library.makeThumbnail(for: asset, isNetworkAccessAllowed: false)
            }
            #expect(try await library.makeThumbnail(for: asset) == .downscaledOriginal)
            let thumbnail = try #require(try library.localThumbnailData(forLocalIdentifier: asset.localIdentifier))
            let decoded = try ImageDecoder.decode(
                data: [UInt8](thumbnail), request: DecodeRequest(targetWidth: 1, targetHeight: 1, resizeMode: .none)
            ).image
            #expect(thumbnail.starts(with: [0xFF, 0xD8]) && decoded.width == 256 && decoded.height == 192)
            // The original (now local) and the thumbnail the library made both count.
            #expect(try library.cacheUsage().bytes == before + Int64(png.count) + Int64(thumbnail.count))
        }
    }

    @Test("the copy without GPS goes with the original when it is evicted")
    func strippedCopyEvicted() async throws {
        try await withHarness { harness in
            let jpeg = try QuadrantJPEG.make(width: 320, height: 240, location: Self.eiffel)
            try harness.put("located.jpg", data: jpeg)
            var denied = harness.configuration()
            denied.locationAccess = .denied
            let library = try await harness.open(denied)
            try await library.sync(fetchThumbnails: false)
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            let url = try await library.requestFile(for: try library.asset(path: "located.jpg"), options: options)
            #expect(FileManager.default.fileExists(atPath: url.path))
            try library.evict([try library.asset(path: "located.jpg")])
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
    }

    @Test("location access denied: a HEIC comes without its EXIF GPS too")
    func deniedStripsHEIC() async throws {
        guard ImageEncoder.canEncodeHEIF else { return }
        try await withHarness { harness in
            var exif = ExifBuilder()
            exif.location = Self.eiffel
            let heic = Data(
                try ImageEncoder.heif(
                    QuadrantJPEG.stored(width: 96, height: 64, orientation: 1), quality: 70, exif: exif.tiffPayload()))
            try Self.putForeign(harness, "phone.heic", heic)
            var denied = harness.configuration()
            denied.locationAccess = .denied
            let library = try await harness.open(denied)
            try await library.sync(fetchThumbnails: false)
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            let data = try await library.data(for: try library.asset(path: "phone.heic"), options: options)
            #expect(data.count == heic.count && data != heic)
            let before = try Self.metadata(heic)
            let after = try Self.metadata(data)
            #expect(before != nil && after != nil)
            #expect(before?.location != nil && after?.location == nil)
        }
    }

    @Test("images prepared for a scroll window answer from memory, within the budget")
    func cachingImages() async throws {
        try await withHarness { harness in
            var configuration = harness.configuration()
            configuration.imageCacheBudget = 3 * 100 * 75 * 4  // three 100 × 75 images
            for index in 0..<5 {
                try harness.put("p\(index).jpg", data: try QuadrantJPEG.make(width: 400, height: 300))
            }
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            let assets = try (0..<5).map { try library.asset(path: "p\($0).jpg") }
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            for asset in assets { _ = try await library.requestFile(for: asset, options: options) }
            let size = CGSize(width: 100, height: 100)
            var imageOptions = ImageRequestOptions()
            imageOptions.resizeMode = .exact
            library.startCachingImages(for: Array(assets.prefix(2)), targetSize: size, options: imageOptions)
            // Prepared images survive their originals being evicted: answered from memory.
            try await eventually { library.cachedImageBytes == 2 * 100 * 75 * 4 }
            for asset in assets.prefix(2) { try library.evict([asset]) }
            let cached = try await library.image(for: assets[0], targetSize: size, options: imageOptions)
            #expect(cached.width == 100 && cached.height == 75)
            library.startCachingImages(for: Array(assets.suffix(3)), targetSize: size, options: imageOptions)
            try await eventually { library.cachedImageBytes == 3 * 100 * 75 * 4 }
            library.stopCachingImagesForAllAssets()
            #expect(library.cachedImageBytes == 0)
        }
    }
}

/// Answers of a request, in arrival order.
final class LockedAnswers: Sendable {
    private let answers = LockedBox<[(image: AssetImage?, info: ImageRequestInfo)]>([])

    func append(_ image: AssetImage?, _ info: ImageRequestInfo) { answers.withLock { $0.append((image, info)) } }

    var all: [(image: AssetImage?, info: ImageRequestInfo)] { answers.withLock { $0 } }
}

/// Waits until `condition` holds, checking every 10 ms; fails the test after `timeout` seconds.
func eventually(timeout: TimeInterval = 10, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { throw CancellationError() }
        try await Task.sleep(for: .milliseconds(10))
    }
}
