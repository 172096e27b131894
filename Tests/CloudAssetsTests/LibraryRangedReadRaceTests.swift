import AssetStore
import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Ranged reads racing the removal of their range file (an eviction, a sync of a changed object): a read returns
/// bytes of the original or a typed error, never bytes of a file that took the range file's place.
@Suite("Library: ranged reads racing evictions", .heavy, .timeLimit(.minutes(1)))
struct LibraryRangedReadRaceTests {
    @Test("reads racing evictions of the same asset return only the original's bytes")
    func readsRacingEvictionsReturnOnlyOriginalBytes() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 256 * 1024, seed: 180)
            let (library, asset) = try await harness.openSynced(with: "race.png", data: original)
            let readersDone = Shared(0)
            let outcome = Shared((reads: 0, typedFailures: 0, wrong: [String]()))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for reader in 0..<4 {
                    group.addTask {
                        defer { readersDone.withLock { $0 += 1 } }
                        var state = UInt64(reader + 1) &* 0x9E37_79B9_7F4A_7C15
                        func next(_ bound: Int) -> Int {
                            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                            return Int((state >> 33) % UInt64(bound))
                        }
                        for _ in 0..<120 {
                            let start = Int64(next(original.count))
                            let end = min(Int64(original.count), start + 1 + Int64(next(48 * 1024)))
                            do {
                                let data = try await library.read(asset, range: start..<end)
                                let expected = original[Int(start)..<Int(end)]
                                outcome.withLock {
                                    $0.reads += 1
                                    if data != expected { $0.wrong.append("\(start)..<\(end)") }
                                }
                            } catch let error as CloudAssetsError where error.code == .localFileFailed {
                                // The file was removed under the read three times in a row: typed, nothing kept.
                                outcome.withLock { $0.typedFailures += 1 }
                            }
                        }
                    }
                }
                group.addTask {
                    var evictions = 0
                    while readersDone.withLock({ $0 }) < 4 {
                        try library.evict([asset])
                        evictions += 1
                        await Task.yield()
                    }
                    #expect(evictions > 0)
                }
                try await group.waitForAll()
            }
            let result = outcome.withLock { $0 }
            #expect(result.wrong.isEmpty, "reads returned other bytes: \(result.wrong.prefix(5))")
            #expect(result.reads > result.typedFailures)
            // Whatever is recorded now is on disk and is the original's.
            let record = try #require(try library.catalog.store.record(id: asset.rowID))
            if record.availability == .partial {
                let file = try Data(contentsOf: harness.storeURL.appendingPathComponent("partial/\(asset.id).ranges"))
                for piece in record.partialRanges.ranges {
                    #expect(
                        file[Int(piece.lowerBound)..<Int(piece.upperBound)]
                            == original[piece.lowerBound..<piece.upperBound])
                }
            }
        }
    }

    @Test("ranges written into a range file that was replaced at its path are not recorded")
    func rangesOfAReplacedFileAreNotRecorded() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 10_000, seed: 181)
            let (library, asset) = try await harness.openSynced(with: "replaced.png", data: original)
            #expect(try await library.read(asset, range: 0..<100) == original[0..<100])
            let url = harness.storeURL.appendingPathComponent("partial/\(asset.id).ranges")
            let file = try #require(try RangeFile(url: url, create: false))
            #expect(try file.isInPlace())
            try file.write(original[100..<200], at: 100)

            // An eviction removes the file; a new read creates another at the same path.
            try library.evict([asset])
            #expect(try !file.isInPlace())
            #expect(try await library.read(asset, range: 5000..<5100) == original[5000..<5100])
            #expect(try !file.isInPlace())

            await #expect(throws: OriginalsCache.RangeFileRace.self) {
                try await library.cache.commitRanges(
                    assetID: asset.rowID, adding: ByteRangeSet([Int64(100)..<200]), etag: asset.etag, file: file)
            }
            #expect(try library.current(asset).partialRanges == [5000..<5100])
        }
    }
    @Test("a range file of a read still running when the original is committed is removed by the read's commit")
    func rangeFileOfARunningReadGoesWithItsCommit() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 10_000, seed: 182)
            let (library, asset) = try await harness.openSynced(with: "overtaken.png", data: original)
            // A read has created its range file and written bytes, but has recorded no range yet.
            let url = harness.storeURL.appendingPathComponent("partial/\(asset.id).ranges")
            let file = try #require(try RangeFile(url: url, create: true))
            try file.write(original[0..<100], at: 0)

            // The download's commit leaves the file to the read (the record names no range).
            let downloaded = try await library.requestFile(for: asset, options: AssetLibrary.networkOptions())
            #expect(try Data(contentsOf: downloaded) == original)
            #expect(try library.current(asset).availability == .full)
            #expect(try file.isInPlace())

            // The read's commit finds the original verified and removes its file; nothing is recorded.
            let commit = try await library.cache.commitRanges(
                assetID: asset.rowID, adding: ByteRangeSet([Int64(0)..<100]), etag: asset.etag, file: file)
            #expect(commit == .originalVerified)
            #expect(!FileManager.default.fileExists(atPath: url.path))
            #expect(try library.current(asset).availability == .full)
        }
    }
}
