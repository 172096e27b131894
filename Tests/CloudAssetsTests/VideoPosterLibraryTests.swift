import FakeS3
import Foundation
import Images
import S3Transfer
import TestSupport
import Testing

@testable import CloudAssets

/// Videos' poster frames: thumbnails and images of a video are its first frame, read from the bucket by range
/// (the container's boxes and the first keyframe), never by downloading the video.
@Suite("Library: video poster frames", .heavy, .timeLimit(.minutes(2)))
struct VideoPosterLibraryTests {
    /// A video as phones write it (`moov` after the media data), six seconds of noisy 640x360 H.264 — several MB,
    /// of which a poster needs a small part — made by the ffmpeg command line.
    static func phoneVideo(in folder: URL) throws -> Data {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("made.mp4")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=6",
            "-vf", "noise=alls=40:allf=t", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-b:v", "6M",
            "-threads", "1", "-pix_fmt", "yuv420p", url.path,
        ]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "ffmpeg made the test video")
        return try Data(contentsOf: url)
    }

    @Test("a cloud-only video's thumbnail is its first frame, from a few ranged GETs and a small part of it")
    func thumbnailFromRanges() async throws {
        try await withHarness { harness in
            let video = try Self.phoneVideo(in: harness.folder)
            try harness.server.putObject(bucket: LibraryHarness.bucket, key: "originals/clips/made.mp4", data: video)
            let library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            let clip = try library.asset(path: "clips/made.mp4")
            #expect(clip.availability == .cloudOnly && !clip.hasThumbnail)
            harness.server.requestLog.clear()

            let source = try await library.makeThumbnail(for: clip)
            guard case .posterFrame(let bytesRead) = source else {
                Issue.record("made from \(source)")
                return
            }
            #expect(bytesRead > 0 && bytesRead < video.count / 4, "\(bytesRead) of \(video.count) bytes")
            let gets = harness.gets(of: "clips/made.mp4")
            #expect(!gets.isEmpty && gets.count <= 6 && gets.allSatisfy { $0.rangeHeader != nil }, "\(gets)")
            let after = try library.asset(path: "clips/made.mp4")
            #expect(after.hasThumbnail && after.availability == .partial, "the ranges read stay: \(after)")
            let thumbnail = try #require(try library.localThumbnailData(forLocalIdentifier: clip.localIdentifier))
            let decoded = try ImageDecoder.decode(
                data: [UInt8](thumbnail), request: DecodeRequest(targetWidth: 0, targetHeight: 0, resizeMode: .none))
            #expect(decoded.image.width == 256 && decoded.image.height == 144)

            // A sized image of it, without the network: the same frame, from the ranges already local.
            harness.server.requestLog.clear()
            let options = ImageRequestOptions()
            let image = try await library.image(
                for: after, targetSize: CGSize(width: 160, height: 160), contentMode: .aspectFit, options: options)
            #expect(image.width == 160 && image.height == 90)
            #expect(harness.gets(of: "clips/made.mp4").isEmpty)
        }
    }

    @Test("offline, a cloud-only video's image is in the cloud; with its original local it decodes without the network")
    func offlineAndLocal() async throws {
        try await withHarness { harness in
            let video = try VideoMetadataLibraryTests.fixture("tail.mp4")
            try harness.server.putObject(bucket: LibraryHarness.bucket, key: "originals/clips/tail.mp4", data: video)
            let library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            let clip = try library.asset(path: "clips/tail.mp4")
            harness.server.requestLog.clear()
            let offline = ImageRequestOptions()
            let refused = await #expect(throws: CloudAssetsError.self) {
                _ = try await library.image(
                    for: clip, targetSize: CGSize(width: 32, height: 32), contentMode: .aspectFit, options: offline)
            }
            #expect(refused?.code == .networkNotAllowed)
            #expect(harness.gets(of: "clips/tail.mp4").isEmpty)
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            _ = try await library.data(for: clip, options: options)
            harness.server.requestLog.clear()
            let image = try await library.image(
                for: try library.asset(path: "clips/tail.mp4"), targetSize: CGSize(width: 32, height: 32),
                contentMode: .aspectFit, options: offline)
            #expect(image.width == 32 && image.height == 24)
            #expect(harness.log.isEmpty)
        }
    }

    @Test("an imported video goes up with its upright poster thumbnail, which another library fetches")
    func importUploadsAPoster() async throws {
        try await withHarness { harness in
            let library = try await harness.open()
            let file = harness.folder.appendingPathComponent("holiday.mov")
            try FileManager.default.createDirectory(at: harness.folder, withIntermediateDirectories: true)
            try VideoMetadataLibraryTests.fixture("rotated.mov").write(to: file)
            let ids = try await library.performChanges { $0.createAsset(fromFileAt: file) }
            _ = await library.waitForUploads()
            let imported = try #require(try library.asset(withLocalIdentifier: ids[0]))
            let thumbnailKey = try #require(harness.configuration().layout.thumbnailKey(forOriginalKey: imported.key))
            let uploaded = try #require(try harness.server.objectData(bucket: LibraryHarness.bucket, key: thumbnailKey))
            let poster = try ImageDecoder.decode(
                data: [UInt8](uploaded), request: DecodeRequest(targetWidth: 0, targetHeight: 0, resizeMode: .none))
            // Stored 64x48 with a quarter turn: upright it is taller than wide (3:4, fitted to the thumbnail size).
            #expect(poster.image.width * 4 == poster.image.height * 3, "\(poster.image.width)x\(poster.image.height)")

            var other = harness.configuration()
            other.storeURL = harness.folder.appendingPathComponent("other")
            let second = try await harness.open(other)
            try await second.sync()
            let theirs = try second.asset(path: String(imported.key.dropFirst("originals/".count)))
            #expect(theirs.availability == .thumbnail)
            #expect(try second.localThumbnailData(forLocalIdentifier: theirs.localIdentifier) == uploaded)
        }
    }
}
