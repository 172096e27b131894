import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// What every library on a bucket must agree on about one asset once all have synced.
private struct SharedView: Hashable, CustomStringConvertible {
    var key: String
    var favorite: Bool
    var hidden: Bool
    var title: String?
    var keywords: [String]
    /// In the trash or not: each library dates a trash by when it learned of it (its retention counts from then),
    /// so the dates differ by the time between the syncs.
    var trashed: Bool

    init(_ asset: Asset) {
        key = asset.key
        favorite = asset.isFavorite
        hidden = asset.isHidden
        title = asset.title
        keywords = asset.keywords
        trashed = asset.trashedDate != nil
    }

    var description: String {
        "\(key) fav=\(favorite) hid=\(hidden) title=\(title ?? "-") kw=\(keywords) trash=\(trashed)"
    }
}

@Suite("Library: several libraries on one bucket converge", .heavy)
struct ConvergenceTests {
    /// Three libraries and an outside writer (another tool) make random changes — imports (some of the same
    /// bytes or the same name on two devices), trash and restore, favourites, hidden, titles, keywords, puts,
    /// deletes and renames by copy — with syncs in random order. After every library has synced twice, they
    /// hold the same assets with the same shared properties, and the bucket holds every asset's original.
    @Test(
        "random changes and sync modes on three libraries and an outside writer end in identical catalogs",
        arguments: [1, 2, 3, 4] as [UInt64])
    func randomChangesConverge(seed: UInt64) async throws {
        try await withHarness { harness in
            var random = SeededRandom(seed: seed)
            var libraries: [AssetLibrary] = []
            for name in ["a", "b", "c"] {
                // The journal's defaults: a sync is full only when asked, or on the first one.
                var configuration = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent(name))
                configuration.fullSyncInterval = 24 * 3600
                libraries.append(try await harness.open(configuration))
            }
            let sources = harness.folder.appendingPathComponent("sources", isDirectory: true)
            try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
            var outsideKeys: [String] = []
            var counter = 0
            let date = Date(timeIntervalSince1970: 1_700_000_000)
            for _ in 0..<60 {
                counter += 1
                let library = libraries[random.below(3)]
                let visible = try library.fetchAssets(FetchOptions(includeHiddenAssets: true)).map { $0 }
                let trashed = try library.fetchAssets(
                    FetchOptions(predicate: .isTrashed(true), includeHiddenAssets: true, includeTrashedAssets: true)
                ).map { $0 }
                switch random.below(12) {
                case 0, 1:
                    // Imports: sometimes bytes or a name another device may import too.
                    let shared = random.below(3) == 0
                    let bytes = testBytes(
                        count: 500 + random.below(4000),
                        seed: shared ? UInt64(random.below(3)) : seed << 32 + UInt64(counter))
                    let name = random.below(3) == 0 ? "IMG_\(random.below(3)).JPG" : "file\(counter).jpg"
                    let url = sources.appendingPathComponent("\(counter)-\(name)")
                    try bytes.write(to: url)
                    let source = url
                    try await library.performChanges { changes in
                        changes.createAsset(
                            fromFileAt: source, options: AssetCreationOptions(creationDate: date, bucketPath: name))
                    }
                case 2:
                    if let asset = random.pick(visible) {
                        try await library.performChanges { $0.deleteAssets([asset]) }
                    }
                case 3:
                    if let asset = random.pick(trashed) {
                        try await library.performChanges { $0.restoreAssets([asset]) }
                    }
                case 4:
                    let flag = random.below(2) == 0
                    if let asset = random.pick(visible) {
                        try await library.performChanges { $0.setFavorite(flag, for: [asset]) }
                    }
                case 5:
                    let flag = random.below(2) == 0
                    if let asset = random.pick(visible) {
                        try await library.performChanges { $0.setHidden(flag, for: [asset]) }
                    }
                case 6:
                    let title = "t\(random.below(4))"
                    if let asset = random.pick(visible) {
                        try await library.performChanges { $0.setTitle(title, for: asset) }
                    }
                case 7:
                    let keywords = (0..<random.below(3)).map { "k\($0 + random.below(3))" }
                    if let asset = random.pick(visible) {
                        try await library.performChanges { $0.setKeywords(keywords, for: asset) }
                    }
                case 8:
                    // Another tool writes an object.
                    let key = "originals/outside/o\(counter).jpg"
                    try harness.server.putObject(
                        bucket: LibraryHarness.bucket, key: key, data: testBytes(count: 300, seed: UInt64(counter)))
                    outsideKeys.append(key)
                case 9:
                    // Another tool deletes or renames (copy, then delete) an object it wrote.
                    if let key = random.pick(outsideKeys) {
                        outsideKeys.removeAll { $0 == key }
                        if random.below(2) == 0,
                            let data = try harness.server.objectData(bucket: LibraryHarness.bucket, key: key)
                        {
                            let renamed = "originals/outside/renamed\(counter).jpg"
                            try harness.server.putObject(bucket: LibraryHarness.bucket, key: renamed, data: data)
                            outsideKeys.append(renamed)
                        }
                        try harness.server.deleteObject(bucket: LibraryHarness.bucket, key: key)
                    }
                default:
                    let modes: [SyncMode] = [.automatic, .incremental, .full]
                    try await library.sync(mode: modes[random.below(3)], fetchThumbnails: false)
                }
            }
            // One full round finds what the outside writer did (it writes no journal); the libraries' own
            // changes of that round reach the others through the journal alone.
            for library in libraries { try await library.sync(mode: .full, fetchThumbnails: false) }
            for library in libraries { try await library.sync(mode: .incremental, fetchThumbnails: false) }
            var views: [[SharedView]] = []
            for library in libraries {
                let all = try library.fetchAssets(
                    FetchOptions(sortBy: [.key()], includeHiddenAssets: true, includeTrashedAssets: true))
                #expect(all.allSatisfy { $0.uploadState == .uploaded })
                views.append(all.map(SharedView.init))
            }
            #expect(views[0] == views[1], "a and b differ: \(Set(views[0]).symmetricDifference(views[1]))")
            #expect(views[0] == views[2], "a and c differ: \(Set(views[0]).symmetricDifference(views[2]))")
            let keys = try harness.server.keys(bucket: LibraryHarness.bucket, prefix: "originals/")
            #expect(views[0].map(\.key) == keys)
        }
    }
}
