import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// Files to import, written into the harness folder (beside the library, never inside it).
extension LibraryHarness {
    func sourceFile(_ name: String, _ data: Data) throws -> URL {
        let folder = folder.appendingPathComponent("sources", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    /// `count` distinct 64-byte files to import, `<prefix><n>.jpg`.
    func sourceFiles(_ count: Int, prefix: String, seed: UInt64) throws -> [URL] {
        try (0..<count).map { index in
            try sourceFile("\(prefix)\(index).jpg", testBytes(count: 64, seed: seed + UInt64(index)))
        }
    }

    /// Imports every file of `sources` in one change; returns their local identifiers.
    func importAll(_ sources: [URL], into library: AssetLibrary) async throws -> [String] {
        try await library.performChanges { changes in
            for source in sources { changes.createAsset(fromFileAt: source) }
        }
    }

    /// A configuration whose library uploads only when told to (``AssetLibrary/waitForUploads()`` or a sync), so
    /// a test sees the states in between.
    func quietConfiguration(storeURL: URL? = nil) -> AssetLibrary.Configuration {
        var configuration = configuration(storeURL: storeURL)
        configuration.startsBackgroundTransfers = false
        return configuration
    }
}

/// A JPEG header as a camera writes it: EXIF with an orientation and a capture date, then a frame header.
func jpegWithEXIF(width: Int, height: Int, orientation: Int, date: String, offset: String?, padding: Int = 64)
    -> Data
{
    var tiff: [UInt8] = Array("MM".utf8) + [0, 42, 0, 0, 0, 8]
    // IFD0: orientation, EXIF pointer.
    let ifd0Count = 2
    let exifIFDOffset = 8 + 2 + ifd0Count * 12 + 4
    tiff += [0, UInt8(ifd0Count)]
    tiff += [0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0]
    tiff += [0x87, 0x69, 0, 4, 0, 0, 0, 1] + be32(exifIFDOffset)
    tiff += [0, 0, 0, 0]
    let exifCount = offset == nil ? 1 : 2
    let dataStart = exifIFDOffset + 2 + exifCount * 12 + 4
    tiff += [0, UInt8(exifCount)]
    tiff += [0x90, 0x03, 0, 2] + be32(20) + be32(dataStart)
    if offset != nil { tiff += [0x90, 0x11, 0, 2] + be32(7) + be32(dataStart + 20) }
    tiff += [0, 0, 0, 0]
    tiff += Array(date.utf8) + [0]
    if let offset { tiff += Array(offset.utf8) + [0] }
    let app1 = Array("Exif".utf8) + [0, 0] + tiff
    var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1] + be16(app1.count + 2) + app1
    bytes += [0xFF, 0xC0, 0, 17, 8] + be16(height) + be16(width) + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
    bytes += [0xFF, 0xDA, 0, 2] + [UInt8](repeating: 0x5A, count: padding) + [0xFF, 0xD9]
    return Data(bytes)
}

private func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
private func be32(_ value: Int) -> [UInt8] { be16(value >> 16) + be16(value & 0xFFFF) }

@Suite("Library: change requests", .heavy)
struct ChangeRequestTests {
    @Test("an import is local and full at once, pending until it uploads, and its object carries its metadata")
    func importIsLocalFirstThenUploaded() async throws {
        try await withHarness { harness in
            let jpeg = jpegWithEXIF(
                width: 4032, height: 3024, orientation: 6, date: "2024:07:14 09:30:05", offset: "+02:00")
            let source = try harness.sourceFile("IMG_0001.JPG", jpeg)
            let library = try await harness.open(harness.quietConfiguration())
            var changes = ChangeReader(observing: library)
            let ids = try await library.performChanges { $0.createAsset(fromFileAt: source) }
            #expect(ids.count == 1)
            let change = try await changes.next()
            let asset = try #require(try library.asset(withLocalIdentifier: ids[0]))
            #expect(change.insertedIdentifiers == [asset.id])
            #expect(asset.availability == .full)
            #expect(asset.uploadState == .pendingUpload)
            #expect(asset.key == "originals/2024/07/IMG_0001.JPG")
            #expect((asset.storedPixelWidth, asset.storedPixelHeight, asset.orientation) == (4032, 3024, 6))
            #expect((asset.pixelWidth, asset.pixelHeight) == (3024, 4032))  // drawn turned a quarter
            #expect(asset.creationDate == Date(timeIntervalSince1970: 1_720_942_205))
            #expect(asset.mediaType == .image)
            #expect(FileManager.default.fileExists(atPath: source.path), "a copy leaves the source")
            #expect(try await library.data(for: asset) == jpeg)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: asset.key) == nil)

            await library.waitForUploads()
            let uploaded = try #require(try library.asset(withLocalIdentifier: ids[0]))
            #expect(uploaded.uploadState == .uploaded)
            #expect(uploaded.availability == .full)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: asset.key) == jpeg)
            #expect(try library.uploads.isEmpty)

            // Another library finds the object with the metadata the import read.
            let other = try await harness.open(
                harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("b")))
            try await other.sync(fetchThumbnails: false)
            let seen = try #require(try other.asset(forKey: asset.key))
            #expect((seen.storedPixelWidth, seen.storedPixelHeight, seen.orientation) == (4032, 3024, 6))
            #expect((seen.pixelWidth, seen.pixelHeight) == (3024, 4032))
            #expect(seen.creationDate == asset.creationDate)
            #expect(seen.contentSHA256 == asset.contentSHA256)
            #expect(seen.availability == .cloudOnly)
        }
    }

