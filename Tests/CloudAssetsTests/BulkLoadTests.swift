import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// A first listing or a bootstrap into an empty catalog loads its rows with the catalog's secondary indexes
/// suspended (building an index from sorted rows is several times faster than growing it row by row): these check
/// that the indexes always come back, whole.
@Suite("Library: bulk loads into an empty catalog", .heavy)
struct BulkLoadTests {
    /// The catalog index definitions a new library starts with.
    private static func freshDefinitions(_ harness: LibraryHarness) async throws -> [String] {
        let library = try await harness.open(
            harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("fresh")))
        return try library.catalog.store.assetIndexDefinitions()
    }

    private static func putOriginals(_ harness: LibraryHarness, count: Int) throws {
        for index in 0..<count {
            // Creation dates out of key order, as a real library's are.
            try harness.put(
                String(format: "%03d.jpg", index), data: testBytes(count: 40, seed: UInt64(index)),
                created: Date(timeIntervalSince1970: 1_700_000_000 + Double(index * 37 % count) * 60))
        }
    }

    @Test("a first listing and a bootstrap end with every catalog index, holding every row they loaded")
    func firstListingAndBootstrapEndIndexed() async throws {
        try await withHarness { harness in
            let definitions = try await Self.freshDefinitions(harness)
            try Self.putOriginals(harness, count: 40)
            let writer = try await harness.journalLibrary("a")
            let listed = try await writer.sync(fetchThumbnails: false)
            #expect(listed.mode == .full && listed.inserted == 40 && listed.wroteCheckpoint)
            #expect(try writer.catalog.store.assetIndexDefinitions() == definitions)

            let reader = try await harness.journalLibrary("b")
            let bootstrap = try await reader.sync(fetchThumbnails: false)
            #expect(bootstrap.checkpointAssets == 40)
            #expect(try reader.catalog.store.assetIndexDefinitions() == definitions)
            let byDate = FetchOptions(sortBy: [.creationDate()])
            let expected = try writer.fetchAssets(byDate).map(\.key)
            #expect(expected.count == 40)
            #expect(try reader.fetchAssets(byDate).map(\.key) == expected)
        }
    }

    @Test("a bootstrap stopped part way starts over into what it left: every asset once, counted as restored")
    func stoppedBootstrapStartsOverIntoWhatItLeft() async throws {
        try await withHarness { harness in
            try Self.putOriginals(harness, count: 40)
            let writer = try await harness.journalLibrary("a")
            #expect(try await writer.sync(fetchThumbnails: false).wroteCheckpoint)
            // What a bootstrap killed after its first transactions leaves: some rows, no journal position.
            let reader = try await harness.journalLibrary("b")
            let left = try (0..<15).map { index in
                try #require(try writer.catalog.store.record(key: String(format: "originals/%03d.jpg", index)))
            }
            _ = try reader.catalog.store.write { tx in for record in left { try tx.insert(record) } }
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.mode == .incremental && summary.checkpointAssets == 40 && summary.inserted == 25)
            #expect(try LibraryHarness.catalog(reader) == (try LibraryHarness.catalog(writer)))
            #expect(try reader.catalog.store.count == 40)
        }
    }

    @Test("a first listing that fails part way builds the indexes again; a killed one's come back at the next open")
    func failedAndKilledLoadsRestoreTheIndexes() async throws {
        try await withHarness { harness in
            let definitions = try await Self.freshDefinitions(harness)
            try Self.putOriginals(harness, count: 10)
            let configuration = harness.quietConfiguration()
            let library = try await harness.open(configuration)
            // Every listing of the originals fails: the sync throws after its bulk load began.
            let fault = harness.server.faults.add(.internalError, keyPattern: "", method: "GET")
            await #expect(throws: CloudAssetsError.self) { try await library.sync(fetchThumbnails: false) }
            harness.server.faults.remove(fault)
            #expect(try library.catalog.store.assetIndexDefinitions() == definitions)
            #expect(try library.catalog.store.count == 0)

            // A process killed during its load leaves them suspended (no sync finishes to build them): the next
            // library to open the folder first builds them before anything reads the catalog.
            try library.catalog.store.suspendIndexesForBulkLoad()
            library.close()
            let reopened = try await harness.open(configuration)
            #expect(try reopened.catalog.store.assetIndexDefinitions() == definitions)
            #expect(try await reopened.sync(fetchThumbnails: false).inserted == 10)
            #expect(try reopened.catalog.store.assetIndexDefinitions() == definitions)
        }
    }
}
