import AssetStore
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

@Suite(.heavy) struct ChangeListUpdateTests {
    @Test func stepsFollowApplesOrderAndSkipReloadsOfMovedOrInsertedRows() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration())
        let ids = try await library.catalog.performWrite { tx in
            try (0..<6).map { try tx.insert(testRecord("\($0)", day: $0)) }
        }
        let before = try library.fetchAssets(FetchOptions(sortBy: [.creationDate()]))
        let observer = RecordingObserver()
        library.register(observer)
        try await library.catalog.performWrite { tx in
            try tx.delete(ids[1])
            try tx.delete(ids[3])
            _ = try tx.insert(testRecord("new", day: 2))
            try tx.update(ids[0]) { $0.creationDate = day(10) }  // moves to the end, and changed
            try tx.update(ids[4]) { $0.isFavorite = true }  // changed in place
        }
        await observer.waitFor(1)
        let details = try #require(observer.changes[0].details(for: before))
        let update = ListUpdate(details)
        #expect(!update.reloadsAll)
        #expect(update.deletes == [3, 1])
        #expect(update.deletes == update.deletes.sorted(by: >))
        #expect(update.inserts == update.inserts.sorted())
        let after = Array(details.fetchResultAfterChanges.identifiers)
        #expect(update.reloads.map { after[$0] } == [ids[4]])
        var rows = Array(before.identifiers)
        update.apply(to: &rows, afterCount: after.count) { after[$0] }
        #expect(rows == after)
    }

    @Test func aChangeLargerThanTheIncrementalLimitAsksForAFullReload() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration(maxIncrementalChangeCount: 3))
        let before = try library.fetchAssets()
        let observer = RecordingObserver()
        library.register(observer)
        try await library.catalog.performWrite { tx in for index in 0..<4 { _ = try tx.insert(testRecord("\(index)")) }
        }
        await observer.waitFor(1)
        let details = try #require(observer.changes[0].details(for: before))
        #expect(!details.hasIncrementalChanges)
        #expect(details.insertedIndexes == nil && details.removedIndexes == nil && !details.hasMoves)
        #expect(details.fetchResultAfterChanges.count == 4)
        #expect(ListUpdate(details).reloadsAll)
    }
}