    @Test(
        "uploads carry the checksum the configuration chooses",
        arguments: [S3ChecksumAlgorithm.crc32c, .crc32, .sha256])
    func uploadsCarryTheConfiguredChecksum(algorithm: S3ChecksumAlgorithm) async throws {
        try await withHarness { harness in
            var configuration = harness.quietConfiguration()
            configuration.upload.checksum = algorithm
            let library = try await harness.open(configuration)
            let bytes = testBytes(count: 70_000, seed: 7)
            let ids = try await library.performChanges {
                $0.createAsset(fromFileAt: try harness.sourceFile("clip.mov", bytes))
            }
            await library.waitForUploads()
            let asset = try #require(try library.asset(withLocalIdentifier: ids[0]))
            #expect(asset.uploadState == .uploaded)
            let stored = try #require(try harness.server.objectChecksums(bucket: LibraryHarness.bucket, key: asset.key))
            #expect(Array(stored.checksums.keys) == [algorithm.rawValue], "\(stored)")
            #expect(stored.checksums[algorithm.rawValue] == algorithm.checksum(of: bytes))
        }
    }

    @Test("a sync after an upload records the listing's date without a HEAD and reports no content change")
    func syncAfterUploadNeedsNoHead() async throws {
        try await withHarness { harness in
            let source = try harness.sourceFile("a.bin", testBytes(count: 10_000, seed: 1))
            let library = try await harness.open(harness.quietConfiguration())
            try await library.performChanges { $0.createAsset(fromFileAt: source) }
            let summary = try await library.sync(fetchThumbnails: false)
            #expect(summary.headRequests == 0)
            #expect(summary.contentChanged == 0)
            #expect(summary.removed == 0)
            let again = try await library.sync(fetchThumbnails: false)
            #expect(again.transactions == 0)
            #expect(try library.fetchAssets().firstObject?.availability == .full)
        }
    }

    @Test("importing bytes the library holds returns the existing asset and adds no object")
    func importDeduplicatesByContent() async throws {
        try await withHarness { harness in
            let bytes = testBytes(count: 50_000, seed: 7)
            let first = try harness.sourceFile("one.png", bytes)
            let second = try harness.sourceFile("two.png", bytes)
            let library = try await harness.open(harness.quietConfiguration())
            let a = try await library.performChanges { $0.createAsset(fromFileAt: first) }
            let b = try await library.performChanges { changes in
                changes.createAsset(fromFileAt: second)
                changes.createAsset(fromFileAt: second)
            }
            #expect(b == [a[0], a[0]])
            #expect(try library.fetchAssets().count == 1)
            await library.waitForUploads()
            let objects = try harness.server.keys(bucket: LibraryHarness.bucket, prefix: "originals/")
            #expect(objects.count == 1)
            // Only the library's own files remain in its folder: no staged copy is left behind.
            let originals = try FileManager.default.contentsOfDirectory(
                atPath: harness.storeURL.appendingPathComponent("originals").path)
            #expect(originals.count == 1)
        }
    }

