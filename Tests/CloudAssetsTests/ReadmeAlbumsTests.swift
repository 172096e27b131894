import Foundation
import TestSupport
import Testing

@testable import CloudAssets

// The README's Albums example, compiled and run against the fake server. Keep them in step: the lines between the
// markers, less their indentation, are the README's. It runs on the main actor, as an app's UI code would.
@MainActor
private func readmeAlbumsExample(library: AssetLibrary, first: Asset, second: Asset, cover: Asset) async throws
    -> (FetchResult, [AssetCollection])
{
    // --- README albums: begin ---
    var rome: CollectionPlaceholder!
    try await library.performChanges { changes in
        let trips = changes.createFolder(title: "Trips")
        rome = changes.createAlbum(title: "Rome", in: trips)
        changes.addAssets([first, second], to: rome)  // at the end, in this order
        changes.insertAssets([cover], into: rome, at: 0)
    }
    let album = try library.collection(withLocalIdentifier: rome.localIdentifier)!
    let photos = try library.fetchAssets(in: album)  // its own order; observed like any fetch result
    let smart = try library.fetchSmartAlbums()  // each with its current count
    // --- README albums: end ---
    return (photos, smart)
}

@Suite("README: the Albums example", .heavy)
struct ReadmeAlbumsTests {
    @Test("the README shows exactly the code these tests run")
    func theReadmeShowsThisCodeVerbatim() throws {
        try ReadmeSample.expectVerbatim("albums")
    }

    @Test("the Albums example makes a folder and an album in its own order, and another library receives it")
    func albumsExampleRuns() async throws {
        try await withHarness { harness in
            for name in ["a", "b", "c"] { try harness.put("\(name).jpg", data: Data("photo \(name)".utf8)) }
            let library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            let (a, b, c) = (
                try library.asset(path: "a.jpg"), try library.asset(path: "b.jpg"), try library.asset(path: "c.jpg")
            )
            let (photos, smart) = try await readmeAlbumsExample(library: library, first: a, second: b, cover: c)
            #expect(photos.map(\.key) == ["originals/c.jpg", "originals/a.jpg", "originals/b.jpg"])
            #expect(
                smart.map(\.title) == ["Favorites", "Recently Added", "Videos", "Edited", "Hidden", "Recently Deleted"])
            try await library.sync(fetchThumbnails: false)

            let other = try await harness.open(
                harness.configuration(storeURL: harness.folder.appendingPathComponent("b")))
            try await other.sync(fetchThumbnails: false)
            let folder = try #require(try other.fetchFolders().first)
            let album = try #require(try other.fetchAlbums(in: folder).first)
            #expect(folder.title == "Trips" && album.title == "Rome")
            #expect(try other.fetchAssets(in: album).map(\.key) == photos.map(\.key))
        }
    }
}
