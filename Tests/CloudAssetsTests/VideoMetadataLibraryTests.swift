import FakeS3
import Foundation
import S3Transfer
import TestSupport
import Testing

@testable import CloudAssets

/// Videos' length, size, codec, frame rate, date and place in the catalog: read from the bucket by a sync with a
/// few ranged GETs (never the whole original), from the file by an import, and carried to other libraries.
@Suite("Library: video metadata", .heavy, .timeLimit(.minutes(1)))
struct VideoMetadataLibraryTests {
    static func fixture(_ name: String) throws -> Data {
        try Data(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../VideoTests/Fixtures/\(name)"))
    }

    @Test("another tool's videos: a sync reads their containers by range, leaves them cloud-only, sorts and filters")
    func syncReadsAnotherToolsVideos() async throws {
        try await withHarness { harness in
            // Plain objects, as the aws CLI writes them: no fields of ours.
            let tail = try Self.fixture("tail.mp4")
            let apple = try Self.fixture("apple.mov")
            try harness.server.putObject(bucket: LibraryHarness.bucket, key: "originals/clips/tail.mp4", data: tail)
            try harness.server.putObject(bucket: LibraryHarness.bucket, key: "originals/clips/apple.mov", data: apple)
            let library = try await harness.open()
            let summary = try await library.sync(fetchThumbnails: false)
            let clip = try library.asset(path: "clips/tail.mp4")
            #expect(clip.mediaType == .video)
            #expect(abs(clip.duration - 2) < 0.05, "\(clip)")
            #expect(clip.pixelWidth == 64 && clip.pixelHeight == 48)
            #expect(clip.videoCodec == "avc1" && clip.frameRate == 25)
            #expect(clip.provisionalFields.isEmpty)
            #expect(clip.availability == .cloudOnly)
            let phone = try library.asset(path: "clips/apple.mov")
            #expect(phone.creationDate == ISO8601DateFormatter().date(from: "2023-06-01T10:34:56Z"))
            #expect(phone.location?.latitude == 37.3318)
            // Ranged reads only: no GET of a whole original.
            let gets = harness.log.filter { $0.method == "GET" && ($0.key ?? "").hasPrefix("originals/") }
            #expect(!gets.isEmpty && gets.allSatisfy { $0.rangeHeader != nil }, "\(gets)")
            #expect(summary.videoHeaderReads == 2, "\(summary)")

            let long = try library.fetchAssets(FetchOptions(predicate: .duration(1.5..<Double.infinity)))
            #expect(Array(long.identifiers) == [clip.rowID])
            let byLength = try library.fetchAssets(FetchOptions(sortBy: [.duration(ascending: false)]))
            #expect(Array(byLength.identifiers) == [clip.rowID, phone.rowID])
        }
    }

    @Test("an imported video carries its length to the bucket's fields and to another library, which reads nothing")
    func importCarriesTheLength() async throws {
        try await withHarness { harness in
            let library = try await harness.open()
            let file = harness.folder.appendingPathComponent("holiday.mov")
            try FileManager.default.createDirectory(at: harness.folder, withIntermediateDirectories: true)
            try Self.fixture("rotated.mov").write(to: file)
            let ids = try await library.performChanges { $0.createAsset(fromFileAt: file) }
            let imported = try #require(try library.asset(withLocalIdentifier: ids[0]))
            #expect(imported.mediaType == .video && abs(imported.duration - 1) < 0.05, "\(imported)")
            #expect(imported.pixelWidth == 48 && imported.pixelHeight == 64, "rotation applied")
            _ = await library.waitForUploads()
            let head = try #require(try harness.server.objectMetadata(bucket: LibraryHarness.bucket, key: imported.key))
            #expect(head["duration"].flatMap(Double.init).map { abs($0 - 1) < 0.05 } == true, "\(head)")

            var other = harness.configuration()
            other.storeURL = harness.folder.appendingPathComponent("other")
            let second = try await harness.open(other)
            harness.server.requestLog.clear()
            let summary = try await second.sync(fetchThumbnails: false)
            let theirs = try second.asset(path: String(imported.key.dropFirst("originals/".count)))
            #expect(theirs.duration == imported.duration && theirs.frameRate == imported.frameRate)
            #expect(summary.videoHeaderReads == 0)
        }
    }
}

extension VideoMetadataLibraryTests {
    @Test("location access denied: a video's place is blanked in every byte handed out, its length unchanged")
    func videoLocationIsBlankedWhenDenied() async throws {
        try await withHarness { harness in
            let original = try Self.fixture("apple.mov")
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: "originals/clips/apple.mov", data: original)
            var configuration = harness.configuration()
            configuration.locationAccess = .denied
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            let clip = try library.asset(path: "clips/apple.mov")
            #expect(clip.location == nil)
            // A ranged read of the movie box (at the file's end), before anything else is local.
            let moovAt = Int64(original.count - 1423)
            let tail = try await library.read(clip, range: moovAt..<Int64(original.count))
            #expect(!tail.contains(Data("+37.3318".utf8)), "the ranged read carries no place")
            // The whole original: same length, the place blank, the rest as stored.
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            let whole = try await library.data(for: clip, options: options)
            #expect(whole.count == original.count)
            #expect(whole.range(of: Data("+37.3318".utf8)) == nil)
            #expect(whole[moovAt...] == tail)
            let read = try VideoMetadataReaderForTests.metadata(of: whole)
            #expect(read.location == nil && abs(read.duration - 1) < 0.05)
            #expect(zip(whole, original).filter { $0 != $1 }.count == "+37.3318-122.0312+012.500/".utf8.count)
        }
    }
}

extension VideoMetadataLibraryTests {
    @Test("location access denied: a .mp4 that is no movie is read as stored; a whole movie whose boxes lie is not")
    func notAMovieIsHandedOutAndALyingOneIsNot() async throws {
        try await withHarness { harness in
            let bytes = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            try harness.server.putObject(bucket: LibraryHarness.bucket, key: "originals/clips/noise.mp4", data: bytes)
            // A movie box that claims more bytes than its file has.
            var lying = [UInt8](try Self.fixture("tail.mp4"))
            let moovAt = lying.count - 1430
            lying[moovAt + 3] = 0xFF
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: "originals/clips/lying.mp4", data: Data(lying))
            var configuration = harness.configuration()
            configuration.locationAccess = .denied
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            let noise = try library.asset(path: "clips/noise.mp4")
            #expect(try await library.read(noise, range: 1000..<2000) == bytes[1000..<2000])
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            #expect(try await library.data(for: noise, options: options) == bytes)
            // The whole file of a movie whose boxes lie is not handed out: where its places are cannot be told.
            let liar = try library.asset(path: "clips/lying.mp4")
            await #expect(throws: CloudAssetsError.self) { _ = try await library.data(for: liar, options: options) }
        }
    }
}
