import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// The cache of originals: size limit with LRU eviction, explicit eviction, pinning, prefetching.
@Suite("Library: cache, eviction and pinning", .heavy, .timeLimit(.minutes(1)))
struct LibraryCacheTests {
    static let size = 100_000

    /// Puts `names` (each `size` bytes, with a thumbnail), opens a library with `limit` and syncs it.
    static func library(
        _ harness: LibraryHarness, names: [String], limit: Int64?
    ) async throws -> (AssetLibrary, [String: Data]) {
        var contents: [String: Data] = [:]
        for (index, name) in names.enumerated() {
            let data = testBytes(count: size, seed: 50 + UInt64(index))
            contents[name] = data
            try harness.put(name, data: data, thumbnail: testBytes(count: 64, seed: 60 + UInt64(index)))
        }
        var configuration = harness.configuration()
        configuration.cacheSizeLimit = limit
        let library = try await harness.open(configuration)
        try await library.sync()
        return (library, contents)
    }

    static func originalFile(_ harness: LibraryHarness, _ asset: Asset) -> String {
        harness.storeURL.appendingPathComponent("originals/\(asset.id).png").path
    }

    @Test("past the cache limit the least recently used original is evicted, with a change notification")
    func cacheLimitEvictsLeastRecentlyUsed() async throws {
        try await withHarness { harness in
            let (library, contents) = try await Self.library(
                harness, names: ["a.png", "b.png", "c.png"], limit: Int64(Self.size * 5 / 2))
            let a = try library.asset(path: "a.png")
            let b = try library.asset(path: "b.png")
            let c = try library.asset(path: "c.png")
            let network = AssetLibrary.networkOptions()
            _ = try await library.data(for: a, options: network)
            _ = try await library.data(for: b, options: network)
            var reader = ChangeReader(observing: library)

            #expect(try await library.data(for: c, options: network) == contents["c.png"])
            let eviction = try await reader.next { $0.details(for: a) != nil }
            let details = try #require(eviction.details(for: a))
            #expect(details.objectBeforeChanges.availability == .full)
            #expect(details.objectAfterChanges?.availability == .thumbnail)
            #expect(try library.current(a).availability == .thumbnail)
            #expect(try library.current(b).availability == .full)
            #expect(try library.current(c).availability == .full)
            #expect(!FileManager.default.fileExists(atPath: Self.originalFile(harness, a)))
            let usage = try library.cacheUsage()
            #expect(usage.bytes == Int64(2 * Self.size))
            #expect(usage.fullAssets == 2)

            // Using b makes c the least recently used: fetching a again evicts c, not b.
            #expect(try await library.data(for: b) == contents["b.png"])
            #expect(try await library.data(for: a, options: network) == contents["a.png"])
            #expect(try library.current(c).availability == .thumbnail)
            #expect(try library.current(b).availability == .full)
            #expect(try library.current(a).availability == .full)
            #expect(harness.gets(of: "b.png").count == 1)
        }
    }

    @Test("ranged reads count against the cache limit and can evict least recently used originals")
    func rangedReadsEnforceTheCacheLimit() async throws {
        try await withHarness { harness in
            let (library, contents) = try await Self.library(
                harness, names: ["a.png", "b.png"], limit: Int64(Self.size * 3 / 2))
            let a = try library.asset(path: "a.png")
            let b = try library.asset(path: "b.png")
            _ = try await library.data(for: a, options: AssetLibrary.networkOptions())
            let bytes = try await library.read(b, range: 0..<Int64(Self.size * 4 / 5))
            #expect(bytes == contents["b.png"]![0..<(Self.size * 4 / 5)])
            #expect(try library.current(a).availability == .thumbnail)
            #expect(try library.current(b).availability == .partial)
            #expect(try library.cacheUsage().bytes == Int64(Self.size * 4 / 5))
        }
    }

