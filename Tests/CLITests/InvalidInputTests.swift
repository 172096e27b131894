import FakeS3
import Foundation
import Images
import TestSupport
import Testing

/// What `image`, `edit` and `thumbnail` do with data they cannot read, and with sizes and values out of range:
/// each with its own status from the table (`cloudassets exit-codes`), never 1 (a bug) or 9 (a full disk).
@Suite("cloudassets image, edit, thumbnail: unreadable input and bounds", .heavy)
struct InvalidInputTests {
    static let broken = "originals/a-broken.jpg"
    static let truncated = "originals/b-cut.jpg"
    static let video = "originals/c-clip.mov"
    static let good = ["originals/d/IMG_1.jpg", "originals/d/IMG_2.jpg"]

    /// A garbage `.jpg`, the first half of a real JPEG, a video of noise and two real photos, synced.
    static func seed(_ fixture: CLIFixture) async throws -> [String: String] {
        let jpeg = try ImageCommandTests.cameraJPEG()
        try fixture.server.putObject(
            bucket: CLIFixture.bucket, key: broken, data: Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 * 7) }))
        try fixture.server.putObject(bucket: CLIFixture.bucket, key: truncated, data: jpeg.prefix(jpeg.count / 2))
        try fixture.server.putObject(
            bucket: CLIFixture.bucket, key: video, data: Data(repeating: 0x42, count: 40_000),
            metadata: ["media-type": "video"])
        for (index, key) in good.enumerated() {
            try fixture.server.putObject(bucket: CLIFixture.bucket, key: key, data: jpeg + Data([UInt8(index)]))
        }
        try await fixture.sync(["--no-thumbnails"])
        return Dictionary(uniqueKeysWithValues: try await fixture.list().map { ($0.key, $0.id) })
    }

    @Test func imageAndEditOfANonImageOrTruncatedImageExitWithTheUnsupportedInputStatus() async throws {
        try await withFixture(assets: 0) { fixture in
            let ids = try await Self.seed(fixture)
            for key in [Self.broken, Self.truncated] {
                let id = try #require(ids[key])
                let out = fixture.folder.appendingPathComponent("out.jpg")
                let image = try await fixture.run("image", [id, "--network", "-o", out.path])
                expectUserError(image, status: 16, mentioning: "image")
                #expect(!FileManager.default.fileExists(atPath: out.path))
                let edit = try await fixture.run("edit", [id, "--network", "--rotate", "90"])
                expectUserError(edit, status: 16, mentioning: "image")
            }
            #expect(try OutputPathTests.leftovers(in: fixture.folder).isEmpty)
        }
    }

    @Test func thumbnailOfAVideoThatIsNoMovieIsUnsupportedInputNotAFullDisk() async throws {
        try await withFixture(assets: 0) { fixture in
            let ids = try await Self.seed(fixture)
            let result = try await fixture.run("thumbnail", [try #require(ids[Self.video]), "--network"])
            expectUserError(result, status: 16, mentioning: "not a container FFmpeg reads")
        }
    }

    @Test func thumbnailOfEveryAssetGoesOnPastTheOnesItCannotMakeAndCountsThem() async throws {
        try await withFixture(assets: 0) { fixture in
            let ids = try await Self.seed(fixture)
            let result = try await fixture.run("thumbnail", ["--prefix", "", "--network"])
            #expect(result.status == 16, "\(result)")
            // One line per failure (in key order: the garbage first), then the count. The truncated photo's head,
            // with its EXIF thumbnail, is whole: it gets that thumbnail.
            let errors = result.stderrLines
            #expect(errors.count == 3, "\(result)")
            for (line, key) in zip(errors, [Self.broken, Self.video]) {
                #expect(line.hasPrefix("error: \(ids[key] ?? "?")\t\(key): "), "\(line)")
            }
            #expect(errors.last == "error: 2 of 5 thumbnails could not be made (each reported above)")
            // The photos after them got their thumbnails.
            let made = result.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
            #expect(made.map { $0[1] } == [Self.truncated] + Self.good, "\(result)")
            #expect(
                try await fixture.rowsByID().filter { Self.good.contains($0.value.key) }.allSatisfy {
                    $0.value.state == "thumbnail"
                })
        }
    }

    @Test func aHugeSizeGivesAtMostTheOriginalsSizeInBoundedMemoryAndNoTemporaryFile() async throws {
        try await withFixture(assets: 0) { fixture in
            let ids = try await Self.seed(fixture)
            let id = try #require(ids[Self.good[0]])  // displayed 1200 × 900
            let out = fixture.folder.appendingPathComponent("big.png")
            // Beyond the absolute cap: a usage error, before anything is done.
            let refused = try await fixture.run("image", [id, "--network", "--size", "65535", "-o", out.path])
            expectUserError(refused, status: 2, mentioning: "--size")
            #expect(try OutputPathTests.leftovers(in: fixture.folder).isEmpty)
            for box in [["--size", "16384"], ["--size", "4000x10", "--fill"]] {
                let result = try await fixture.run(
                    "image", [id, "--network", "-o", out.path] + box,
                    environment: ["CLOUDASSETS_REPORT_PEAK_RSS": "1"], timeout: .seconds(120))
                expectSuccess(result)
                let decoded = try ImageDecoder.decode(
                    data: [UInt8](try Data(contentsOf: out)),
                    request: DecodeRequest(targetWidth: 1, targetHeight: 1, resizeMode: .none)
                ).image
                #expect((decoded.width, decoded.height) == (1200, 900), "\(box): \(decoded.width) × \(decoded.height)")
                let peak = result.stderrLines.first { $0.hasPrefix("peak RSS: ") }
                    .flatMap { Int($0.dropFirst("peak RSS: ".count).split(separator: " ")[0]) }
                #expect((peak ?? .max) < 200 << 10, "peak RSS \(peak ?? -1) kB for \(box)")
                #expect(try OutputPathTests.leftovers(in: fixture.folder).isEmpty)
            }
        }
    }
}
