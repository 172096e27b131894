import AssetStore
import Dispatch
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

@Suite(.heavy) struct ObserverTests {
    @Test func everyObserverGetsOneChangePerTransactionInCommitOrder() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration())
        let onDeliveryQueue = RecordingObserver()
        let onOwnQueue = RecordingObserver()
        library.register(onDeliveryQueue)
        library.register(onOwnQueue, queue: DispatchQueue(label: "observer"))
        // 40 transactions committed from two threads at once.
        DispatchQueue.concurrentPerform(iterations: 40) { index in
            _ = try? library.catalog.performWrite { tx in
                try tx.insert(testRecord("a\(index)"))
                try tx.insert(testRecord("b\(index)"))
            }
        }
        await onDeliveryQueue.waitFor(40)
        await onOwnQueue.waitFor(40)
        for observer in [onDeliveryQueue, onOwnQueue] {
            #expect(observer.changes.map(\.token.rawValue) == Array(1...40))
            #expect(observer.changes.allSatisfy { $0.insertedIdentifiers.count == 2 })
        }
        await library.drainDeliveries()
        #expect(onDeliveryQueue.changes.count == 40)
    }

    @Test func emptyOrFailedTransactionsAreNotDelivered() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration())
        let observer = RecordingObserver()
        library.register(observer)
        try await library.catalog.performWrite { _ in }
        #expect(throws: AssetStoreError.self) {
            try library.catalog.performWrite { tx in
                try tx.insert(testRecord("x"))
                try tx.insert(testRecord("x"))
            }
        }
        try await library.catalog.performWrite { tx in _ = try tx.insert(testRecord("y")) }
        await observer.waitFor(1)
        await library.drainDeliveries()
        #expect(observer.changes.map(\.token.rawValue) == [1])
    }

    @Test func nothingIsDeliveredAfterUnregistering() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration())
        let leaving = RecordingObserver()
        let staying = RecordingObserver()
        let leavingQueue = DispatchQueue(label: "leaving")
        library.register(leaving, queue: leavingQueue)
        library.register(staying)
        try await library.catalog.performWrite { tx in _ = try tx.insert(testRecord("1")) }
        await leaving.waitFor(1)
        library.unregister(leaving)
        try await library.catalog.performWrite { tx in _ = try tx.insert(testRecord("2")) }
        await staying.waitFor(2)
        await library.drainDeliveries()
        leavingQueue.sync {}
        #expect(leaving.changes.count == 1)
    }

    @Test func aDeallocatedObserverIsDroppedSilently() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration())
        weak var gone: RecordingObserver?
        do {
            let temporary = RecordingObserver()
            gone = temporary
            library.register(temporary)
        }
        #expect(gone == nil)
        let staying = RecordingObserver()
        library.register(staying)
        try await library.catalog.performWrite { tx in _ = try tx.insert(testRecord("1")) }
        await staying.waitFor(1)
        await library.drainDeliveries()
        #expect(library.catalog.observers.registeredCount == 1)
    }

    @Test func changeStreamsDeliverInCommitOrderAndFinishOnClose() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration())
        let stream = library.changes
        for index in 0..<5 {
            try await library.catalog.performWrite { tx in _ = try tx.insert(testRecord("\(index)")) }
        }
        library.close()
        var tokens: [Int64] = []
        for await change in stream { tokens.append(change.token.rawValue) }
        #expect(tokens == [1, 2, 3, 4, 5])
    }

    @Test func detailsAreNilForAFetchResultTheChangeDidNotAffect() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration())
        try await library.catalog.performWrite { tx in
            _ = try tx.insert(testRecord("fav", favorite: true))
            _ = try tx.insert(testRecord("plain"))
        }
        let favorites = try library.fetchAssets(FetchOptions(predicate: .isFavorite(true)))
        let everything = try library.fetchAssets()
        let observer = RecordingObserver()
        library.register(observer)
        try await library.catalog.performWrite { tx in _ = try tx.insert(testRecord("other")) }
        await observer.waitFor(1)
        let change = try #require(observer.changes.first)
        #expect(change.details(for: favorites) == nil)
        let details = try #require(change.details(for: everything))
        #expect(details.insertedIndexes == IndexSet([2]))
        #expect(details.fetchResultAfterChanges.count == 3)
        #expect(change.details(for: favorites[0]) == nil)
    }

    @Test func objectDetailsDescribeUpdatesAndDeletions() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration())
        let (a, b) = try await library.catalog.performWrite { tx in
            (try tx.insert(testRecord("a")), try tx.insert(testRecord("b")))
        }
        let result = try library.fetchAssets()
        let observer = RecordingObserver()
        library.register(observer)
        try await library.catalog.performWrite { tx in
            try tx.update(a) { $0.etag = "new" }
            try tx.delete(b)
        }
        await observer.waitFor(1)
        let change = try #require(observer.changes.first)
        let updated = try #require(change.details(for: result[0]))
        #expect(updated.assetContentChanged && !updated.objectWasDeleted)
        #expect(updated.objectBeforeChanges.etag == "e-a" && updated.objectAfterChanges?.etag == "new")
        let deleted = try #require(change.details(for: result[1]))
        #expect(deleted.objectWasDeleted && deleted.objectAfterChanges == nil)
        let details = try #require(change.details(for: result))
        #expect(details.removedIndexes == IndexSet([1]) && details.changedIndexes == IndexSet([0]))
        #expect(details.removedObjects.map(\.key) == ["originals/b"])
        #expect(details.changedObjects.map(\.etag) == ["new"])
    }
}