    @Test("a PNG's pixel size comes from its header; a move takes the file, a copy leaves it")
    func pngImportAndMove() async throws {
        try await withHarness { harness in
            // A PNG's signature and IHDR chunk (what the import reads), then some bytes.
            var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8))
            png += Data([0, 0, 0, 33, 0, 0, 0, 17, 8, 2, 0, 0, 0]) + testBytes(count: 200, seed: 5)
            let source = try harness.sourceFile("pic.png", png)
            let library = try await harness.open(harness.quietConfiguration())
            let ids = try await library.performChanges {
                $0.createAsset(fromFileAt: source, options: AssetCreationOptions(movesFile: true))
            }
            let asset = try #require(try library.asset(withLocalIdentifier: ids[0]))
            #expect((asset.pixelWidth, asset.pixelHeight, asset.mediaType) == (33, 17, .image))
            #expect(!FileManager.default.fileExists(atPath: source.path))
            #expect(try await library.data(for: asset) == png)
        }
    }

    @Test("a failed import commits nothing, leaves nothing behind and puts a moved file back")
    func failedImportChangesNothing() async throws {
        try await withHarness { harness in
            let good = try harness.sourceFile("good.jpg", testBytes(count: 1000, seed: 2))
            let missing = harness.folder.appendingPathComponent("sources/missing.jpg")
            let library = try await harness.open(harness.quietConfiguration())
            let before = library.currentChangeToken
            await expectError(.cannotImport) {
                try await library.performChanges { changes in
                    changes.createAsset(fromFileAt: good, options: AssetCreationOptions(movesFile: true))
                    changes.createAsset(fromFileAt: missing)
                }
            }
            #expect(library.currentChangeToken == before)
            #expect(FileManager.default.fileExists(atPath: good.path))
            let originals = try FileManager.default.contentsOfDirectory(
                atPath: harness.storeURL.appendingPathComponent("originals").path)
            #expect(originals.isEmpty)
        }
    }

    @Test("trash leaves default fetches as a removal, restore brings the asset back, both one change each")
    func trashAndRestore() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(with: "a.jpg", data: Data([1, 2, 3]))
            try harness.put("b.jpg", data: Data([4]))
            try await library.sync(fetchThumbnails: false)
            let all = try library.fetchAssets(FetchOptions(sortBy: [.key()]))
            #expect(all.count == 2)
            var changes = ChangeReader(observing: library)
            try await library.performChanges { $0.deleteAssets([asset]) }
            let trashed = try await changes.next()
            let details = try #require(trashed.details(for: all))
            #expect(details.removedIndexes == IndexSet(integer: 0))
            #expect(details.fetchResultAfterChanges.count == 1)
            #expect(try library.fetchAssets().count == 1)
            let inTrash = try library.fetchAssets(FetchOptions(predicate: .isTrashed(true), includeTrashedAssets: true))
            #expect(inTrash.count == 1)
            #expect(inTrash.firstObject?.trashedDate != nil)

            try await library.performChanges { $0.restoreAssets([asset]) }
            // The trash's sidecar going up in the background is a change of its own (to a trashed asset, outside
            // the fetch result); the restore is the change that touches the result.
            var restored = try await changes.next()
            while restored.details(for: details.fetchResultAfterChanges) == nil { restored = try await changes.next() }
            let back = try #require(restored.details(for: details.fetchResultAfterChanges))
            #expect(back.insertedIndexes == IndexSet(integer: 0))
            #expect(try library.fetchAssets().count == 2)
        }
    }

    @Test("emptying the trash deletes the objects; a sync purges what outlived the retention")
    func emptyTrashAndRetention() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(with: "a.jpg", data: Data([1, 2, 3]))
            try await library.performChanges { $0.deleteAssets([asset]) }
            #expect(try await library.emptyTrash() == 1)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: "originals/a.jpg") == nil)
            #expect(try library.fetchAssets(FetchOptions(includeTrashedAssets: true)).count == 0)

            try harness.put("b.jpg", data: Data([4]))
            var configuration = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("short"))
            configuration.trashRetention = 0
            let short = try await harness.open(configuration)
            try await short.sync(fetchThumbnails: false)
            let b = try #require(try short.asset(forKey: "originals/b.jpg"))
            try await short.performChanges { $0.deleteAssets([b]) }
            let summary = try await short.sync(fetchThumbnails: false)
            #expect(summary.purged == 1)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: "originals/b.jpg") == nil)
        }
    }

    @Test("edits go to the bucket and reach another library as changed assets")
    func editsReachAnotherLibrary() async throws {
        try await withHarness { harness in
            let (a, asset) = try await harness.openSynced(with: "a.jpg", data: Data([1, 2, 3]))
            let b = try await harness.open(
                harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("b")))
            try await b.sync(fetchThumbnails: false)
            let seenByB = try b.fetchAssets()
            try await a.performChanges { changes in
                changes.setFavorite(true, for: [asset])
                changes.setTitle("  Beach ", for: asset)
                changes.setKeywords(["sea", " sea", "", "summer"], for: asset)
            }
            await a.waitForUploads()
            #expect(try a.uploads.unsharedEdits == 0)
            var changes = ChangeReader(observing: b)
            let summary = try await b.sync(fetchThumbnails: false)
            #expect(summary.sidecarsRead == 1)
            let change = try await changes.next()
            let details = try #require(change.details(for: seenByB))
            #expect(details.changedIndexes == IndexSet(integer: 0))
            let after = try #require(details.fetchResultAfterChanges.firstObject)
            #expect(after.isFavorite)
            #expect(after.title == "Beach")
            #expect(after.keywords == ["sea", "summer"])
            // Nothing changed since: the next sync reads no sidecar.
            #expect(try await b.sync(fetchThumbnails: false).sidecarsRead == 0)
        }
    }

    @Test("edits of different properties on two devices both survive; the later edit of one property wins")
    func concurrentEditsMerge() async throws {
        try await withHarness { harness in
            let (a, assetA) = try await harness.openSynced(with: "a.jpg", data: Data([1, 2, 3]))
            let b = try await harness.open(
                harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("b")))
            try await b.sync(fetchThumbnails: false)
            let assetB = try #require(try b.asset(forKey: assetA.key))
            // Neither has seen the other's edits when it makes its own.
            try await a.performChanges { changes in
                changes.setTitle("from A", for: assetA)
                changes.setKeywords(["a"], for: assetA)
            }
            try await b.performChanges { changes in
                changes.setFavorite(true, for: [assetB])
                changes.setKeywords(["b"], for: assetB)
            }
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            try await a.sync(fetchThumbnails: false)
            let finalA = try #require(try a.asset(forKey: assetA.key))
            let finalB = try #require(try b.asset(forKey: assetA.key))
            #expect(finalA.title == "from A" && finalB.title == "from A")
            #expect(finalA.isFavorite && finalB.isFavorite)
            #expect(finalA.keywords == ["b"] && finalB.keywords == ["b"], "B's keywords were set later")
        }
    }

    @Test("offline imports wait and go up when the policy allows")
    func offlineImportsQueue() async throws {
        try await withHarness { harness in
            var configuration = harness.configuration()
            configuration.networkPolicy = .offline
            let library = try await harness.open(configuration)
            let source = try harness.sourceFile("o.jpg", testBytes(count: 3000, seed: 3))
            let ids = try await library.performChanges { $0.createAsset(fromFileAt: source) }
            await library.waitForUploads()
            #expect(try library.asset(withLocalIdentifier: ids[0])?.uploadState == .pendingUpload)
            #expect(try library.uploads.pending == 1)
            // Eviction never removes the only copy.
            let asset = try #require(try library.asset(withLocalIdentifier: ids[0]))
            try library.evict([asset])
            #expect(try library.asset(withLocalIdentifier: ids[0])?.availability == .full)
            library.networkPolicy = .allowed
            await library.waitForUploads()
            #expect(try library.asset(withLocalIdentifier: ids[0])?.uploadState == .uploaded)
        }
    }

    @Test("large and small files imported together keep each its own bytes, in call order")
    func largeAndSmallFilesImportTogether() async throws {
        try await withHarness { harness in
            // Two files on lanes of their own (1 MiB and more), five on the small files' lane, interleaved.
            let sizes = [64, 1_600_000, 300, 2_000_000, 5_000, 70, 1_048_575]
            let sources = try sizes.enumerated().map { index, size in
                try harness.sourceFile("mixed\(index).jpg", testBytes(count: size, seed: UInt64(5000 + index)))
            }
            let library = try await harness.open(harness.quietConfiguration())
            let ids = try await harness.importAll(sources, into: library)
            #expect(ids.count == sizes.count)
            await library.waitForUploads()
            for (index, id) in ids.enumerated() {
                let asset = try #require(try library.asset(withLocalIdentifier: id))
                #expect(asset.size == Int64(sizes[index]))
                let stored = try harness.server.objectData(bucket: LibraryHarness.bucket, key: asset.key)
                #expect(stored == (try Data(contentsOf: sources[index])), "\(asset.key)")
            }
        }
    }

    @Test("a large import is copied whole around the page cache, its first upload reading the source as copied")
    func largeImportCopiesDirectlyAndUploadsFromItsSource() async throws {
        try await withHarness { harness in
            // Not a multiple of the copy's block size: the last write is rounded up and cut back.
            let size = (9 << 20) + 4_097
            let original = testBytes(count: size, seed: 8100)
            let source = try harness.sourceFile("video.mov", original)
            let library = try await harness.open(harness.quietConfiguration())
            let id = try #require(try await harness.importAll([source], into: library).first)
            let originals = harness.storeURL.appendingPathComponent("originals")
            let copy = try #require(
                try FileManager.default.contentsOfDirectory(atPath: originals.path).first { $0.hasSuffix(".mov") })
            let copyURL = originals.appendingPathComponent(copy)
            #expect(try Data(contentsOf: copyURL) == original)
            // The library's copy is spoilt behind its back (same size): an upload reading the source still sends
            // the bytes imported.
            let spoilt = FileHandle(forWritingAtPath: copyURL.path)
            try spoilt?.write(contentsOf: Data(repeating: 0, count: 4_096))
            try spoilt?.close()
            await library.waitForUploads()
            let asset = try #require(try library.asset(withLocalIdentifier: id))
            #expect(asset.uploadState == .uploaded)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: asset.key) == original)
        }
    }

    @Test("a large import whose source changes before its upload is uploaded from the library's copy")
    func changedSourceIsNotUploaded() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 9 << 20, seed: 8200)
            let source = try harness.sourceFile("clip.mov", original)
            let library = try await harness.open(harness.quietConfiguration())
            let id = try #require(try await harness.importAll([source], into: library).first)
            // Same size, other bytes: the source is no longer the file copied.
            try testBytes(count: 9 << 20, seed: 8201).write(to: source)
            await library.waitForUploads()
            let asset = try #require(try library.asset(withLocalIdentifier: id))
            #expect(asset.uploadState == .uploaded)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: asset.key) == original)
        }
    }

    @Test("more imports than one batch of uploads all go up, each object written once")
    func importsBeyondOneUploadBatchAllGoUp() async throws {
        try await withHarness { harness in
            // Uploads are read 512 at a time; the next batch is read while the last uploads of one are in flight.
            let count = 530
            let sources = try harness.sourceFiles(count, prefix: "b", seed: 1000)
            let library = try await harness.open(harness.quietConfiguration())
            let ids = try await harness.importAll(sources, into: library)
            #expect(ids.count == count)
            await library.waitForUploads()
            let states = try library.fetchAssets(withLocalIdentifiers: ids).map(\.uploadState)
            #expect(states.count == count)
            #expect(states.allSatisfy { $0 == .uploaded })
            let puts = harness.log.filter { $0.method == "PUT" && $0.key?.hasPrefix("originals/") == true }
            #expect(puts.count == count)
            #expect(Set(puts.compactMap(\.key)).count == count)
        }
    }

    @Test("a bucket that does not exist fails every upload with one reason, after one round of requests")
    func aMissingBucketStopsTheUploadsAtTheFirstFailure() async throws {
        try await withHarness { harness in
            let count = 40
            let sources = try harness.sourceFiles(count, prefix: "m", seed: 3000)
            var configuration = harness.quietConfiguration()
            configuration.bucket = "no-such-bucket"
            configuration.upload.concurrentUploads = 4
            let library = try await harness.open(configuration)
            let ids = try await harness.importAll(sources, into: library)
            await library.waitForUploads()
            let assets = try library.fetchAssets(withLocalIdentifiers: ids)
            #expect(assets.count == count)
            #expect(assets.allSatisfy { $0.uploadState == .uploadFailed })
            #expect(Set(assets.map(\.uploadError)).count == 1)
            #expect(assets.first?.uploadError?.contains("NoSuchBucket") == true)
            #expect(assets.allSatisfy { $0.availability == .full })
            // The uploads in flight when the first failed, and none after: not one request per import.
            let puts = harness.log.filter { $0.method == "PUT" }
            #expect(puts.count >= 1 && puts.count <= 4)
            // They stay local; with the bucket there, a sync uploads every one.
            try harness.server.createBucket("no-such-bucket")
            try await library.sync(fetchThumbnails: false)
            let after = try library.fetchAssets(withLocalIdentifiers: ids)
            #expect(after.allSatisfy { $0.uploadState == .uploaded })
        }
    }

    @Test("two libraries importing different files under one name keep both; the same bytes become one object")
    func conditionalCreatesNeverOverwrite() async throws {
        try await withHarness { harness in
            let date = Date(timeIntervalSince1970: 1_700_000_000)
            let options = AssetCreationOptions(creationDate: date)
            let a = try await harness.open(harness.quietConfiguration())
            let b = try await harness.open(
                harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("b")))
            let dirA = harness.folder.appendingPathComponent("sa")
            let dirB = harness.folder.appendingPathComponent("sb")
            for dir in [dirA, dirB] {
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            }
            try testBytes(count: 4000, seed: 10).write(to: dirA.appendingPathComponent("IMG.JPG"))
            try testBytes(count: 4000, seed: 11).write(to: dirB.appendingPathComponent("IMG.JPG"))
            try testBytes(count: 5000, seed: 12).write(to: dirA.appendingPathComponent("SAME.JPG"))
            try testBytes(count: 5000, seed: 12).write(to: dirB.appendingPathComponent("SAME.JPG"))
            for (library, dir) in [(a, dirA), (b, dirB)] {
                try await library.performChanges { changes in
                    changes.createAsset(fromFileAt: dir.appendingPathComponent("IMG.JPG"), options: options)
                    changes.createAsset(fromFileAt: dir.appendingPathComponent("SAME.JPG"), options: options)
                }
            }
            async let doneA = a.waitForUploads()
            async let doneB = b.waitForUploads()
            _ = await (doneA, doneB)
            let keys = try harness.server.keys(bucket: LibraryHarness.bucket, prefix: "originals/")
            #expect(keys.count == 3, "two different IMG.JPG and one SAME.JPG: \(keys)")
            #expect(keys.contains("originals/2023/11/IMG.JPG"))
            #expect(keys.contains("originals/2023/11/SAME.JPG"))
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            let inA = try Set(a.fetchAssets().map(\.key))
            let inB = try Set(b.fetchAssets().map(\.key))
            #expect(inA == Set(keys) && inB == Set(keys))
            for key in keys {
                let data = try #require(try harness.server.objectData(bucket: LibraryHarness.bucket, key: key))
                let asset = try #require(try a.asset(forKey: key))
                if asset.availability == .full { #expect(try await a.data(for: asset) == data) }
            }
        }
    }
}

