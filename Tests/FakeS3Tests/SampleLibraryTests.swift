import FakeS3
import Foundation
import Testing

@Suite("Sample library seeding")
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

    @Test func imageOriginalsAreRealPNGsWithMatchingMetadata() async throws {
        let server = try FakeS3Server(
            configuration: FakeS3Configuration(accessKeyID: "AKIDTEST", secretAccessKey: "test-secret"))
        try SampleLibrary.seed(into: server, assets: 5, seed: 3)
        try await server.start()
        let client = S3TestClient(port: server.port)
        let images = try await keys(server).filter { $0.hasPrefix("originals/") && $0.hasSuffix(".png") }
        #expect(!images.isEmpty)
        for key in images {
            let r = try await client.send("GET", "/photos/\(key)")
            let png = [UInt8](r.body)
            #expect(png.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
            let height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
            #expect(r.header("x-amz-meta-pixel-width") == String(width))
            #expect(r.header("x-amz-meta-pixel-height") == String(height))
            #expect(r.header("x-amz-meta-media-type") == "image")
            #expect((1...8).contains(Int(r.header("x-amz-meta-orientation") ?? "") ?? 0))
            #expect(r.header("x-amz-meta-creation-date")?.hasSuffix("Z") == true)
        }
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
