import AssetStore
import Foundation
import Testing

@testable import CloudAssets

/// The catalog engine on its own (no library around it): commits delivered in commit order, other writers'
/// commits from the history, and nothing after close.
@Suite("Catalog engine: commit order and delivery")
struct CatalogEngineTests {
    static func catalog(_ folder: LibraryFolder) throws -> Catalog {
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let configuration = folder.configuration()
        return Catalog(store: try AssetStore(folder: folder.url, historyLimit: 100), configuration: configuration)
    }

    @Test("each commit that changes something is one change, delivered in commit order; an empty one is none")
    func commitsAreDeliveredInOrder() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let catalog = try Self.catalog(folder)
        let observer = RecordingObserver()
        catalog.observers.register(observer, queue: nil)
        let a = try await catalog.performWrite { try $0.insert(testRecord("a", day: 1)) }
        try await catalog.performWrite { _ in }  // changes nothing
        let b = try await catalog.performWrite { try $0.insert(testRecord("b", day: 2)) }
        try await catalog.performWrite { tx in _ = try tx.update(a) { $0.isFavorite = true } }
        await observer.waitFor(3)
        let changes = observer.changes
        #expect(changes.count == 3)
        #expect(changes.map(\.token) == changes.map(\.token).sorted())
        #expect(changes[0].insertedIdentifiers == [String(a)])
        #expect(changes[1].insertedIdentifiers == [String(b)])
        #expect(changes[2].updatedIdentifiers == [String(a)])
        catalog.close()
    }

    @Test(
        "writes from async code wait on the catalog's writer, never on a thread of the cooperative pool",
        .timeLimit(.minutes(1)))
    func asyncWritesLeaveTheCooperativePoolFree() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let catalog = try Self.catalog(folder)
        defer { catalog.close() }
        // The body runs on the writer's queue (checked first: without it the part below would hang, not fail).
        let onWriter = try await catalog.performWrite { _ in catalog.writer.isCurrent }
        #expect(onWriter)
        guard onWriter else { return }
        let width = ProcessInfo.processInfo.activeProcessorCount
        // One write holds the commit lock until released; more writes than the pool has threads queue behind it.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let held = Task {
            try await catalog.performWrite { tx in
                entered.signal()
                release.wait()
                _ = try tx.insert(testRecord("held", day: 1))
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                entered.wait()
                continuation.resume()
            }
        }
        let queued = (0..<(width + 2)).map { n in
            Task { try await catalog.performWrite { tx in _ = try tx.insert(testRecord("queued-\(n)", day: 2)) } }
        }
        // With every queued write blocking a pool thread, this task could not run before the release: a hang.
        let poolStillRuns = await Task { true }.value
        #expect(poolStillRuns)
        release.signal()
        try await held.value
        for write in queued { try await write.value }
        #expect(try catalog.store.count == width + 3)
    }

    @Test("another catalog's commits on the folder are delivered from the history, before this one's next")
    func otherWritersCommitsComeFirst() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let mine = try Self.catalog(folder)
        let other = Catalog(
            store: try AssetStore(folder: folder.url, historyLimit: 100), configuration: folder.configuration())
        let observer = RecordingObserver()
        mine.observers.register(observer, queue: nil)
        let theirs = try await other.performWrite { try $0.insert(testRecord("theirs")) }
        let own = try await mine.performWrite { try $0.insert(testRecord("mine")) }
        await observer.waitFor(2)
        #expect(observer.changes.map(\.insertedIdentifiers) == [[String(theirs)], [String(own)]])
        mine.close()
        other.close()
    }

    @Test("after close a write throws closed, changes nothing and delivers nothing")
    func closedTakesNoWrite() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let catalog = try Self.catalog(folder)
        #expect(catalog.close())
        #expect(!catalog.close())
        #expect(throws: AssetLibraryError.self) { try catalog.performWrite { try $0.insert(testRecord("late")) } }
        #expect(try catalog.store.fetchIDs(StoreQuery()).isEmpty)
    }
}
