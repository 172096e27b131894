import Essentials
import FakeS3
import Foundation
import Images
import TestSupport
import Testing
import Video

@Suite("Sample library seeding", .heavy)
struct SampleLibraryTests {
    @Test func seedingIsDeterministicAndFollowsTheBucketLayout() async throws {
        let a = try FakeS3Server(configuration: FakeS3Configuration())
        let b = try FakeS3Server(configuration: FakeS3Configuration())
        let summary = try SampleLibrary.seed(into: a, assets: 10, seed: 7)
        try SampleLibrary.seed(into: b, assets: 10, seed: 7)
        #expect(summary.originals == 10)
        #expect(summary.thumbnails >= 5 && summary.thumbnails <= 10)
        let listA = try await keys(a)
        #expect(listA == (try await keys(b)))
        #expect(listA.filter { $0.hasPrefix("originals/") }.count == 10)
        for key in listA where key.hasPrefix("thumbnails/") {
            #expect(key.hasSuffix(".jpg"))
            #expect(listA.contains("originals/" + key.dropFirst("thumbnails/".count).dropLast(4)))
        }
        for key in listA.prefix(10) {
            #expect(try a.objectData(bucket: "photos", key: key) == b.objectData(bucket: "photos", key: key))
        }
    }

    @Test func imageOriginalsAreRealJPEGsWithMatchingMetadata() async throws {
        let server = try FakeS3Server(
            configuration: FakeS3Configuration(accessKeyID: "AKIDTEST", secretAccessKey: "test-secret"))
        try SampleLibrary.seed(into: server, assets: 24, seed: 3)
        try await server.start()
        let client = S3TestClient(port: server.port)
        let all = try await keys(server)
        let images = all.filter { $0.hasPrefix("originals/") && $0.hasSuffix(".jpg") }
        #expect(images.count >= 12)
        var orientations: Set<Int> = []
        var located = 0
        var withThumbnail = 0
        for key in images {
            let r = try await client.send("GET", "/photos/\(key)")
            let jpeg = [UInt8](r.body)
            guard case .parsed(let metadata) = try ImageMetadata.parse(head: jpeg, fileLength: jpeg.count) else {
                Issue.record("\(key): headers not parsed")
                continue
            }
            #expect(metadata.format == .jpeg)
            #expect(r.header("x-amz-meta-pixel-width") == String(metadata.pixelWidth))
            #expect(r.header("x-amz-meta-pixel-height") == String(metadata.pixelHeight))
            #expect(r.header("x-amz-meta-media-type") == "image")
            #expect(r.header("x-amz-meta-orientation") == String(metadata.orientation))
            let created = try #require(r.header("x-amz-meta-creation-date"))
            #expect(created.hasSuffix("Z"))
            // The EXIF capture date is the same instant, written at a local offset.
            let captured = try #require(metadata.captureDate)
            #expect(ISO8601DateFormatter().date(from: created) == captured)
            orientations.insert(metadata.orientation)
            if metadata.location != nil { located += 1 }
            if let range = metadata.embeddedThumbnail {
                withThumbnail += 1
                #expect(jpeg[range].starts(with: [0xFF, 0xD8]))
            }
            // The stored pixels decode upright at the displayed size.
            let (image, _) = try ImageDecoder.decode(
                data: jpeg, request: DecodeRequest(targetWidth: 0, targetHeight: 0, resizeMode: .none))
            #expect(image.width == metadata.displayWidth && image.height == metadata.displayHeight)
            let thumbnailKey = "thumbnails/" + key.dropFirst("originals/".count) + ".jpg"
            if all.contains(thumbnailKey) {
                let t = [UInt8](try await client.send("GET", "/photos/\(thumbnailKey)").body)
                guard case .parsed(let thumb) = try ImageMetadata.parse(head: t, fileLength: t.count) else {
                    Issue.record("\(thumbnailKey): headers not parsed")
                    continue
                }
                // Upright, fitted to 160 x 160.
                #expect(thumb.orientation == 1 && max(thumb.pixelWidth, thumb.pixelHeight) == 160)
                #expect((thumb.pixelWidth >= thumb.pixelHeight) == (image.width >= image.height))
            }
        }
        #expect(orientations.count >= 6)
        #expect(located > 0 && located < images.count)
        #expect(withThumbnail > 0 && withThumbnail < images.count)
        try await server.stop()
    }

    @Test func largeOriginalsHaveTheRequestedSize() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("fakes3-seed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let summary = try SampleLibrary.seed(root: root, assets: 2, large: 1, largeSize: 3 << 20, seed: 1)
        #expect(summary.originals == 3)
        let server = try FakeS3Server(configuration: FakeS3Configuration(storage: .disk(root: root)))
        let data = try #require(try server.objectData(bucket: "photos", key: "originals/large/VID_L001.mov"))
        #expect(data.count == 3 << 20)
    }

    private func keys(_ server: FakeS3Server) async throws -> [String] {
        let wasStarted = server.port != 0
        if !wasStarted { try await server.start() }
        let r = try await S3TestClient(port: server.port).send("GET", "/photos", query: [("list-type", "2")])
        if !wasStarted { try await server.stop() }
        return r.text.components(separatedBy: "<Key>").dropFirst().map { String($0.prefix { $0 != "<" }) }
    }
}

extension SampleLibraryTests {
    @Test func videoOriginalsAreRealMoviesWhoseFieldsAgreeWithTheirContainers() async throws {
        let server = try FakeS3Server(configuration: FakeS3Configuration())
        try SampleLibrary.seed(into: server, assets: 120, seed: 11)
        let videos = try await keys(server).filter { $0.hasPrefix("originals/") && $0.hasSuffix(".mov") }
        #expect(videos.count >= 3)
        var movieLast = 0
        for key in videos {
            let bytes = [UInt8](try #require(try server.objectData(bucket: "photos", key: key)))
            let fields = try #require(try server.objectMetadata(bucket: "photos", key: key))
            let metadata = try VideoMetadataReader.read(bytes: bytes).metadata
            #expect(fields["duration"].flatMap(Double.init) == metadata.duration, "\(key)")
            #expect(fields["pixel-width"] == String(metadata.pixelWidth), "\(key)")
            #expect(fields["video-codec"] == metadata.codec && fields["media-type"] == "video")
            // Its first frame decodes at the size its fields state.
            let frame = try PosterFrame.decode(
                size: Int64(bytes.count),
                request: DecodeRequest(
                    targetWidth: 0, targetHeight: 0, resizeMode: .none)
            ) { offset, buffer in
                let count = min(buffer.count, bytes.count - Int(offset))
                bytes.withUnsafeBytes {
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count]))
                }
                return count
            }.image
            #expect(String(frame.width) == fields["pixel-width"] && String(frame.height) == fields["pixel-height"])
            if let moov = bytes.indices.dropLast(8).last(where: {
                bytes[$0 + 4...$0 + 7].elementsEqual(Array("moov".utf8))
            }),
                moov > bytes.count / 2
            {
                movieLast += 1
            }
        }
        #expect(movieLast > 0 && movieLast < videos.count, "moov at either end: \(movieLast) of \(videos.count) last")
    }
}

@Test func splitMixSkipLeavesTheGeneratorWhereThatManyDrawsWould() {
    var drawn = SplitMix64(seed: 42)
    var skipped = SplitMix64(seed: 42)
    for _ in 0..<1000 { _ = drawn.next() }
    skipped.skip(1000)
    #expect(drawn.next() == skipped.next())
}