@Suite("Library: uploads under faults", .heavy)
struct UploadFaultTests {
    @Test(
        "an upload cut by a reset, a 500 or SlowDown ends uploaded with the right bytes",
        arguments: [Fault.resetAfter(bytes: 1000), .internalError, .slowDown(retryAfterSeconds: nil)])
    func transientFaultsEndUploaded(fault: Fault) async throws {
        try await withHarness { harness in
            var configuration = harness.quietConfiguration()
            configuration.upload = UploadSettings(partSize: 5 << 20)
            let library = try await harness.open(configuration)
            let bytes = testBytes(count: 12 << 20, seed: 77)
            let source = try harness.sourceFile("big.mov", bytes)
            harness.server.faults.add(fault, keyPattern: "originals/*", method: "PUT", afterRequests: 1, times: 1)
            harness.server.faults.add(fault, keyPattern: "originals/*", method: "POST", afterRequests: 1, times: 1)
            let ids = try await library.performChanges { $0.createAsset(fromFileAt: source) }
            await library.waitForUploads()
            let asset = try #require(try library.asset(withLocalIdentifier: ids[0]))
            #expect(asset.uploadState == .uploaded)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: asset.key) == bytes)
        }
    }

    @Test("an upload the service keeps refusing fails with a reason and keeps the original; a sync tries again")
    func persistentFailureKeepsTheOriginal() async throws {
        try await withHarness { harness in
            let library = try await harness.open(harness.quietConfiguration())
            let bytes = testBytes(count: 40_000, seed: 78)
            let source = try harness.sourceFile("refused.jpg", bytes)
            let rule = harness.server.faults.add(.internalError, keyPattern: "originals/*", method: "PUT")
            let ids = try await library.performChanges { $0.createAsset(fromFileAt: source) }
            await library.waitForUploads()
            let failed = try #require(try library.asset(withLocalIdentifier: ids[0]))
            #expect(failed.uploadState == .uploadFailed)
            #expect(failed.uploadError?.isEmpty == false)
            #expect(try library.uploads.failed == 1)
            #expect(try await library.data(for: failed) == bytes)
            try library.evict([failed])
            #expect(try library.asset(withLocalIdentifier: ids[0])?.availability == .full)
            harness.server.faults.remove(rule)
            try await library.sync(fetchThumbnails: false)
            #expect(try library.asset(withLocalIdentifier: ids[0])?.uploadState == .uploaded)
        }
    }

