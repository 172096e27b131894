import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// The write side never acts on what it has not verified: a purge deletes only the version the library decided
/// on and nothing another library restored, an import never takes the library's own files nor records a file
/// that changed while it was read, and an upload's journal entry is in the bucket when `waitForUploads` returns.
@Suite("Write safety", .heavy)
struct WriteSafetyTests {
    @Test("emptying the trash keeps an asset another library restored since, and deletes none of its objects")
    func emptyTrashKeepsWhatAnotherLibraryRestored() async throws {
        try await withHarness { harness in
            let a = try await harness.journalLibrary("a")
            let b = try await harness.journalLibrary("b")
            let photo = try await harness.importPhoto("KEEP.JPG", into: a)
            try await a.performChanges { $0.deleteAssets([photo]) }
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            let inB = try #require(try b.asset(forKey: photo.key))
            #expect(inB.isTrashed)
            try await b.performChanges { $0.restoreAssets([inB]) }
            try await b.sync(fetchThumbnails: false)

            // a has not synced since b restored it: its catalog still says trashed.
            #expect(try #require(try a.asset(forKey: photo.key)).isTrashed)
            #expect(try await a.emptyTrash() == 0)
            #expect(harness.server.keysOrEmpty(prefix: photo.key) == [photo.key])
            #expect(!harness.server.keysOrEmpty(prefix: "metadata/").isEmpty)
            let after = try #require(try a.asset(forKey: photo.key))
            #expect(!after.isTrashed)
            try await b.sync(mode: .full, fetchThumbnails: false)
            #expect(try b.asset(forKey: photo.key) != nil)
        }
    }

    @Test("emptying the trash leaves an object another tool wrote over the trashed version")
    func emptyTrashLeavesAReplacedObject() async throws {
        try await withHarness { harness in
            let a = try await harness.journalLibrary("a")
            let photo = try await harness.importPhoto("OVER.JPG", into: a)
            try await a.performChanges { $0.deleteAssets([photo]) }
            let newBytes = testBytes(count: 4096, seed: 77)
            let newETag = try harness.server.putObject(bucket: LibraryHarness.bucket, key: photo.key, data: newBytes)

            #expect(try await a.emptyTrash() == 0)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: photo.key) == newBytes)
            let kept = try #require(try a.asset(forKey: photo.key))
            #expect(!kept.isTrashed)
            #expect(kept.etag == newETag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
            #expect(kept.availability == .cloudOnly)
        }
    }

    @Test("a trash that only a journal entry claims (no sidecar says so) purges nothing")
    func emptyTrashIgnoresATrashNoSidecarBacks() async throws {
        try await withHarness { harness in
            let a = try await harness.journalLibrary("a")
            let photo = try await harness.importPhoto("CLAIM.JPG", into: a)
            let b = try await harness.journalLibrary("b")
            try await b.sync(fetchThumbnails: false)
            // A stranger's entry: well formed, a current stamp, but no sidecar was ever written.
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let entry = """
                {"format":1,"device":"stranger","changes":[{"op":"metadata","key":"\(photo.key)","sidecarETag":"x",\
                "sidecar":{"format":1,"original":"\(photo.key)","properties":{"trashed":{"value":true,\
                "time":\(now),"device":"stranger"}}}}]}
                """
            try harness.writeJournalEntry(time: now, device: "stranger", entry)
            try await b.sync(fetchThumbnails: false)
            #expect(try await b.emptyTrash() == 0)
            #expect(harness.server.keysOrEmpty(prefix: photo.key) == [photo.key])
        }
    }

