import AssetStore
import Foundation
import Testing

@Suite struct StoreHistoryTests {
    @Test func changesSinceReturnEntriesInOrderAcrossReopen() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        var ids: [Int64] = []
        do {
            let store = try AssetStore(folder: folder.url)
            for index in 0..<3 { ids.append(try store.write { try $0.insert(sampleRecord(index)) }.0) }
            _ = try store.write { tx in try tx.update(ids[0]) { $0.etag = "changed" } }
            _ = try store.write { tx in try tx.delete(ids[1]) }
        }
        let store = try AssetStore(folder: folder.url)
        let entries = try store.changes(since: ChangeToken(rawValue: 2))
        #expect(entries.map(\.token.rawValue) == [3, 4, 5])
        #expect(entries[0].inserted == [ids[2]])
        #expect(entries[1].updated == [ids[0]] && entries[1].contentChanged == [ids[0]])
        #expect(entries[2].deleted == [ids[1]])
        #expect(try store.changes(since: store.currentToken).isEmpty)
    }

    @Test func aTokenOlderThanTheKeptHistoryHasExpired() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url, historyLimit: 3)
        for index in 0..<6 { _ = try store.write { try $0.insert(sampleRecord(index)) } }
        #expect(try store.changes(since: ChangeToken(rawValue: 3)).map(\.token.rawValue) == [4, 5, 6])
        #expect(throws: AssetStoreError.historyExpired(token: 2, oldestAvailable: 3)) {
            _ = try store.changes(since: ChangeToken(rawValue: 2))
        }
        #expect(throws: AssetStoreError.invalidToken(7)) { _ = try store.changes(since: ChangeToken(rawValue: 7)) }
    }
}
