import AssetStore
import Foundation
import PropertyBased
import TestSupport
import Testing

@Suite(.heavy) struct StoreQueryTests {
    /// A small library with varied properties, shared by the generated queries.
    private static func makeStore(_ folder: TemporaryFolder) throws -> (AssetStore, [AssetRecord]) {
        let store = try AssetStore(folder: folder.url)
        _ = try store.write { tx in
            for index in 0..<60 {
                var record = sampleRecord(index, key: ["a/", "b/", "a/b", "c*"][index % 4] + "\(index % 13)-\(index)")
                record.mediaType = MediaType.allCases[index % 4]
                record.isFavorite = index % 3 == 0
                record.isHidden = index % 7 == 0
                record.size = Int64(index % 9)
                record.creationDate = Date(timeIntervalSinceReferenceDate: Double(index % 11))
                record.pixelWidth = index % 5
                record.lastModified =
                    index % 6 == 0 ? AssetRecord.notListedYet : Date(timeIntervalSinceReferenceDate: Double(index % 8))
                if index % 5 == 0 {
                    record.thumbnailPresent = true
                    record.availability = .thumbnail
                }
                try tx.insert(record)
            }
        }
        return (store, try store.records(ids: try store.fetchIDs(StoreQuery())))
    }

    static let leaf = Gen.oneOf(
        Gen.int(in: 0...3).map { StorePredicate.mediaType([MediaType.allCases[$0]]) },
        Gen.int(in: 0...10).map {
            StorePredicate.creationDate(
                Date(timeIntervalSinceReferenceDate: Double($0))..<Date(timeIntervalSinceReferenceDate: Double($0 + 4)))
        },
        Gen.bool.map { StorePredicate.isFavorite($0) },
        Gen.bool.map { StorePredicate.isHidden($0) },
        Gen.int(in: 0...3).map { StorePredicate.keyPrefix(["a/", "a/b", "c*", "b"][$0]) },
        Gen.int(in: 0...1).map { StorePredicate.availability([StoredAvailability.allCases[$0]]) },
        Gen.int(in: 0...80).array(of: 0...5).map { StorePredicate.ids(Set($0.map(Int64.init))) },
        Gen.int(in: 0...9).map { StorePredicate.field(.addedSince(Date(timeIntervalSinceReferenceDate: Double($0)))) }
    )

    static let predicate = Gen.oneOf(
        leaf,
        leaf.array(of: 0...3).map { StorePredicate.and($0) },
        leaf.array(of: 0...3).map { StorePredicate.or($0) },
        leaf.map { StorePredicate.not($0) }
    )

    static let sort = zip(Gen.int(in: 0...(StoreSortKey.allCases.count - 1)), Gen.bool)
        .map { StoreSort(StoreSortKey.allCases[$0], ascending: $1) }.array(of: 0...2)

    /// SQL and in-memory evaluation select the same rows, and the SQL order is the `precedes` order.
    @Test func compiledQueriesAgreeWithInMemoryEvaluation() async throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let (store, all) = try Self.makeStore(folder)
        await propertyCheck(count: 200, input: Self.predicate, Self.sort) { predicate, sort in
            let query = StoreQuery(predicate: predicate, sort: sort)
            let expected = all.filter(predicate.matches)
                .sorted { query.precedes(query.position(of: $0), query.position(of: $1)) }.map { $0.id! }
            let ids = try store.fetchIDs(query)
            #expect(ids == expected)
            let sorted = try store.fetchSorted(query)
            #expect(Array(sorted.ids) == expected)
        }
    }

    @Test func keysetFetchContinuesAfterAPosition() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let (store, all) = try Self.makeStore(folder)
        let query = StoreQuery(sort: [StoreSort(.size, ascending: false), StoreSort(.key)])
        let ordered = try store.fetchIDs(query)
        let position = query.position(of: all.first { $0.id == ordered[20] }!)
        let next = try store.fetchRecords(query, after: position, excluding: [ordered[22]], limit: 5)
        #expect(next.map(\.id!) == [ordered[21]] + ordered[23..<27])
    }

    @Test func limitAndIdentifierPredicatesWithManyIdentifiers() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let (store, _) = try Self.makeStore(folder)
        let many = Set((0..<1000).map(Int64.init))
        #expect(try store.fetchIDs(StoreQuery(predicate: .ids(many), limit: 10)).count == 10)
        #expect(try store.fetchIDs(StoreQuery(predicate: .ids(many))).count == 60)
    }

    /// What a photo grid asks for — shown assets (not hidden, not trashed) by date, either way — is one scan of
    /// one index, with no table row read and no sort step.
    @Test func shownAssetsByDateScanOneIndexWithoutSorting() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let (store, _) = try Self.makeStore(folder)
        for ascending in [true, false] {
            let query = StoreQuery(
                predicate: .and([.isHidden(false), .isTrashed(false)]),
                sort: [StoreSort(.creationDate, ascending: ascending)])
            let plan = try store.queryPlan(query)
            #expect(plan == ["SCAN asset USING INDEX asset_shown_creationDate"], "\(plan)")
        }
    }

    /// Recently Added — shown assets added since a date, newest first — is a range of the date-added index, read
    /// in its order: the assets added before the date are never visited.
    @Test func recentlyAddedReadsARangeOfTheAddedIndex() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let (store, all) = try Self.makeStore(folder)
        let since = Date(timeIntervalSinceReferenceDate: 5)
        let query = StoreQuery(
            predicate: .and([.field(.addedSince(since)), .isHidden(false), .isTrashed(false)]),
            sort: [StoreSort(.addedDate, ascending: false)])
        let plan = try store.queryPlan(query)
        #expect(plan == ["SEARCH asset USING INDEX asset_added (<expr>>?)"], "\(plan)")
        let expected = all.filter { $0.addedKey >= 5 && !$0.isHidden }
        #expect(Set(try store.fetchIDs(query)) == Set(expected.map { $0.id! }))
        #expect(try store.count(query) == expected.count)
    }

    /// The counts `status` and the cache limit read never visit every row: each is answered from an index (a
    /// count of every asset from the smallest one). A bare `SCAN asset` is a read of the whole table — 200 ms for
    /// `status` on a million assets when the sum of the full originals' sizes missed its partial index.
    @Test func summaryCountsReadIndexesNotEveryRow() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let (store, _) = try Self.makeStore(folder)
        let plans = try store.summaryQueryPlans()
        #expect(plans.count >= 8)
        for (sql, plan) in plans {
            #expect(!plan.contains("SCAN asset"), "\(sql): \(plan)")
            #expect(plan.contains { $0.contains(" INDEX ") }, "\(sql): \(plan)")
        }
    }
}