    @Test("a journal entry that says a live object was deleted is not obeyed: the asset and its file stay")
    func deleteTheBucketContradictsIsSkipped() async throws {
        try await withHarness { harness in
            let a = try await harness.journalLibrary("a")
            let photo = try await harness.importPhoto("LIVE.JPG", into: a)
            let b = try await harness.journalLibrary("b")
            try await b.sync(fetchThumbnails: false)
            let inB = try #require(try b.asset(forKey: photo.key))
            let file = try await b.requestFile(for: inB, options: AssetLibrary.networkOptions())
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try harness.writeJournalEntry(
                time: now, device: "stranger",
                #"{"format":1,"device":"stranger","changes":[{"op":"delete","key":"\#(photo.key)","etag":"\#(photo.etag)"}]}"#
            )
            let summary = try await b.sync(fetchThumbnails: false)
            #expect(summary.removed == 0)
            #expect(summary.skipped.contains { $0.key == photo.key })
            #expect(try b.asset(forKey: photo.key)?.availability == .full)
            #expect(FileManager.default.fileExists(atPath: file.path))
        }
    }

    @Test("an edit entry whose manifest is not in the bucket is not adopted")
    func editTheBucketDoesNotHoldIsSkipped() async throws {
        try await withHarness { harness in
            let a = try await harness.journalLibrary("a")
            let photo = try await harness.importPhoto("EDIT.JPG", into: a)
            let b = try await harness.journalLibrary("b")
            try await b.sync(fetchThumbnails: false)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let folder = "edits/" + photo.key.dropFirst("originals/".count) + "/"
            let revision = "\(now)-stranger"
            let edit =
                #"{"format":1,"original":"\#(photo.key)","revision":"\#(revision)","reverted":false,"#
                + #""adjustment":{"formatIdentifier":"com.x","formatVersion":"1","data":""},"#
                + #""rendered":{"key":"\#(folder)\#(revision).jpg","size":10,"sha256":"00","pixelWidth":10,"#
                + #""pixelHeight":10}}"#
            try harness.writeJournalEntry(
                time: now, device: "stranger",
                #"{"format":1,"device":"stranger","changes":[{"op":"edit","key":"\#(photo.key)","edit":"# + edit + "}]}"
            )
            let summary = try await b.sync(fetchThumbnails: false)
            #expect(summary.skipped.contains { $0.reason.contains("manifest is not in the bucket") })
            #expect(try #require(try b.asset(forKey: photo.key)).hasAdjustments == false)
        }
    }

    @Test("a purge deletes the original with If-Match on the version it decided on")
    func purgeDeletesOnlyTheDecidedVersion() async throws {
        try await withHarness { harness in
            let a = try await harness.journalLibrary("a")
            let photo = try await harness.importPhoto("GONE.JPG", into: a)
            try await a.performChanges { $0.deleteAssets([photo]) }
            #expect(try await a.emptyTrash() == 1)
            #expect(harness.server.keysOrEmpty(prefix: photo.key).isEmpty)
            let deletes = harness.log.filter { $0.method == "DELETE" && $0.key == photo.key }
            #expect(deletes.count == 1)
            #expect(deletes.allSatisfy { ($0.ifMatch ?? "").contains(photo.etag) })
        }
    }

    @Test("shared properties and purges reach the bucket on a gateway that compares If-Match without quotes")
    func writesWorkWhereIfMatchIsComparedBare() async throws {
        try await withHarness(configure: { $0.comparesBareIfMatch = true }) { harness in
            let a = try await harness.journalLibrary("a")
            let b = try await harness.journalLibrary("b")
            let photo = try await harness.importPhoto("RGW.JPG", into: a)
            try await b.sync(fetchThumbnails: false)
            // The first write creates the sidecar (If-None-Match); each later one is conditional on its ETag.
            try await a.performChanges { $0.setFavorite(true, for: [photo]) }
            try await a.sync(fetchThumbnails: false)
            try await a.performChanges { $0.setHidden(true, for: [photo]) }
            try await a.sync(fetchThumbnails: false)
            try await a.performChanges { $0.deleteAssets([photo]) }
            try await a.sync(fetchThumbnails: false)
            #expect(try a.uploads.unsharedEdits == 0)
            try await b.sync(fetchThumbnails: false)
            let seen = try #require(try b.asset(forKey: photo.key))
            #expect(seen.isFavorite && seen.isHidden && seen.isTrashed)
            #expect(try await a.emptyTrash() == 1)
            #expect(harness.server.keysOrEmpty(prefix: photo.key).isEmpty)
            #expect(harness.server.keysOrEmpty(prefix: "metadata/").isEmpty)
        }
    }

