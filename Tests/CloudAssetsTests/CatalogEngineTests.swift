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
        let a = try catalog.performWrite { try $0.insert(testRecord("a", day: 1)) }
        try catalog.performWrite { _ in }  // changes nothing
        let b = try catalog.performWrite { try $0.insert(testRecord("b", day: 2)) }
        try catalog.performWrite { tx in _ = try tx.update(a) { $0.isFavorite = true } }
        await observer.waitFor(3)
        let changes = observer.changes
        #expect(changes.count == 3)
        #expect(changes.map(\.token) == changes.map(\.token).sorted())
        #expect(changes[0].insertedIdentifiers == [String(a)])
        #expect(changes[1].insertedIdentifiers == [String(b)])
        #expect(changes[2].updatedIdentifiers == [String(a)])
        catalog.close()
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
        let theirs = try other.performWrite { try $0.insert(testRecord("theirs")) }
        let own = try mine.performWrite { try $0.insert(testRecord("mine")) }
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