    @Test("a pinned original is downloaded eagerly and never evicted; unpinned it can be")
    func pinnedOriginalsAreNeverEvicted() async throws {
        try await withHarness { harness in
            let (library, _) = try await Self.library(
                harness, names: ["a.png", "b.png", "c.png", "d.png"], limit: Int64(Self.size * 5 / 2))
            let a = try library.asset(path: "a.png")
            var reader = ChangeReader(observing: library)

            try library.pin([a])
            _ = try await reader.next { $0.details(for: a)?.objectAfterChanges?.availability == .full }
            #expect(try library.current(a).isPinned)
            #expect(harness.gets(of: "a.png").count == 1)

            let network = AssetLibrary.networkOptions()
            for name in ["b.png", "c.png", "d.png"] {
                _ = try await library.data(for: try library.asset(path: name), options: network)
                #expect(try library.current(a).availability == .full)
            }
            #expect(try library.asset(path: "b.png").availability == .thumbnail)
            #expect(try library.asset(path: "c.png").availability == .thumbnail)
            #expect(try library.asset(path: "d.png").availability == .full)
            #expect(FileManager.default.fileExists(atPath: Self.originalFile(harness, a)))

            expectError(.assetPinned) { try library.evict([a]) }
            #expect(try library.current(a).availability == .full)
            try library.unpin([a])
            #expect(try library.current(a).isPinned == false)
            try library.evict([a])
            #expect(try library.current(a).availability == .thumbnail)
            #expect(!FileManager.default.fileExists(atPath: Self.originalFile(harness, a)))
        }
    }

    @Test("evict removes the original and partial ranges, and the asset falls back to its thumbnail")
    func evictFallsBackToThumbnail() async throws {
        try await withHarness { harness in
            let (library, contents) = try await Self.library(harness, names: ["a.png", "b.png"], limit: nil)
            let a = try library.asset(path: "a.png")
            let b = try library.asset(path: "b.png")
            _ = try await library.data(for: a, options: AssetLibrary.networkOptions())
            _ = try await library.read(b, range: 0..<500)
            var reader = ChangeReader(observing: library)
            let all = try library.fetchAssets(FetchOptions(sortBy: [.key()]))

            try library.evict([a])
            let change = try await reader.next()
            let details = try #require(change.details(for: all))
            #expect(details.changedIndexes == IndexSet(integer: 0))
            #expect(details.fetchResultAfterChanges[0].availability == .thumbnail)
            try library.evict([b])
            _ = try await reader.next()
            #expect(try library.current(b).availability == .thumbnail)
            #expect(try library.current(b).partialRanges.isEmpty)
            #expect(try library.cacheUsage().bytes == 0)

            // Evicted originals are fetched again on request.
            #expect(try await library.data(for: a, options: AssetLibrary.networkOptions()) == contents["a.png"])
            #expect(harness.gets(of: "a.png").count == 2)
        }
    }

    @Test("startCaching prefetches originals; each completion is a change")
    func startCachingPrefetchesOriginals() async throws {
        try await withHarness { harness in
            let (library, contents) = try await Self.library(harness, names: ["a.png", "b.png", "c.png"], limit: nil)
            let a = try library.asset(path: "a.png")
            let b = try library.asset(path: "b.png")
            var reader = ChangeReader(observing: library)
            library.startCaching([a, b])
            var full: Set<String> = []
            while full.count < 2 {
                let change = try await reader.next()
                for asset in [a, b] where change.details(for: asset)?.objectAfterChanges?.availability == .full {
                    full.insert(asset.localIdentifier)
                }
            }
            let requests = harness.log.count
            #expect(try await library.data(for: a) == contents["a.png"])
            #expect(try await library.data(for: b) == contents["b.png"])
            #expect(harness.log.count == requests)
            #expect(try library.asset(path: "c.png").availability == .thumbnail)
        }
    }

    @Test("asset counts: every state, pinned and trashed apart, as a full read of the catalog counts them")
    func assetCountsMatchTheCatalog() async throws {
        try await withHarness { harness in
            for name in ["a.png", "b.png", "c.png", "d.png"] {
                try harness.put(name, data: testBytes(count: 300, seed: UInt64(name.utf8.first!)))
            }
            var configuration = harness.configuration()
            configuration.startsBackgroundTransfers = false
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            _ = try await library.data(for: try library.asset(path: "a.png"), options: options)
            try library.pin([try library.asset(path: "b.png")])
            try await library.performChanges { $0.deleteAssets([try! library.asset(path: "d.png")]) }
            let counts = try library.assetCounts()
            #expect(counts.byAvailability == [.full: 1, .cloudOnly: 2, .thumbnail: 0, .partial: 0])
            #expect(counts.total == 3 && counts.pinned == 1 && counts.trashed == 1)
            let all = try library.fetchAssets(FetchOptions(includeHiddenAssets: true))
            #expect(counts.total == all.count)
            #expect(counts.pinned == all.filter(\.isPinned).count)
        }
    }
}
