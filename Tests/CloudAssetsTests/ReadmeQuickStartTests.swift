import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

// The README's quick start, compiled and run against the fake server. Keep the two in step.

// --- README: begin ---
/// What a list on screen shows, kept current from the library's changes. An actor: one task at a time touches
/// its state, so the compiler checks there is no data race.
actor Gallery {
    let library: AssetLibrary
    private(set) var recent: FetchResult
    private(set) var rows: [String]  // what a list UI shows, one per asset

    init(library: AssetLibrary) throws {
        self.library = library
        recent = try library.fetchAssets(
            FetchOptions(predicate: .mediaType(.image), sortBy: [.creationDate(ascending: false)], limit: 500))
        rows = recent.map(\.key)
    }

    /// Applies every change, in commit order, until the library closes.
    func follow(_ changes: AsyncStream<LibraryChange>) async {
        for await change in changes { apply(change) }
    }

    func apply(_ change: LibraryChange) {
        guard let details = change.details(for: recent) else { return }  // nil: the change missed us
        let after = details.fetchResultAfterChanges
        recent = after
        // Deletes (before indexes), inserts (after indexes), moves, then reloads — the order a list applies.
        ListUpdate(details).apply(to: &rows, afterCount: after.count) { after[$0].key }
    }

    func original(of asset: Asset) async throws -> Data {
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true  // false: throws networkNotAllowed at once when not local
        options.progressHandler = { fraction, _, stop, _ in
            print("downloading \(asset.key): \(Int(fraction * 100))%")
            _ = stop  // set stop = true to cancel
        }
        return try await library.data(for: asset, options: options)
    }
}
// --- README: end ---

@Suite(.heavy) struct ReadmeQuickStartTests {
    @Test func theReadmeShowsThisCodeVerbatim() throws {
        let here = URL(fileURLWithPath: #filePath)
        let readme = try String(
            contentsOf: here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        let begin = try #require(source.range(of: "// --- README: " + "begin ---\n"))
        let end = try #require(source.range(of: "// --- README: " + "end ---"))
        let code = source[begin.upperBound..<end.lowerBound]
        #expect(code.count > 500)
        #expect(readme.contains(code), "README.md's quick start differs from the code this test runs")
    }

    @Test func quickStartSyncsObservesAndDownloads() async throws {
        let server = try FakeS3Server(
            configuration: FakeS3Configuration(accessKeyID: "demo", secretAccessKey: "demo-secret"))
        try await server.start()
        do {
            try await runQuickStart(server)
            try await server.stop()
        } catch {
            try? await server.stop()
            throw error
        }
    }

    func runQuickStart(_ server: FakeS3Server) async throws {
        try SampleLibrary.seed(into: server, bucket: "photos", assets: 12)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        var configuration = AssetLibrary.Configuration(storeURL: folder)
        configuration.endpoint = server.endpoint
        configuration.bucket = "photos"
        configuration.credentials = .static(accessKeyID: "demo", secretAccessKey: "demo-secret")
        let library = try await AssetLibrary(configuration: configuration)
        let gallery = try Gallery(library: library)
        #expect(await gallery.recent.count == 0)

        // What `gallery.follow(library.changes)` does, one change at a time so the test knows when to look.
        var changes = library.changes.makeAsyncIterator()
        func applyChanges(through token: ChangeToken) async {
            while let change = await changes.next() {
                await gallery.apply(change)
                if change.token >= token { return }
            }
        }
        try await library.sync()
        await applyChanges(through: library.currentChangeToken)
        #expect(await gallery.recent.count > 0)
        #expect(await gallery.rows == gallery.recent.map(\.key))

        let first = try #require(await gallery.recent.firstObject)
        let data = try await gallery.original(of: first)
        #expect(data == (try server.objectData(bucket: "photos", key: first.key)))
        await applyChanges(through: library.currentChangeToken)
        #expect(await gallery.recent.firstObject?.availability == .full)
        #expect(await gallery.rows == gallery.recent.map(\.key))

        // The README's way: a task follows the changes until the library closes.
        let follower = Task { await gallery.follow(library.changes) }
        library.close()
        await follower.value
    }
}
