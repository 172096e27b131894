import AssetStore
import Essentials
import Foundation
import Testing

@Suite struct StoreWriteTests {
    @Test func insertAssignsIncreasingIdentifiersNeverReused() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        let (first, _) = try store.write { try $0.insert(sampleRecord(1)) }
        _ = try store.write { try $0.delete(first) }
        let (second, _) = try store.write { try $0.insert(sampleRecord(1)) }
        #expect(second > first)
    }

    @Test func changeSetRecordsInsertedUpdatedDeletedWithRecords() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        let (ids, first) = try store.write { tx in try (0..<3).map { try tx.insert(sampleRecord($0)) } }
        #expect(first.inserted == Set(ids))
        #expect(first.token == ChangeToken(rawValue: 1))
        let (_, second) = try store.write { tx in
            try tx.update(ids[0]) { $0.isFavorite = true }
            try tx.update(ids[1]) { $0.etag = "other" }
            try tx.delete(ids[2])
        }
        #expect(second.updated == [ids[0], ids[1]])
        #expect(second.contentChanged == [ids[1]])
        #expect(second.deleted == [ids[2]])
        #expect(second.before[ids[0]]?.isFavorite == false)
        #expect(second.after[ids[0]]?.isFavorite == true)
        #expect(second.before[ids[2]]?.key == "originals/2.jpg")
        #expect(second.token == ChangeToken(rawValue: 2))
        #expect(store.currentToken == ChangeToken(rawValue: 2))
    }

    @Test func emptyOrNetZeroTransactionRecordsNothing() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        let (id, _) = try store.write { try $0.insert(sampleRecord(1)) }
        let (_, empty) = try store.write { _ in () }
        #expect(empty.isEmpty)
        let (_, netZero) = try store.write { tx in
            try tx.update(id) { $0.isFavorite = true }
            try tx.update(id) { $0.isFavorite = false }
            let temporary = try tx.insert(sampleRecord(2))
            try tx.delete(temporary)
        }
        #expect(netZero.isEmpty)
        #expect(store.currentToken == ChangeToken(rawValue: 1))
        #expect(try store.changes(since: ChangeToken(rawValue: 1)).isEmpty)
    }

    @Test(
        arguments: [
            { (r: inout AssetRecord) in r.availability = .full },
            { (r: inout AssetRecord) in
                r.availability = .full
                r.localFilePath = "/x"
                r.verifiedSize = r.size
                r.verifiedETag = "stale"
            },
            { (r: inout AssetRecord) in r.availability = .partial },
            { (r: inout AssetRecord) in
                r.availability = .partial
                r.partialRanges = ByteRangeSet([0..<10])
                r.partialETag = "stale"
            },
            { (r: inout AssetRecord) in r.availability = .thumbnail },
            { (r: inout AssetRecord) in r.partialRanges = ByteRangeSet([0..<10]) },
            { (r: inout AssetRecord) in r.localFilePath = "/x" },
            { (r: inout AssetRecord) in r.orientation = 9 },
        ] as [@Sendable (inout AssetRecord) -> Void])
    func invariantViolationsAreRefusedAndRolledBack(breakIt: @Sendable (inout AssetRecord) -> Void) throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        let (id, _) = try store.write { try $0.insert(sampleRecord(1)) }
        let good = try #require(try store.record(id: id))
        #expect(throws: AssetStoreError.self) {
            _ = try store.write { tx in
                try tx.update(id) { $0.isFavorite = true }
                try tx.update(id, breakIt)
            }
        }
        #expect(throws: AssetStoreError.self) {
            var bad = sampleRecord(2)
            breakIt(&bad)
            _ = try store.write { try $0.insert(bad) }
        }
        #expect(try store.record(id: id) == good)
        #expect(try store.count == 1)
        #expect(store.currentToken == ChangeToken(rawValue: 1))
    }

    @Test func validStatesAreAccepted() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        let (id, _) = try store.write { try $0.insert(sampleRecord(1)) }
        _ = try store.write { tx in
            try tx.update(id) {
                $0.thumbnailPresent = true
                $0.availability = .thumbnail
            }
            try tx.update(id) {
                $0.availability = .partial
                $0.partialRanges = ByteRangeSet([0..<10])
                $0.partialETag = $0.etag
            }
            try tx.update(id) {
                $0.availability = .full
                $0.partialRanges = ByteRangeSet()
                $0.partialETag = nil
                $0.localFilePath = "/cache/1"
                $0.verifiedSize = $0.size
                $0.verifiedETag = $0.etag
            }
        }
        #expect(try store.record(id: id)?.availability == .full)
    }

    @Test func duplicateKeyIsATypedError() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        _ = try store.write { try $0.insert(sampleRecord(1)) }
        #expect(throws: AssetStoreError.duplicateKey("originals/1.jpg")) {
            _ = try store.write { try $0.insert(sampleRecord(1)) }
        }
    }

    @Test func upsertOfUnchangedRowsWritesNothing() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        let listing = (0..<50).map { sampleRecord($0) }
        let (firstResults, first) = try store.write { tx in try listing.map { try tx.upsert($0) } }
        #expect(first.inserted.count == 50)
        #expect(firstResults.allSatisfy { if case .inserted = $0 { true } else { false } })
        let bytesBefore = try fileBytes(folder)
        let (again, second) = try store.write { tx in try listing.map { try tx.upsert($0) } }
        #expect(second.isEmpty)
        #expect(again.allSatisfy { if case .unchanged = $0 { true } else { false } })
        #expect(store.currentToken == first.token)
        #expect(try fileBytes(folder) == bytesBefore)
    }

    @Test func upsertWithNewETagDropsTheLocalOriginal() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        var listing = sampleRecord(1)
        listing.thumbnailKey = "thumbnails/1.jpg"
        listing.thumbnailETag = "t1"
        let (id, _) = try store.write { try $0.insert(listing) }
        _ = try store.write { tx in
            try tx.update(id) {
                $0.thumbnailPresent = true
                $0.isFavorite = true
                $0.availability = .full
                $0.localFilePath = "/cache/1"
                $0.verifiedSize = $0.size
                $0.verifiedETag = $0.etag
            }
        }
        listing.etag = "new"
        let (result, changes) = try store.write { try $0.upsert(listing) }
        guard case .updated(let updatedID, let before) = result else {
            Issue.record("expected an update, got \(result)")
            return
        }
        #expect(updatedID == id)
        #expect(before.localFilePath == "/cache/1")
        #expect(changes.contentChanged == [id])
        let after = try #require(try store.record(id: id))
        #expect(after.availability == .thumbnail)
        #expect(after.localFilePath == nil && after.verifiedETag == nil)
        #expect(after.isFavorite)
    }

    /// The metadata fill's write: only the columns a head or an image's headers say, over a row with local state —
    /// the same row an upsert of a listing saying the same would leave; another version is refused, and a read that
    /// says nothing new writes nothing.
    @Test func aMetadataFillWritesWhatAnUpsertWouldAndOnlyItsColumns() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        var listed = sampleRecord(1)
        listed.thumbnailKey = "thumbnails/1.jpg"
        listed.metadataFill = .objectHead
        var stores: [(AssetStore, Int64)] = []
        for store in [store, try AssetStore(folder: folder.url.appendingPathComponent("twin"))] {
            let (id, _) = try store.write { try $0.insert(listed) }
            _ = try store.write { tx in
                try tx.update(id) {
                    $0.isFavorite = true
                    $0.thumbnailPresent = true
                    $0.availability = .full
                    $0.localFilePath = "/cache/1"
                    $0.verifiedSize = $0.size
                    $0.verifiedETag = $0.etag
                    $0.title = "kept"
                }
            }
            stores.append((store, id))
        }
        var read = listed
        read.contentType = "image/jpeg"
        read.creationDate = Date(timeIntervalSinceReferenceDate: 5_000)
        read.modificationDate = Date(timeIntervalSinceReferenceDate: 6_000)
        read.pixelWidth = 4032
        read.pixelHeight = 3000
        read.orientation = 6
        read.location = AssetLocation(latitude: 48.1, longitude: 11.5, altitude: nil)
        read.contentSHA256 = String(repeating: "a", count: 64)
        read.metadataFill = .complete
        // What the fill ignores: the listing's business and the library's own state.
        var stranger = read
        stranger.thumbnailKey = nil
        stranger.lastModified = Date(timeIntervalSinceReferenceDate: 9_999)
        stranger.isFavorite = false
        stranger.title = nil

        let (store1, id1) = stores[0]
        let (result, changes) = try store1.write { tx in
            try tx.fillMetadata(stranger, over: try #require(try tx.record(id1)))
        }
        guard case .updated(let updated, let before) = result else {
            Issue.record("expected an update, got \(result)")
            return
        }
        #expect(updated == id1 && before.metadataFill == .objectHead && changes.updated == [id1])
        #expect(changes.contentChanged.isEmpty)
        let (store2, id2) = stores[1]
        _ = try store2.write { try $0.upsert(read) }
        var filled = try #require(try store1.record(id: id1))
        let upserted = try #require(try store2.record(id: id2))
        #expect(filled.isFavorite && filled.title == "kept" && filled.availability == .full)
        #expect(filled.thumbnailKey == "thumbnails/1.jpg" && filled.thumbnailPresent)
        #expect(filled.lastModified == listed.lastModified && filled.orientation == 6)
        filled.id = upserted.id
        #expect(filled == upserted)

        // Nothing new: nothing written, no change.
        let (again, none) = try store1.write { tx in
            try tx.fillMetadata(read, over: try #require(try tx.record(id1)))
        }
        #expect(again == .unchanged(id1) && none.updated.isEmpty)
        // One field new (only its column is set): that field changes, every other stays.
        var redated = read
        redated.creationDate = Date(timeIntervalSinceReferenceDate: 7_000)
        redated.location = AssetLocation(latitude: 48.1, longitude: 11.6, altitude: nil)
        let (one, _) = try store1.write { tx in
            try tx.fillMetadata(redated, over: try #require(try tx.record(id1)))
        }
        #expect(one.id == id1)
        var expected = try #require(try store1.record(id: id1))
        #expect(expected.creationDate == redated.creationDate && expected.location == redated.location)
        expected.creationDate = read.creationDate
        expected.location = read.location
        var beforeRedate = filled
        beforeRedate.id = id1
        #expect(expected == beforeRedate)
        // Another version: refused, the row as it was.
        var other = read
        other.etag = "replaced"
        #expect(throws: AssetStoreError.self) {
            _ = try store1.write { tx in try tx.fillMetadata(other, over: try #require(try tx.record(id1))) }
        }
        #expect(try store1.record(id: id1)?.etag == listed.etag)
    }

    /// The database and WAL file contents: any write changes one of them.
    @Test func upsertOfARecordWhoseRowWasDeletedInsertsItWithoutLocalState() throws {
        // A sync builds rows from a read; if the row is deleted before its write (a download found the object
        // gone), the stale record must not bring its thumbnail, file or pin back under a new identifier.
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        let (id, _) = try store.write { tx -> Int64 in
            let id = try tx.insert(sampleRecord(7))
            try tx.update(id) { r in
                r.thumbnailKey = "thumbnails/7.jpg"
                r.thumbnailPresent = true
                r.availability = .full
                r.localFilePath = "/library/originals/\(id).jpg"
                r.verifiedSize = r.size
                r.verifiedETag = r.etag
                r.isPinned = true
            }
            return id
        }
        let stale = try #require(try store.record(id: id))
        _ = try store.write { tx in try tx.delete(id) }
        let (result, _) = try store.write { tx in try tx.upsert(stale) }
        guard case .inserted(let newID) = result else {
            Issue.record("expected an insert, got \(result)")
            return
        }
        #expect(newID != id)
        let row = try #require(try store.record(id: newID))
        #expect(row.availability == .cloudOnly)
        #expect(!row.thumbnailPresent && !row.isPinned)
        #expect(row.localFilePath == nil && row.verifiedSize == nil && row.partialRanges.isEmpty)
        #expect(row.thumbnailKey == "thumbnails/7.jpg")  // what the listing says is kept
    }

    @Test func bulkUpsertsAnsweredFromTheKeyIndexAgreeWithPerRowLookups() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url)
        let count = StoreTransaction.keyIndexThreshold + 200
        let base = (0..<count).map { sampleRecord($0) }
        let (inserted, _) = try store.write { tx in try base.map { try tx.upsert($0) } }
        #expect(inserted.allSatisfy { if case .inserted = $0 { true } else { false } })
        #expect(Set(inserted.map(\.id)).count == count)

        let bytesBefore = try fileBytes(folder)
        let (unchanged, none) = try store.write { tx in try base.map { try tx.upsert($0) } }
        #expect(unchanged.map(\.id) == inserted.map(\.id))
        #expect(unchanged.allSatisfy { if case .unchanged = $0 { true } else { false } })
        #expect(none.isEmpty)
        #expect(try fileBytes(folder) == bytesBefore, "an unchanged bulk upsert writes nothing")

        // In one transaction: #5 deleted then listed again, #6 renamed then listed under its old key, every
        // third row with a new ETag, one new key.
        let (results, change) = try store.write { tx -> [UpsertResult] in
            try tx.delete(inserted[5].id)
            try tx.update(inserted[6].id) { $0.key = "renamed/6.jpg" }
            var listing = base
            for index in stride(from: 0, to: count, by: 3) { listing[index].etag = "changed-\(index)" }
            listing.append(sampleRecord(count + 1))
            return try listing.map { try tx.upsert($0) }
        }
        for (index, result) in results.enumerated() {
            switch index {
            case 5, 6, count:
                guard case .inserted(let id) = result else {
                    Issue.record("row \(index): \(result)")
                    continue
                }
                #expect(!inserted.map(\.id).contains(id), "identifiers are never reused")
            case let i where i % 3 == 0:
                guard case .updated(let id, let before) = result else {
                    Issue.record("row \(index): \(result)")
                    continue
                }
                #expect(id == inserted[index].id)
                #expect(before.etag == "etag")
            default:
                #expect(result == .unchanged(inserted[index].id), "row \(index)")
            }
        }
        // #5 listed again, #6's old key (now a new row) and the new key.
        #expect(change.inserted.count == 3)
        #expect(change.deleted == [inserted[5].id])
        #expect(try store.record(key: "renamed/6.jpg")?.id == inserted[6].id)
        #expect(try store.record(key: "originals/6.jpg") != nil)
        #expect(try store.fetchIDs(StoreQuery()).count == count + 2)
    }

    private func fileBytes(_ folder: TemporaryFolder) throws -> [Data] {
        try [folder.databaseURL.path, folder.databaseURL.path + "-wal"].map { path in
            FileManager.default.fileExists(atPath: path) ? try Data(contentsOf: URL(fileURLWithPath: path)) : Data()
        }
    }
}