    @Test("a file inside the library folder is refused as an import source, and stays where it is")
    func importRefusesTheLibrarysOwnFiles() async throws {
        try await withHarness { harness in
            let library = try await harness.open(harness.quietConfiguration())
            let ids = try await library.performChanges {
                $0.createAsset(fromFileAt: try! harness.sourceFile("one.jpg", testBytes(count: 64, seed: 1)))
            }
            let original = try #require(try library.asset(withLocalIdentifier: ids[0]))
            let originals = harness.storeURL.appendingPathComponent("originals")
            let stored = try FileManager.default.contentsOfDirectory(atPath: originals.path)
            #expect(stored.count == 1)
            let inside = [
                originals.appendingPathComponent(stored[0]),
                harness.storeURL.appendingPathComponent("library.sqlite"),
            ]
            // A link from outside into the library counts as inside.
            let link = harness.folder.appendingPathComponent("link.jpg")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: inside[0])
            for source in inside + [link] {
                await expectError(.cannotImport) {
                    try await library.performChanges {
                        $0.createAsset(fromFileAt: source, options: AssetCreationOptions(movesFile: true))
                    }
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: originals.path) == stored)
            #expect(try library.fetchAssets().count == 1)
            #expect(try library.asset(withLocalIdentifier: original.localIdentifier)?.availability == .full)
        }
    }

    @Test("a file that grew after it was looked at is imported as it is when read, whole")
    func importReadsAChangedFileAgain() async throws {
        try await withHarness { harness in
            let library = try await harness.open(harness.quietConfiguration())
            let source = try harness.sourceFile("growing.jpg", testBytes(count: 3 << 20, seed: 3))
            // What the import's first look saw, before another program appended to the file.
            var before = stat()
            #expect(stat(source.path, &before) == 0)
            let handle = try FileHandle(forWritingTo: source)
            try handle.seekToEnd()
            try handle.write(contentsOf: testBytes(count: 12_345, seed: 4))
            try handle.close()
            let files = LocalFiles(root: harness.storeURL)
            try files.createFolders()
            let staged = try ImportedFile.stage(source, status: before, files: files, moving: false)
            defer { staged.discard() }
            let bytes = try Data(contentsOf: source)
            #expect(staged.size == Int64(bytes.count))
            #expect(try Data(contentsOf: staged.stagedURL) == bytes)
            #expect(try library.fetchAssets().count == 0)
        }
    }

    @Test("a file whose size is not what it reads (a /proc file) is refused, not recorded as size 0")
    func importRefusesAFileThatIsNotItsSize() async throws {
        try await withHarness { harness in
            let library = try await harness.open(harness.quietConfiguration())
            await expectError(.cannotImport) {
                try await library.performChanges {
                    $0.createAsset(fromFileAt: URL(fileURLWithPath: "/proc/self/status"))
                }
            }
            #expect(try library.fetchAssets().count == 0)
            let originals = harness.storeURL.appendingPathComponent("originals")
            #expect(try FileManager.default.contentsOfDirectory(atPath: originals.path).isEmpty)
        }
    }

    @Test("when waitForUploads returns, the journal holds an entry for every upload")
    func waitForUploadsFlushesTheJournal() async throws {
        try await withHarness { harness in
            let library = try await harness.open(harness.quietConfiguration())
            let sources = try harness.sourceFiles(5, prefix: "batch", seed: 40)
            let ids = try await harness.importAll(sources, into: library)
            await library.waitForUploads()
            var keys = Set<String>()
            for entry in harness.server.keysOrEmpty(prefix: "journal/") {
                let data = try #require(try harness.server.objectData(bucket: LibraryHarness.bucket, key: entry))
                let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                for change in object["changes"] as? [[String: Any]] ?? [] where change["op"] as? String == "put" {
                    keys.insert(change["key"] as? String ?? "")
                }
            }
            let uploaded = try library.fetchAssets(withLocalIdentifiers: ids).map(\.key)
            #expect(keys == Set(uploaded))
            #expect(uploaded.count == 5)
        }
    }
}
