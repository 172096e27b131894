import CloudAssets
import FakeS3
import Foundation
import Images
import TestSupport
import Testing

// The DocC tutorial "Build a photo app" (Sources/CloudAssets/CloudAssets.docc/Tutorials) shows the files in
// Tutorial/, which this target compiles; its catalog keeps copies in Resources/, which must stay identical. The
// test below runs the app the way the tutorial does, against the fake server.

@Suite("The DocC tutorial's app", .heavy)
struct TutorialTests {
    static let files = [
        "PhotoApp.swift", "PhotoList.swift", "PhotoApp+Browse.swift", "PhotoApp+Originals.swift",
        "PhotoApp+Import.swift",
    ]

    @Test("the tutorial shows exactly the code this target compiles", arguments: files)
    func theTutorialShowsThisCodeVerbatim(file: String) throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = tests.deletingLastPathComponent().deletingLastPathComponent()
        let compiled = try String(contentsOf: tests.appendingPathComponent("Tutorial/\(file)"), encoding: .utf8)
        let shown = try String(
            contentsOf: root.appendingPathComponent("Sources/CloudAssets/CloudAssets.docc/Resources/\(file)"),
            encoding: .utf8)
        #expect(compiled == shown, "the tutorial's \(file) differs from Tests/CloudAssetsTests/Tutorial/\(file)")
    }

    @Test("the app syncs, follows changes, downloads, decodes and imports")
    func theAppRuns() async throws {
        let server = try FakeS3Server(
            configuration: FakeS3Configuration(accessKeyID: "demo", secretAccessKey: "demo-secret"))
        try await server.start()
        do {
            try await run(server)
            try await server.stop()
        } catch {
            try? await server.stop()
            throw error
        }
    }

    /// Waits until `condition` holds (the list's task applies changes on its own), at most 20 s.
    func waitFor(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(20)
        while try await !condition() {
            guard Date() < deadline else {
                Issue.record("timed out waiting for \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func run(_ server: FakeS3Server) async throws {
        try SampleLibrary.seed(into: server, bucket: "photos", assets: 12)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tutorial-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        // Section 1: open and sync.
        let app = try await PhotoApp.open(
            folder: folder.appendingPathComponent("library"), endpoint: server.endpoint, bucket: "photos",
            credentials: .static(accessKeyID: "demo", secretAccessKey: "demo-secret"))
        let list = try app.browse()
        #expect(await list.photos.count == 0)
        let summary = try await app.refresh()
        #expect(summary.inserted > 0)

        // Section 2: the list follows.
        let images = try app.library.fetchAssets(PhotoList.options)
        #expect(images.count > 0)
        try await waitFor("the sync in the list") { await list.photos.count == images.count }
        #expect(await list.rows == list.photos.map(PhotoList.row))

        // Section 3: an original and an image.
        let first = try #require(await list.photos.firstObject)
        #expect(app.needsDownload(first))
        let data = try await app.original(of: first)
        #expect(Int64(data.count) == first.size)
        try await waitFor("the download in the list") { await list.photos.firstObject?.availability == .full }
        #expect(await list.rows[0].contains("(local"))
        let image = try await app.cellImage(of: first)
        #expect(image.width >= 256 && image.height >= 256)

        // Section 4: an import, favourite, uploaded.
        let photo = folder.appendingPathComponent("new.jpg")
        let bytes = Data(try ImageEncoder.jpeg(RGBAImage(width: 64, height: 48, fill: (200, 120, 40, 255))))
        try bytes.write(to: photo)
        let ids = try await app.importPhotos([photo], favorite: true)
        #expect(ids.count == 1)
        try await waitFor("the import in the list") {
            await list.photos.contains { $0.localIdentifier == ids[0] && $0.isFavorite }
        }
        let imported = try #require(try app.library.asset(withLocalIdentifier: ids[0]))
        #expect(imported.uploadState == .uploaded)
        #expect(try server.objectData(bucket: "photos", key: imported.key) == bytes)
        #expect(await list.rows == list.photos.map(PhotoList.row))

        app.library.close()
    }
}
