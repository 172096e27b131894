import Foundation
import Testing

@testable import AssetStore

/// A full disk under the catalog is one typed error, whatever SQLite called it: `SQLITE_FULL`, or an I/O error
/// while the disk has no room (the write-ahead log or its shared-memory index cannot grow).
@Suite("Store: a full disk")
struct StoreDiskFullTests {
    @Test func aWriteBeyondTheRoomLeftIsTheDiskFullErrorAndRollsBack() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        do {
            let probe = try AssetStore(folder: folder.url)
            _ = try probe.write { try $0.insert(sampleRecord(0)) }
        }
        // The same catalog where only a few more pages fit: the first transaction that needs more fails.
        let store = try AssetStore(folder: folder.url, pagesLeft: 4)
        #expect(try store.count == 1)
        var failure: (any Error)?
        var written = 0
        for batch in 0..<200 {
            do {
                _ = try store.write { tx in
                    for index in 0..<50 {
                        _ = try tx.insert(sampleRecord(1 + batch * 50 + index, key: "originals/\(batch)-\(index).jpg"))
                    }
                }
                written += 50
            } catch {
                failure = error
                break
            }
        }
        let error = try #require(failure as? AssetStoreError, "\(String(describing: failure))")
        #expect(error == .diskFull(path: folder.databaseURL.path))
        #expect(error.description.contains("is full") && !error.description.contains("\n"))
        #expect(try store.count == 1 + written, "the failed transaction was rolled back")
    }

    @Test func aNewCatalogOnAFullDiskIsTheDiskFullError() {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        #expect(throws: AssetStoreError.diskFull(path: folder.databaseURL.path)) {
            _ = try AssetStore(folder: folder.url, pagesLeft: 2)
        }
    }

    @Test(arguments: [10, 4874, 778])  // SQLITE_IOERR, _SHMSIZE, _WRITE
    func anIOErrorOnADiskWithNoRoomIsTheDiskFullError(code: Int32) {
        let path = "/library/library.sqlite"
        let full = AssetStore.translate(
            resultCode: code, message: "disk I/O error", description: "SQLite error 10: disk I/O error", path: path,
            availableBytes: { _ in 4096 })
        #expect(full == .diskFull(path: path))
        let roomy = AssetStore.translate(
            resultCode: code, message: "disk I/O error", description: "SQLite error 10: disk I/O error", path: path,
            availableBytes: { _ in 10 << 30 })
        #expect(roomy == .diskFailed(path: path, reason: "disk I/O error"))
        let full13 = AssetStore.translate(
            resultCode: 13, message: "database or disk is full", description: "SQLite error 13", path: path,
            availableBytes: { _ in 10 << 30 })
        #expect(full13 == .diskFull(path: path))
    }
}