@Suite(.heavy) struct HistoryTests {
    @Test func restartKeepsAssetsStatesAndHistory() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let id: Int64
        do {
            let library = try await AssetLibrary(configuration: folder.configuration())
            id = try await library.catalog.performWrite { tx in try tx.insert(testRecord("a", day: 3)) }
            try await library.catalog.performWrite { tx in
                try tx.update(id) {
                    $0.thumbnailPresent = true
                    $0.availability = .thumbnail
                    $0.isPinned = true
                }
            }
            try await library.catalog.performWrite { tx in _ = try tx.insert(testRecord("b", day: 1)) }
            // The thumbnail's bytes are on disk, so reopening (which checks files against states) keeps it.
            try library.cache.files.createFolders()
            try Data([0xFF, 0xD8]).write(to: library.cache.files.thumbnail(id: id))
            library.close()
        }
        let library = try await AssetLibrary(configuration: folder.configuration())
        let asset = try #require(try library.asset(withLocalIdentifier: String(id)))
        #expect(asset.availability == .thumbnail && asset.hasThumbnail && asset.isPinned)
        #expect(library.currentChangeToken == ChangeToken(rawValue: 3))
        let history = try library.changes(since: ChangeToken(rawValue: 1))
        #expect(history.map(\.token.rawValue) == [2, 3])
        #expect(history[0].updatedIdentifiers == [String(id)])
        // A history change still describes a fetch result from before it (using current records).
        let sorted = try library.fetchAssets(FetchOptions(sortBy: [.creationDate()]))
        #expect(sorted.map(\.key) == ["originals/b", "originals/a"])
        #expect(history[0].details(for: sorted)?.changedIndexes == IndexSet([1]))
    }

    @Test func tokensOlderThanTheHistoryLimitHaveExpired() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration(historyLimit: 2))
        for index in 0..<4 {
            try await library.catalog.performWrite { tx in _ = try tx.insert(testRecord("\(index)")) }
        }
        #expect(try library.changes(since: ChangeToken(rawValue: 2)).count == 2)
        let expired = expectError(.historyUnavailable) {
            _ = try library.changes(since: ChangeToken(rawValue: 1))
        }
        #expect(expired?.underlyingError as? AssetStoreError == .historyExpired(token: 1, oldestAvailable: 2))
    }
}

@Suite(.heavy) struct StoreLockTests {
    @Test func aSecondLibraryOpensTheSameFolderAndTheFirstStillClosesCleanly() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let first = try await AssetLibrary(configuration: folder.configuration())
        let beside = try await AssetLibrary(configuration: folder.configuration())
        #expect(try beside.fetchAssets().isEmpty)
        beside.close()
        first.close()
        expectError(.libraryClosed) { _ = try first.fetchAssets() }
        let second = try await AssetLibrary(configuration: folder.configuration())
        #expect(try second.fetchAssets().isEmpty)
    }
}
