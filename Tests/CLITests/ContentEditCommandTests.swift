import FakeS3
import Foundation
import Images
import TestSupport
import Testing

@Suite("cloudassets edit, revert, get --version", .heavy)
struct ContentEditCommandTests {
    static func decode(_ url: URL) throws -> RGBAImage {
        try ImageDecoder.decode(
            data: [UInt8](try Data(contentsOf: url)), request: DecodeRequest(targetWidth: 0, targetHeight: 0)
        ).image
    }

    @Test func editResumeRevertAndVersionsFromTheCommandLine() async throws {
        try await withFixture(assets: 1) { fixture in
            let jpeg = try ImageCommandTests.cameraJPEG()  // displayed 1200 × 900 (stored turned, orientation 8)
            try fixture.server.putObject(bucket: CLIFixture.bucket, key: ImageCommandTests.key, data: jpeg)
            try await fixture.sync(["--no-thumbnails"])
            let row = try #require(try await fixture.list().first { $0.key == ImageCommandTests.key })

            // Wrong values are usage errors, before anything is done.
            let bad = try await fixture.run("edit", [row.id, "--crop", "1,2"])
            #expect(bad.status == 2 && bad.stderr.contains("--crop takes x,y,width,height"), "\(bad)")
            #expect(try await fixture.run("edit", [row.id]).status == 2)

            // Rotate and crop: the current version is upright, rotated, cropped; the original is untouched.
            expectSuccess(
                try await fixture.run("edit", [row.id, "--network", "--rotate", "90", "--crop", "0,0,600,1000"]))
            let current = fixture.folder.appendingPathComponent("current.jpg")
            expectSuccess(try await fixture.run("get", [row.id, "--network", "-o", current.path]))
            let edited = try Self.decode(current)
            #expect((edited.width, edited.height) == (600, 1000), "\(edited.width) × \(edited.height)")
            let original = fixture.folder.appendingPathComponent("original.jpg")
            expectSuccess(
                try await fixture.run("get", [row.id, "--network", "--version", "original", "-o", original.path]))
            #expect(try Data(contentsOf: original) == jpeg, "the original, byte for byte")
            let edits = try fixture.server.keys(bucket: CLIFixture.bucket, prefix: "edits/")
            #expect(edits.count == 3, "\(edits)")

            // Resume from the original: rotation and crop kept, saturation added (a stacked edit would crop again).
            expectSuccess(
                try await fixture.run("edit", [row.id, "--resume", "--saturation", "-1", "--exposure", "-0.5"]))
            expectSuccess(try await fixture.run("get", [row.id, "-o", current.path]))
            let resumed = try Self.decode(current)
            #expect((resumed.width, resumed.height) == (600, 1000), "\(resumed.width) × \(resumed.height)")
            let pixel = Array(resumed.pixels[0..<3])
            #expect(Set(pixel).count == 1, "greyscale: \(pixel)")

            // Revert: the current version is the original again.
            let reverted = try await fixture.run("revert", [row.id])
            expectSuccess(reverted)
            #expect(reverted.stdout.contains("reverted"))
            expectSuccess(try await fixture.run("get", [row.id, "-o", current.path]))
            #expect(try Data(contentsOf: current) == (try Data(contentsOf: original)))
            #expect(try fixture.server.keys(bucket: CLIFixture.bucket, prefix: "edits/").count == 1)
        }
    }
}