    @Test("a multipart upload of an asset purged before it finished is aborted")
    func abandonedUploadIsAborted() async throws {
        try await withHarness { harness in
            var configuration = harness.quietConfiguration()
            configuration.upload = UploadSettings(partSize: 5 << 20)
            let library = try await harness.open(configuration)
            let source = try harness.sourceFile("gone.mov", testBytes(count: 12 << 20, seed: 79))
            // The second part is refused until the test lets it through: the upload stops with a checkpoint.
            let rule = harness.server.faults.add(
                .internalError, keyPattern: "originals/*", method: "PUT", afterRequests: 1)
            let ids = try await library.performChanges { $0.createAsset(fromFileAt: source) }
            await library.waitForUploads()
            #expect(try harness.server.multipartUploads(bucket: LibraryHarness.bucket).count == 1)
            harness.server.faults.remove(rule)
            let asset = try #require(try library.asset(withLocalIdentifier: ids[0]))
            try await library.performChanges { $0.deleteAssets([asset]) }
            #expect(try await library.emptyTrash() == 1)
            #expect(try harness.server.multipartUploads(bucket: LibraryHarness.bucket).isEmpty)
            #expect(try harness.server.keys(bucket: LibraryHarness.bucket, prefix: "originals/").isEmpty)
        }
    }
}
