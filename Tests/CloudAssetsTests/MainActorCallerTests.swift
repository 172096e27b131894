import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

// An app's main-actor code calling the public API, as a UI's model does: compiled against the public interface
// only (no `@testable`), so the compiler checks that every call below may be made from the main actor — a closure
// that keeps a placeholder in the caller's variable and touches the caller's state included.

/// A view model on the main actor: it syncs, lists the photos, makes an album and opens an original.
@MainActor
final class MainActorPhotoModel {
    let library: AssetLibrary
    private(set) var photos: FetchResult
    private(set) var status = ""
    private(set) var lastAlbumTitle: String?

    init(library: AssetLibrary) throws {
        self.library = library
        photos = try library.fetchAssets(FetchOptions(sortBy: [.creationDate(ascending: false)]))
    }

    func refresh() async throws {
        let summary = try await library.sync(fetchThumbnails: false)
        photos = try library.fetchAssets(photos.options)
        status = "\(summary.inserted) new"
    }

    /// The README's album example, in main-actor code.
    func makeAlbum(_ title: String, of assets: [Asset]) async throws -> AssetCollection? {
        var album: CollectionPlaceholder!
        try await library.performChanges { changes in
            album = changes.createAlbum(title: title)
            changes.addAssets(assets, to: album)
            self.lastAlbumTitle = title  // the caller's state, on the caller's actor
        }
        return try library.collection(withLocalIdentifier: album.localIdentifier)
    }

    func original(of asset: Asset) async throws -> Data {
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        return try await library.data(for: asset, options: options)
    }
}

@Suite("The public API from main-actor code", .heavy)
struct MainActorCallerTests {
    @Test("a main-actor model syncs, fetches, makes an album and reads an original")
    @MainActor
    func aMainActorModelUsesTheLibrary() async throws {
        let server = try FakeS3Server(
            configuration: FakeS3Configuration(accessKeyID: "demo", secretAccessKey: "demo-secret"))
        try await server.start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("main-actor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try SampleLibrary.seed(into: server, bucket: "photos", assets: 3)
            var configuration = AssetLibrary.Configuration(storeURL: folder)
            configuration.endpoint = server.endpoint
            configuration.bucket = "photos"
            configuration.credentials = .static(accessKeyID: "demo", secretAccessKey: "demo-secret")
            let library = try await AssetLibrary(configuration: configuration)
            defer { library.close() }

            let model = try MainActorPhotoModel(library: library)
            #expect(model.photos.count == 0)
            try await model.refresh()
            #expect(model.photos.count == 3 && model.status == "3 new")

            let picked = [model.photos[0], model.photos[2]]
            let album = try #require(try await model.makeAlbum("Picked", of: picked))
            #expect(album.title == "Picked" && model.lastAlbumTitle == "Picked")
            #expect(try library.fetchAssets(in: album).map(\.key) == picked.map(\.key))

            let data = try await model.original(of: picked[0])
            #expect(data == (try server.objectData(bucket: "photos", key: picked[0].key)))
            try await server.stop()
        } catch {
            try? await server.stop()
            throw error
        }
    }
}
