import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Reopening after a crash: the catalog is made consistent with the files on disk.
@Suite("Library: recovery on reopen", .heavy, .timeLimit(.minutes(1)))
struct LibraryRecoveryTests {
    @Test("reopening repairs a crash state: missing full file, short range file, lost thumbnail, orphans, .part")
    func reopenRepairsSimulatedCrashState() async throws {
        try await withHarness { harness in
            var contents: [String: Data] = [:]
            for (index, name) in ["a.png", "b.png", "c.png", "d.png", "e.png"].enumerated() {
                let data = testBytes(count: 50_000, seed: 180 + UInt64(index))
                contents[name] = data
                try harness.put(name, data: data, thumbnail: testBytes(count: 40, seed: 190 + UInt64(index)))
            }
            var library = try await harness.open()
            try await library.sync()
            let a = try library.asset(path: "a.png")
            let b = try library.asset(path: "b.png")
            let c = try library.asset(path: "c.png")
            let d = try library.asset(path: "d.png")
            let e = try library.asset(path: "e.png")
            _ = try await library.data(for: a, options: AssetLibrary.networkOptions())
            _ = try await library.read(b, range: 0..<4000)
            _ = try await library.data(for: e, options: AssetLibrary.networkOptions())
            library.closeAsIfCrashed()

            // What a crash can leave behind.
            let fm = FileManager.default
            let root = harness.storeURL
            func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
            try fm.removeItem(atPath: path("originals/\(a.id).png"))  // `full` without its file
            let ranges = try FileHandle(forWritingTo: URL(fileURLWithPath: path("partial/\(b.id).ranges")))
            try ranges.truncate(atOffset: 1000)  // `partial` whose bytes are not all there
            try ranges.close()
            try contents["c.png"]![0..<20_000].write(to: URL(fileURLWithPath: path("originals/\(c.id).png.part")))
            try fm.removeItem(atPath: path("thumbnails/\(d.id).jpg"))  // thumbnail recorded, file gone
            let orphans = [
                "originals/999999.png", "originals/999999.png.part", "partial/999999.ranges",
                "thumbnails/999999.jpg", "originals/\(e.id).png.part",
            ]
            for orphan in orphans { try Data("x".utf8).write(to: URL(fileURLWithPath: path(orphan))) }
            // A name the library never gives a file: not the library's, left alone.
            try Data("x".utf8).write(to: URL(fileURLWithPath: path("originals/junk")))

            library = try await harness.open()
            let report = library.recovery
            #expect(report.fullDowngraded == 1)
            #expect(report.partialDowngraded == 1)
            #expect(report.thumbnailsLost == 1)
            #expect(report.partFilesKept == 1)
            // The orphans, and b's range file, which no longer matches its (downgraded) record.
            #expect(report.orphanFilesRemoved == orphans.count + 1)
            for orphan in orphans { #expect(!fm.fileExists(atPath: path(orphan)), "\(orphan) should be removed") }
            #expect(fm.fileExists(atPath: path("originals/junk")))
            #expect(report.foreignFilesKept == 1)
            #expect(fm.fileExists(atPath: path("originals/\(c.id).png.part")))
            #expect(fm.fileExists(atPath: path("originals/\(e.id).png")))

            #expect(try library.current(a).availability == .thumbnail)
            #expect(try library.current(b).availability == .thumbnail)
            #expect(try library.current(b).partialRanges.isEmpty)
            #expect(try library.current(c).availability == .thumbnail)
            #expect(try library.current(d).availability == .cloudOnly)
            #expect(try library.current(d).hasThumbnail == false)
            #expect(try library.current(e).availability == .full)

            // Every asset serves correct bytes again; the intact one without the network.
            let requests = harness.log.count
            #expect(try await library.data(for: e) == contents["e.png"])
            #expect(harness.log.count == requests)
            for (asset, name) in [(a, "a.png"), (b, "b.png"), (c, "c.png"), (d, "d.png")] {
                #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == contents[name])
                #expect(try library.current(asset).availability == .full)
            }
            // The lost thumbnail comes back with the next sync.
            let summary = try await library.sync()
            #expect(summary.thumbnailsFetched == 1)
            #expect(try library.current(d).hasThumbnail)
        }
    }

    @Test("reopening a consistent library repairs nothing and notifies no change")
    func reopenOfConsistentLibraryChangesNothing() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 5000, seed: 200), thumbnail: testBytes(count: 9, seed: 201))
            try harness.put("b.png", data: testBytes(count: 5000, seed: 202))
            var library = try await harness.open()
            try await library.sync()
            _ = try await library.data(for: try library.asset(path: "a.png"), options: AssetLibrary.networkOptions())
            _ = try await library.read(try library.asset(path: "b.png"), range: 10..<20)
            let token = library.currentChangeToken
            library.closeAsIfCrashed()  // so that the open scans every file
            library = try await harness.open()
            let report = library.recovery
            #expect(report.fullDowngraded == 0 && report.partialDowngraded == 0 && report.thumbnailsLost == 0)
            #expect(report.orphanFilesRemoved == 0 && report.partFilesKept == 0)
            #expect(library.currentChangeToken == token)
            #expect(try library.asset(path: "a.png").availability == .full)
            #expect(try library.asset(path: "b.png").partialRanges == [10..<20])
        }
    }

    @Test(
        "after a clean close the next open scans no file but the imports' own, and a file removed meanwhile is fetched")
    func cleanCloseSkipsTheScan() async throws {
        try await withHarness { harness in
            let bytes = testBytes(count: 5000, seed: 300)
            try harness.put("a.png", data: bytes)
            let configuration = harness.quietConfiguration()
            var library = try await harness.open(configuration)
            try await library.sync()
            let a = try library.asset(path: "a.png")
            _ = try await library.data(for: a, options: AssetLibrary.networkOptions())
            // An import that is not uploaded yet: its file in the library is its only copy.
            let jpeg = jpegWithEXIF(width: 800, height: 600, orientation: 1, date: "2024:07:14 09:30:05", offset: nil)
            let ids = try await library.performChanges {
                $0.createAsset(fromFileAt: try! harness.sourceFile("IMG_1.JPG", jpeg))
            }
            let imported = try #require(try library.asset(withLocalIdentifier: ids[0]))
            let fm = FileManager.default
            let root = harness.storeURL
            let marker = root.appendingPathComponent(CleanClose.fileName).path
            #expect(!fm.fileExists(atPath: marker))
            library.close()
            #expect(fm.fileExists(atPath: marker), "the last library to close marks the folder")

            // While it is closed: both originals removed by hand, and a file the library would call an orphan.
            try fm.removeItem(atPath: library.cache.files.original(id: a.rowID, key: a.key).path)
            try fm.removeItem(atPath: library.cache.files.original(id: imported.rowID, key: imported.key).path)
            let orphan = root.appendingPathComponent("originals/999999.png").path
            #expect(fm.createFile(atPath: orphan, contents: Data("left".utf8)))

            library = try await harness.open(configuration)
            #expect(!fm.fileExists(atPath: marker), "the marker is gone while the library is open")
            let report = library.recovery
            #expect(report.importsLost == 1, "the import's only copy is checked")
            #expect(try library.asset(withLocalIdentifier: ids[0]) == nil)
            #expect(report.fullDowngraded == 0 && report.orphanFilesRemoved == 0, "nothing else is scanned")
            #expect(fm.fileExists(atPath: orphan))
            // The downloaded original is found missing when asked for, and fetched again.
            let again = try await library.data(
                for: try library.asset(path: "a.png"), options: AssetLibrary.networkOptions())
            #expect(again == bytes)

            // A crash (no marker): the next open scans, and the orphan goes.
            library.closeAsIfCrashed()
            library = try await harness.open(configuration)
            #expect(library.recovery.orphanFilesRemoved == 1)
            #expect(!fm.fileExists(atPath: orphan))
        }
    }

    @Test("a library closed while another has the folder open does not mark it closed")
    func closeWhileAnotherIsOpenLeavesNoMarker() async throws {
        try await withHarness { harness in
            let first = try await harness.open(harness.quietConfiguration())
            let second = try await harness.open(harness.quietConfiguration())
            let marker = harness.storeURL.appendingPathComponent(CleanClose.fileName).path
            first.close()
            #expect(!FileManager.default.fileExists(atPath: marker))
            second.close()
            #expect(FileManager.default.fileExists(atPath: marker))
        }
    }

    @Test("a thumbnail removed while the library was closed cleanly is forgotten when asked for, and fetched again")
    func missingThumbnailAfterCleanCloseIsFetchedAgain() async throws {
        try await withHarness { harness in
            let thumbnail = testBytes(count: 90, seed: 401)
            try harness.put("a.png", data: testBytes(count: 5000, seed: 400), thumbnail: thumbnail)
            var library = try await harness.open()
            try await library.sync()
            let a = try library.asset(path: "a.png")
            #expect(try library.localThumbnailData(forLocalIdentifier: a.localIdentifier) == thumbnail)
            library.close()
            try FileManager.default.removeItem(atPath: library.cache.files.thumbnail(id: a.rowID).path)

            library = try await harness.open()
            #expect(library.recovery.thumbnailsLost == 0, "not looked for at the open")
            #expect(try library.localThumbnailData(forLocalIdentifier: a.localIdentifier) == nil)
            #expect(try library.asset(path: "a.png").hasThumbnail == false, "forgotten once found missing")
            #expect(try await library.sync().thumbnailsFetched == 1)
            #expect(try library.localThumbnailData(forLocalIdentifier: a.localIdentifier) == thumbnail)
        }
    }

    @Test("after a clean close a partial original whose range file was cut is still moved down at the open")
    func partialOriginalIsCheckedAfterACleanClose() async throws {
        try await withHarness { harness in
            try harness.put("b.png", data: testBytes(count: 8000, seed: 420))
            var library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            let b = try library.asset(path: "b.png")
            _ = try await library.read(b, range: 4000..<6000)
            library.close()
            // Cut by hand while closed: a read would otherwise trust the recorded ranges.
            let ranges = try FileHandle(forWritingTo: library.cache.files.partial(id: b.rowID))
            try ranges.truncate(atOffset: 100)
            try ranges.close()
            library = try await harness.open()
            #expect(library.recovery.partialDowngraded == 1)
            #expect(try library.asset(path: "b.png").partialRanges.isEmpty)
        }
    }

    @Test("a library closed with a download under way does not mark the folder closed cleanly")
    func closeDuringADownloadLeavesNoMarker() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 200_000, seed: 410))
            let library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            let a = try library.asset(path: "a.png")
            // The answer stalls after its first bytes: the download is under way when the library closes.
            harness.server.faults.add(.stallAfter(bytes: 1000), keyPattern: "originals/a.png", method: "GET")
            let download = Task { try await library.data(for: a, options: AssetLibrary.networkOptions()) }
            let deadline = ContinuousClock.now + .seconds(10)
            while library.cache.downloads.isIdle && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(!library.cache.downloads.isIdle)
            library.close()
            _ = try? await download.value
            let marker = harness.storeURL.appendingPathComponent(CleanClose.fileName).path
            #expect(!FileManager.default.fileExists(atPath: marker), "the next open scans")
        }
    }
}
