import AssetStore
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

@Suite(.heavy) struct FetchResultTests {
    private func makeLibrary(_ folder: LibraryFolder, count: Int) async throws -> (AssetLibrary, [Int64]) {
        let library = try await AssetLibrary(configuration: folder.configuration())
        let ids = try await library.catalog.performWrite { tx in
            try (0..<count).map { index in
                try tx.insert(
                    testRecord(
                        "\(index)", day: (index * 37) % count, favorite: index % 3 == 0, hidden: index % 10 == 9,
                        size: Int64(index % 5)))
            }
        }
        return (library, ids)
    }

    @Test func subscriptFirstLastAndIterationFollowTheSortOrder() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let (library, _) = try await makeLibrary(folder, count: 600)
        let result = try library.fetchAssets(FetchOptions(sortBy: [.creationDate(ascending: false)]))
        #expect(result.count == 540)  // hidden assets left out by default
        let dates = result.map(\.creationDate)
        #expect(dates == dates.sorted(by: >))
        #expect(result.firstObject == result[0] && result.lastObject == result[539])
        #expect(result.allSatisfy { !$0.isHidden })
        // Pages beyond the first are loaded too, and agree with the identifiers.
        #expect(result.map(\.rowID) == Array(result.identifiers))
    }

    @Test func containsIndexOfAndObjectsAt() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let (library, ids) = try await makeLibrary(folder, count: 30)
        let favorites = try library.fetchAssets(FetchOptions(predicate: .isFavorite(true), sortBy: [.key()]))
        let all = try library.fetchAssets(FetchOptions(includeHiddenAssets: true))
        #expect(all.count == 30)
        for asset in all {
            #expect(favorites.contains(asset) == (asset.isFavorite && !asset.isHidden))
            if let index = favorites.index(of: asset) { #expect(favorites[index].id == asset.id) }
        }
        #expect(favorites.objects(at: IndexSet([0, 2])).map(\.id) == [favorites[0].id, favorites[2].id])
        #expect(favorites.map(\.key) == favorites.map(\.key).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        let picked = try library.fetchAssets(withLocalIdentifiers: [String(ids[4]), "nonsense", String(ids[9])])
        #expect(Array(picked.identifiers) == [ids[4], ids[9]])  // the hidden one included when asked by identifier
        #expect(try library.asset(withLocalIdentifier: "nonsense") == nil)
    }

    @Test("positions by identifier agree whether found by a scan (the first lookups) or by the index (later)")
    func indexOfIdentifierScansThenIndexes() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let (library, ids) = try await makeLibrary(folder, count: 700)
        let result = try library.fetchAssets(FetchOptions(sortBy: [.creationDate()]))
        let order = Array(result.identifiers)
        // More lookups than are answered by scanning, absent identifiers among them.
        let asked = Array(ids.shuffled().prefix(FetchResult.scansBeforeIndex * 3)) + [-1, Int64.max]
        for id in asked {
            #expect(result.index(ofIdentifier: id) == order.firstIndex(of: id), "\(id)")
        }
    }

    @Test func limitAndSortTieBreakAreStable() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let (library, _) = try await makeLibrary(folder, count: 50)
        let limited = try library.fetchAssets(FetchOptions(sortBy: [.size(ascending: false)], limit: 7))
        #expect(limited.count == 7)
        let full = try library.fetchAssets(FetchOptions(sortBy: [.size(ascending: false)]))
        #expect(Array(limited.identifiers) == Array(full.identifiers.prefix(7)))
        // Ties on size are broken by identifier, in the descriptor's direction.
        for (a, b) in zip(full, full.dropFirst()) where a.size == b.size { #expect(a.rowID > b.rowID) }
    }

    @Test func membershipIsASnapshotAndDeletedAssetsBecomePlaceholders() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let (library, ids) = try await makeLibrary(folder, count: 5)
        let result = try library.fetchAssets(FetchOptions(includeHiddenAssets: true))
        try await library.catalog.performWrite { tx in
            try tx.delete(ids[1])
            _ = try tx.insert(testRecord("late"))
        }
        #expect(result.count == 5)
        #expect(result[1].rowID == ids[1] && result[1].key.isEmpty)
        #expect(result[0].key == "originals/0")
    }

    @Test func predicatesEvaluateInMemoryLikeTheStore() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let (library, _) = try await makeLibrary(folder, count: 40)
        let predicates: [AssetPredicate] = [
            .and([.isFavorite(true), .not(.mediaType(.video))]), .or([.keyPrefix("originals/1"), .isHidden(true)]),
            .creationDate(day(3)..<day(9)), .availability([.cloudOnly]), .and([]), .or([]),
        ]
        let everything = try library.fetchAssets(FetchOptions(includeHiddenAssets: true))
        for predicate in predicates {
            let fetched = try library.fetchAssets(FetchOptions(predicate: predicate, includeHiddenAssets: true))
            #expect(Set(fetched.identifiers) == Set(everything.filter(predicate.matches).map(\.rowID)), "\(predicate)")
        }
    }
}
