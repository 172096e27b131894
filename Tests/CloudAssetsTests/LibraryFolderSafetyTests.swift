import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// A library removes only what it created, inside its own folder; it survives being moved, copied, renamed or
/// reached through a link; and it belongs to one bucket.
@Suite("Library: folder safety and identity", .heavy, .timeLimit(.minutes(1)))
struct LibraryFolderSafetyTests {
    /// Writes `text` to `relative` under `root`, creating folders.
    private func write(_ text: String, _ relative: String, under root: URL) throws {
        let url = root.appendingPathComponent(relative)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    @Test("opening a folder of someone's files is refused and changes nothing in it")
    func foreignFolderIsRefusedUntouched() async throws {
        try await withHarness { harness in
            let root = harness.folder.appendingPathComponent("u")
            let files = ["originals/my.jpg", "thumbnails/t.jpg", "partial/p.bin", "originals/12.jpg", "notes.txt"]
            for file in files { try write("mine", file, under: root) }
            for layout in [files, ["originals/12.jpg"]] {
                // Also a folder that holds nothing but a file named like one of the library's own.
                let folder = layout.count == 1 ? harness.folder.appendingPathComponent("v") : root
                if layout.count == 1 { try write("mine", layout[0], under: folder) }
                do {
                    _ = try await harness.open(harness.configuration(storeURL: folder))
                    Issue.record("a folder of other files was opened as a library")
                } catch let error as CloudAssetsError {
                    #expect(error.code == .notALibrary, "\(error)")
                    #expect(error.path == folder.path)
                    #expect(error.description.contains("not a CloudAssets library"))
                }
                for file in layout {
                    #expect(try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8) == "mine")
                }
                let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                #expect(!names.contains("library.lock") && !names.contains("library.sqlite"), "nothing written")
            }
        }
    }

    @Test("the files a crash can leave half-written (staged imports, thumbnails being written) are removed")
    func recoveryRemovesHalfWrittenFiles() async throws {
        try await withHarness { harness in
            var library = try await harness.open()
            library.closeAsIfCrashed()
            let root = harness.storeURL
            let staged = "originals/" + "import-" + String(repeating: "ab", count: 16) + ".part"
            try write("half", staged, under: root)
            try write("half", "thumbnails/42.jpg.part", under: root)
            library = try await harness.open()
            #expect(library.recovery.orphanFilesRemoved == 2)
            #expect(library.recovery.foreignFilesKept == 0)
            for file in [staged, "thumbnails/42.jpg.part"] {
                #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent(file).path), "\(file)")
            }
        }
    }

    @Test("recovery leaves files and folders the library did not name, and never follows a link")
    func recoveryKeepsForeignFiles() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 1000, seed: 1))
            var library = try await harness.open()
            try await library.sync()
            library.closeAsIfCrashed()
            let root = harness.storeURL
            try write("mine", "originals/holiday.jpg", under: root)
            try write("mine", "thumbnails/Cover.JPG", under: root)
            try write("mine", "originals/777.jpg/inside.txt", under: root)  // a folder named like our files
            library = try await harness.open()
            #expect(library.recovery.orphanFilesRemoved == 0)
            #expect(library.recovery.foreignFilesKept == 3)
            for file in ["originals/holiday.jpg", "thumbnails/Cover.JPG", "originals/777.jpg/inside.txt"] {
                #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(file).path), "\(file)")
            }
            library.close()

            // `partial` replaced by a link to a folder outside: refused, and the outside file survives.
            let outside = harness.folder.appendingPathComponent("outside")
            try write("mine", "999.ranges", under: outside)
            try FileManager.default.removeItem(at: root.appendingPathComponent("partial"))
            try FileManager.default.createSymbolicLink(
                at: root.appendingPathComponent("partial"), withDestinationURL: outside)
            await expectError(.notALibrary) { _ = try await harness.open() }
            #expect(FileManager.default.fileExists(atPath: outside.appendingPathComponent("999.ranges").path))
        }
    }

    @Test("a library moved, copied, renamed or reached through a link or another spelling keeps its originals")
    func movedLibraryKeepsOriginals() async throws {
        try await withHarness { harness in
            let a = testBytes(count: 40_000, seed: 2)
            let b = testBytes(count: 30_000, seed: 3)
            try harness.put("a.png", data: a)
            try harness.put("b.png", data: b)
            let library = try await harness.open()
            try await library.sync()
            let assetA = try library.asset(path: "a.png")
            let assetB = try library.asset(path: "b.png")
            _ = try await library.data(for: assetA, options: AssetLibrary.networkOptions())
            _ = try await library.data(for: assetB, options: AssetLibrary.networkOptions())
            try library.pin([assetB])  // after its download: no background download races the close
            library.close()

            let fm = FileManager.default
            let moved = harness.folder.appendingPathComponent("moved")
            try fm.moveItem(at: harness.storeURL, to: moved)
            let copied = harness.folder.appendingPathComponent("copied")
            try fm.copyItem(at: moved, to: copied)
            let link = harness.folder.appendingPathComponent("link")
            try fm.createSymbolicLink(at: link, withDestinationURL: moved)
            let spellings = [
                moved, copied, link, URL(fileURLWithPath: moved.path + "/"),
                URL(fileURLWithPath: harness.folder.path + "/./moved/"),
                URL(fileURLWithPath: harness.folder.path + "//moved"),
            ]
            for folder in spellings {
                var configuration = harness.configuration(storeURL: folder)
                configuration.networkPolicy = .offline
                let reopened = try await harness.open(configuration)
                #expect(reopened.recovery.fullDowngraded == 0, "\(folder.path)")
                #expect(reopened.recovery.orphanFilesRemoved == 0, "\(folder.path)")
                let local = AssetRequestOptions()  // no network: only a local original answers
                #expect(try await reopened.data(for: reopened.current(assetA), options: local) == a)
                #expect(try await reopened.data(for: reopened.current(assetB), options: local) == b)
                #expect(try reopened.current(assetB).isPinned)
                reopened.close()
            }
        }
    }

    @Test("a library synced with one bucket refuses another; --rebind moves it and keeps matching files")
    func libraryBelongsToItsBucket() async throws {
        try await withHarness { harness in
            let a = testBytes(count: 20_000, seed: 4)
            try harness.put("a.png", data: a)
            try harness.put("b.png", data: testBytes(count: 2000, seed: 5))
            let library = try await harness.open()
            try await library.sync()
            let assetA = try library.asset(path: "a.png")
            _ = try await library.data(for: assetA, options: AssetLibrary.networkOptions())
            try library.pin([assetA])
            library.close()

            try harness.server.createBucket("empty")
            var other = harness.configuration()
            other.bucket = "empty"
            let wrong = try await harness.open(other)
            do {
                try await wrong.sync()
                Issue.record("a library synced against another bucket")
            } catch let error as CloudAssetsError {
                #expect(error.code == .boundToAnotherBucket, "\(error)")
                #expect(error.description.contains("s3://photos/") && error.description.contains("s3://empty/"))
            }
            // Downloads are refused the same way, before any request (a local original is still served).
            let assetB = try wrong.asset(path: "b.png")
            await expectError(.boundToAnotherBucket) {
                _ = try await wrong.read(assetB, range: 0..<10)
            }
            #expect(try await wrong.read(assetA, range: 0..<10) == a.prefix(10))
            #expect(try wrong.fetchAssets().count == 2)
            wrong.close()

            // Rebinding to a bucket holding the same object keeps its verified file and pin.
            try harness.server.createBucket("moved")
            try harness.server.putObject(
                bucket: "moved", key: "originals/a.png", data: a,
                metadata: ["creation-date": "2023-11-14T22:13:20Z", "media-type": "image"])
            var moved = harness.configuration()
            moved.bucket = "moved"
            moved.rebind = true
            let rebound = try await harness.open(moved)
            let summary = try await rebound.sync()
            #expect(summary.removed == 1)
            #expect(try rebound.current(assetA).availability == .full)
            #expect(try rebound.current(assetA).isPinned)
            rebound.close()
            // From now on it belongs to the new bucket: the old one is refused without --rebind.
            let back = try await harness.open()
            await expectError(.boundToAnotherBucket) { try await back.sync() }
        }
    }
}
