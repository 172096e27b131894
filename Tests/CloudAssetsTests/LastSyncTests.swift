import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// One last-sync property: persisted in the library folder, with the sync's summary.
@Suite("Library: the last sync, persisted with its summary", .heavy)
struct LastSyncTests {
    @Test("a sync's date and summary are read back by another library on the folder, after a reopen too")
    func lastSyncIsPersistedWithItsSummary() async throws {
        try await withHarness { harness in
            try harness.put("a.jpg", data: testBytes(count: 100, seed: 1))
            let library = try await harness.open(harness.quietConfiguration())
            #expect(library.lastSync == nil)
            let before = Date()
            let summary = try await library.sync(fetchThumbnails: false)
            let other = try await harness.open(harness.quietConfiguration())
            let last = try #require(other.lastSync)
            #expect(last.summary == summary)
            #expect(last.summary.inserted == 1)
            #expect(last.date >= before.addingTimeInterval(-1))
        }
    }

    @Test("a date written by an earlier version is read, with an empty summary")
    func anEarlierVersionsDateIsRead() async throws {
        try await withHarness { harness in
            let library = try await harness.open(harness.quietConfiguration())
            try Data("1700000000.5".utf8).write(to: harness.storeURL.appendingPathComponent("last-sync.json"))
            let last = try #require(library.lastSync)
            #expect(last.date == Date(timeIntervalSince1970: 1_700_000_000.5))
            #expect(last.summary == SyncSummary())
        }
    }

}

@Suite("Fetching: a predicate on local identifiers", .heavy)
struct IdentifierPredicateTests {
    @Test("identifiers takes Asset.localIdentifier strings; malformed ones match nothing; SQL and matches agree")
    func identifiersTakeLocalIdentifiers() async throws {
        try await withHarness { harness in
            try harness.put("a.jpg", data: testBytes(count: 100, seed: 1))
            try harness.put("b.jpg", data: testBytes(count: 100, seed: 2))
            let library = try await harness.open(harness.quietConfiguration())
            try await library.sync(fetchThumbnails: false)
            let a = try library.asset(path: "a.jpg")
            let b = try library.asset(path: "b.jpg")
            let predicate = AssetPredicate.identifiers([a.localIdentifier, "not-a-number", "999999"])
            let fetched = try library.fetchAssets(FetchOptions(predicate: predicate))
            #expect(fetched.map(\.localIdentifier) == [a.localIdentifier])
            #expect(predicate.matches(a) && !predicate.matches(b))
        }
    }
}
