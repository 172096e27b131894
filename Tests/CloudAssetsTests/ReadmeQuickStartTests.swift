import CloudAssets
import FakeS3
import Foundation
import Testing

// The README's quick start, compiled and run against the fake server. Keep the two in step.

// --- README: begin ---
final class Gallery: LibraryChangeObserver, @unchecked Sendable {  // state guarded by `lock`
    let library: AssetLibrary
    private let lock = NSLock()
    private var state: (recent: FetchResult, rows: [String])  // rows: what a list UI shows, one per asset

    /// Read from any thread: the observer replaces both on the change queue, under the lock.
    var recent: FetchResult { locked { $0.recent } }
    var rows: [String] { locked { $0.rows } }

    init(library: AssetLibrary) throws {
        self.library = library
        let recent = try library.fetchAssets(
            FetchOptions(predicate: .mediaType(.image), sortBy: [.creationDate(ascending: false)], limit: 500))
        state = (recent, recent.map(\.key))
        library.register(self)  // observers are called serially, in commit order, on the library's change queue
    }

    func libraryDidChange(_ change: LibraryChange) {
        locked { state in
            guard let details = change.details(for: state.recent) else { return }  // nil: the change missed us
            let after = details.fetchResultAfterChanges
            state.recent = after
            // Deletes (before indexes), inserts (after indexes), moves, then reloads — the order a list applies.
            ListUpdate(details).apply(to: &state.rows, afterCount: after.count) { after[$0].key }
        }
    }

    private func locked<T>(_ body: (inout (recent: FetchResult, rows: [String])) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    func original(of asset: Asset) async throws -> Data {
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true  // false: answers at once with isInCloud when not local
        options.progressHandler = { fraction, _, stop, _ in
            print("downloading \(asset.key): \(Int(fraction * 100))%")
            _ = stop  // set stop = true to cancel
        }
        return try await library.data(for: asset, options: options)
    }
}
// --- README: end ---

@Suite struct ReadmeQuickStartTests {
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

        let library = try await AssetLibrary(
            configuration: .init(
                storeURL: folder, endpoint: server.endpoint, bucket: "photos",
                credentials: .static(accessKeyID: "demo", secretAccessKey: "demo-secret")))
        defer { library.close() }
        let gallery = try Gallery(library: library)
        #expect(gallery.recent.count == 0)

        try await library.sync()
        await withCheckedContinuation { done in library.notifyWhenChangesDelivered { done.resume() } }
        #expect(gallery.recent.count > 0)
        #expect(gallery.rows == gallery.recent.map(\.key))

        let first = try #require(gallery.recent.firstObject)
        let data = try await gallery.original(of: first)
        #expect(data == (try server.objectData(bucket: "photos", key: first.key)))
        await withCheckedContinuation { done in library.notifyWhenChangesDelivered { done.resume() } }
        #expect(gallery.recent.firstObject?.availability == .full)
        #expect(gallery.rows == gallery.recent.map(\.key))
    }
}
