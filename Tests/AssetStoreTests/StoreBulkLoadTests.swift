import AssetStore
import Foundation
import GRDB
import Testing

@Suite struct StoreBulkLoadTests {
    @Test func suspendedIndexesComeBackWithTheirDefinitionsAndTheRowsLoadedMeanwhile() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        let definitions = try store.assetIndexDefinitions()
        #expect(definitions.count >= 8)

        // The dense indexes go (shown assets by date, modification date, date added, content hash); the partial ones
        // of rare states stay.
        #expect(try store.suspendIndexesForBulkLoad() == 4)
        let kept = try store.assetIndexDefinitions()
        #expect(kept.count == definitions.count - 4)
        #expect(
            kept.allSatisfy {
                $0.contains(" WHERE ") && !$0.contains("creationDate") && !$0.contains("SHA256")
                    && !$0.contains("lastModified")
            })
        // Suspending again while suspended drops nothing and keeps the first record of what was dropped.
        #expect(try store.suspendIndexesForBulkLoad() == 0)
        _ = try store.write { tx in
            for index in 0..<500 { try tx.insert(sampleRecord(index)) }
        }
        // Queries answer while the indexes are away, only from the table.
        let query = StoreQuery(sort: [StoreSort(.creationDate), StoreSort(.key)])
        let whileSuspended = try store.fetchIDs(query)
        #expect(whileSuspended.count == 500)

        #expect(try store.restoreSuspendedIndexes() == 4)
        #expect(try store.assetIndexDefinitions() == definitions)
        #expect(try store.restoreSuspendedIndexes() == 0)
        #expect(try store.fetchIDs(query) == whileSuspended)
        // The restored indexes hold every row: SQLite's own check compares each index with the table.
        var configuration = Configuration()
        configuration.readonly = true
        let reader = try DatabaseQueue(path: folder.databaseURL.path, configuration: configuration)
        defer { try? reader.close() }
        let check = try reader.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        #expect(check == ["ok"])
    }

    @Test func indexesSuspendedByAClosedStoreAreRestoredByTheNextOpen() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        var store: AssetStore? = try AssetStore(folder: folder.url)
        let definitions = try store!.assetIndexDefinitions()
        try store!.suspendIndexesForBulkLoad()
        _ = try store!.write { tx in try tx.insert(sampleRecord(1)) }
        store = nil  // as a process killed during its load leaves it
        let reopened = try AssetStore(folder: folder.url)
        #expect(try reopened.assetIndexDefinitions().count == definitions.count - 4)
        #expect(try reopened.restoreSuspendedIndexes() == 4)
        #expect(try reopened.assetIndexDefinitions() == definitions)
    }
}
