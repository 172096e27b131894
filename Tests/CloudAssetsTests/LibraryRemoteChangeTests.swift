import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// Re-syncing after the bucket changed: content changes, deletions, additions, and nothing at all.
@Suite("Library: remote changes on re-sync", .heavy, .timeLimit(.minutes(1)))
struct LibraryRemoteChangeTests {
    @Test("a changed ETag is a content change: the local original goes and the asset falls back to thumbnail")
    func changedETagIsContentChange() async throws {
        try await withHarness { harness in
            let old = testBytes(count: 30_000, seed: 70)
            let new = testBytes(count: 31_000, seed: 71)
            try harness.put("a.png", data: old, thumbnail: testBytes(count: 40, seed: 72))
            try harness.put("b.png", data: testBytes(count: 1000, seed: 73))
            let library = try await harness.open()
            try await library.sync()
            let a = try library.asset(path: "a.png")
            #expect(try await library.data(for: a, options: AssetLibrary.networkOptions()) == old)
            let fullA = try library.current(a)
            let file = harness.storeURL.appendingPathComponent("originals/\(a.id).png").path
            #expect(FileManager.default.fileExists(atPath: file))
            var reader = ChangeReader(observing: library)
            let all = try library.fetchAssets(FetchOptions(sortBy: [.key()]))

            let newETag = try harness.put("a.png", data: new)
            let summary = try await library.sync()
            #expect(summary.contentChanged == 1)
            #expect(summary.inserted == 0)
            #expect(summary.removed == 0)
            #expect(summary.headRequests == 1)
            let change = try await reader.next()
            let details = try #require(change.details(for: fullA))
            #expect(details.assetContentChanged)
            #expect(details.objectBeforeChanges.availability == .full)
            #expect(details.objectAfterChanges?.availability == .thumbnail)
            #expect(details.objectAfterChanges?.size == 31_000)
            #expect(change.contentChangedIdentifiers == [a.id])
            #expect(change.details(for: all)?.changedIndexes == IndexSet(integer: 0))
            #expect(!FileManager.default.fileExists(atPath: file))
            let current = try library.current(a)
            #expect(current.etag.contains(newETag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))))

            // The new bytes are downloaded on the next request.
            #expect(try await library.data(for: a, options: AssetLibrary.networkOptions()) == new)
        }
    }

    @Test("a deleted object is removed from the catalog and from every fetch result")
    func deletedObjectIsRemoved() async throws {
        try await withHarness { harness in
            for (index, name) in ["a.png", "b.png", "c.png"].enumerated() {
                try harness.put(
                    name, data: testBytes(count: 2000, seed: 80 + UInt64(index)),
                    thumbnail: testBytes(count: 30, seed: 90 + UInt64(index)))
            }
            let library = try await harness.open()
            try await library.sync()
            let b = try library.asset(path: "b.png")
            _ = try await library.data(for: b, options: AssetLibrary.networkOptions())
            var reader = ChangeReader(observing: library)
            let all = try library.fetchAssets(FetchOptions(sortBy: [.key()]))
            #expect(all.map(\.key) == ["originals/a.png", "originals/b.png", "originals/c.png"])

            try harness.server.deleteObject(bucket: LibraryHarness.bucket, key: "originals/b.png")
            try harness.server.deleteObject(bucket: LibraryHarness.bucket, key: "thumbnails/b.png.jpg")
            let summary = try await library.sync()
            #expect(summary.removed == 1)
            let change = try await reader.next()
            let details = try #require(change.details(for: all))
            #expect(details.removedIndexes == IndexSet(integer: 1))
            #expect(details.insertedIndexes == IndexSet())
            #expect(details.fetchResultAfterChanges.map(\.key) == ["originals/a.png", "originals/c.png"])
            #expect(change.details(for: b)?.objectWasDeleted == true)
            #expect(try library.asset(withLocalIdentifier: b.localIdentifier) == nil)
            for folder in ["originals/\(b.id).png", "thumbnails/\(b.id).jpg"] {
                #expect(!FileManager.default.fileExists(atPath: harness.storeURL.appendingPathComponent(folder).path))
            }
        }
    }

    @Test("a new object is inserted by the next sync, in sort order")
    func newObjectIsInserted() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 100, seed: 100))
            try harness.put("c.png", data: testBytes(count: 100, seed: 101))
            let library = try await harness.open()
            try await library.sync()
            var reader = ChangeReader(observing: library)
            let all = try library.fetchAssets(FetchOptions(sortBy: [.key()]))
            try harness.put("b.png", data: testBytes(count: 100, seed: 102))
            let summary = try await library.sync()
            #expect(summary.inserted == 1)
            #expect(summary.headRequests == 1)
            let details = try #require(try await reader.next().details(for: all))
            #expect(details.insertedIndexes == IndexSet(integer: 1))
            #expect(details.insertedObjects.map(\.key) == ["originals/b.png"])
            #expect(details.insertedObjects.first?.availability == .cloudOnly)
        }
    }

    @Test("re-syncing an unchanged bucket writes nothing and notifies no one")
    func unchangedResyncMakesNoWrites() async throws {
        try await withHarness { harness in
            for index in 0..<5 {
                try harness.put(
                    "p\(index).png", data: testBytes(count: 500, seed: 110 + UInt64(index)),
                    thumbnail: index.isMultiple(of: 2) ? testBytes(count: 20, seed: UInt64(index)) : nil)
            }
            let library = try await harness.open()
            let first = try await library.sync()
            #expect(first.inserted == 5)
            #expect(first.thumbnailsFetched == 3)
            let token = library.currentChangeToken
            var reader = ChangeReader(observing: library)
            let requests = harness.log.count

            let second = try await library.sync()
            #expect(second.transactions == 0)
            #expect(second.inserted == 0)
            #expect(second.contentChanged == 0)
            #expect(second.metadataChanged == 0)
            #expect(second.removed == 0)
            #expect(second.headRequests == 0)
            #expect(second.thumbnailsFetched == 0)
            #expect(second.listed == 5)
            #expect(library.currentChangeToken == token)
            // Only listings went out: no HEAD, no object GET.
            #expect(harness.log[requests...].allSatisfy { $0.method == "GET" && ($0.key ?? "").isEmpty })
            #expect(
                !FileManager.default.fileExists(atPath: harness.storeURL.appendingPathComponent("sync-state.json").path)
            )

            // The next change observers get is the next write, not something from the sync.
            let asset = try library.asset(path: "p0.png")
            try library.pin([asset])
            let next = try await reader.next()
            #expect(next.token == library.currentChangeToken)
            #expect(next.updatedIdentifiers == [asset.id])
            #expect(next.insertedIdentifiers.isEmpty && next.deletedIdentifiers.isEmpty)
        }
    }
}
