import FakeS3
import Foundation
import Images
import TestSupport
import Testing

@Suite("cloudassets image, thumbnail, get --strip-location", .heavy)
struct ImageCommandTests {
    static let key = "originals/camera/IMG_0001.jpg"

    /// A 1200 × 900 photograph-like JPEG (noise over a gradient) stored turned for orientation 8, with GPS, a
    /// capture date and an embedded EXIF thumbnail, as a camera writes it.
    static func cameraJPEG() throws -> Data {
        let (width, height) = (900, 1200)  // stored; displayed 1200 × 900 after orientation 8
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        var state: UInt64 = 42
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let at = (y * width + x) * 4
                pixels[at] = UInt8(truncatingIfNeeded: x / 4 + Int(state >> 60))
                pixels[at + 1] = UInt8(truncatingIfNeeded: y / 5 + Int((state >> 56) & 15))
                pixels[at + 2] = UInt8(truncatingIfNeeded: (x + y) / 9)
            }
        }
        var exif = ExifBuilder()
        exif.orientation = 8
        exif.captureDate = Date(timeIntervalSince1970: 1_600_000_000)
        exif.location = GPSLocation(latitude: -33.8568, longitude: 151.2153, altitude: 12)
        exif.thumbnailJPEG = try ImageEncoder.jpeg(
            RGBAImage(width: 120, height: 160, fill: (red: 90, green: 120, blue: 200, alpha: 255)), quality: 70)
        let image = RGBAImage(width: width, height: height, bytesPerRow: width * 4, pixels: pixels)
        return Data(try ImageEncoder.jpeg(image, quality: 90, exif: exif.tiffPayload()))
    }

    static func location(of data: Data) throws -> GPSLocation? {
        guard case .parsed(let metadata) = try ImageMetadata.parse(head: [UInt8](data), fileLength: data.count) else {
            return nil
        }
        return metadata.location
    }

    @Test func imageThumbnailAndStripLocationFromTheCommandLine() async throws {
        try await withFixture(assets: 2) { fixture in
            let jpeg = try Self.cameraJPEG()
            try fixture.server.putObject(bucket: CLIFixture.bucket, key: Self.key, data: jpeg)
            try await fixture.sync(["--no-thumbnails"])
            let row = try #require(try await fixture.list().first { $0.key == Self.key })

            // A thumbnail from the embedded EXIF thumbnail: ranged reads of the head only.
            fixture.server.requestLog.clear()
            let thumbnail = try await fixture.run("thumbnail", [row.id, "--network"])
            expectSuccess(thumbnail)
            #expect(thumbnail.stdout.contains("embedded EXIF thumbnail"), "\(thumbnail)")
            let gets = fixture.server.requestLog.entries().filter { $0.method == "GET" && $0.key == Self.key }
            #expect(!gets.isEmpty && gets.allSatisfy { $0.rangeHeader != nil && $0.bytesSent <= 64 << 10 })
            #expect(try await fixture.rowsByID()[row.id]?.state == "thumbnail")

            // A sized image, upright: displayed 1200 × 900 fits a 200 box as 200 × 150.
            let png = fixture.folder.appendingPathComponent("small.png")
            let image = try await fixture.run("image", [row.id, "--size", "200", "--network", "-o", png.path])
            expectSuccess(image)
            let decoded = try ImageDecoder.decode(
                data: [UInt8](try Data(contentsOf: png)),
                request: DecodeRequest(targetWidth: 1, targetHeight: 1, resizeMode: .none)
            ).image
            #expect(decoded.width == 200 && decoded.height == 150, "\(decoded.width) × \(decoded.height)")

            // The owner's command line keeps the location; --strip-location removes it, same length.
            let kept = fixture.folder.appendingPathComponent("kept.jpg")
            expectSuccess(try await fixture.run("get", [row.id, "--network", "-o", kept.path]))
            #expect(try Data(contentsOf: kept) == jpeg)
            let stripped = fixture.folder.appendingPathComponent("stripped.jpg")
            expectSuccess(try await fixture.run("get", [row.id, "--strip-location", "-o", stripped.path]))
            let strippedData = try Data(contentsOf: stripped)
            #expect(strippedData.count == jpeg.count && strippedData != jpeg)
            #expect(try Self.location(of: jpeg) != nil)
            #expect(try Self.location(of: strippedData) == nil)
        }
    }

    @Test func wrongImageArgumentsAreOneLineUsageErrors() async throws {
        try await withFixture(assets: 1) { fixture in
            for arguments in [["x", "--size", "0x5", "-o", "a.jpg"], ["x", "--format", "gif", "-o", "a.gif"]] {
                let result = try await fixture.run("image", arguments)
                #expect(result.status == 2, "\(result)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(result)")
            }
        }
    }
}
