import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// `read(_:range:)`: byte ranges of an original, fetching only what is not on disk yet.
@Suite("Library: ranged reads", .heavy, .timeLimit(.minutes(1)))
struct LibraryRangedReadTests {
    @Test("reads fetch only the missing ranges and the asset becomes partial")
    func readsFetchOnlyMissingRanges() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 100_000, seed: 40)
            try harness.put("r.png", data: original, thumbnail: testBytes(count: 50, seed: 41))
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "r.png")
            var reader = ChangeReader(observing: library)
            func ranges() -> [String?] { harness.gets(of: "r.png").map(\.rangeHeader) }

            #expect(try await library.read(asset, range: 0..<1000) == original[0..<1000])
            #expect(ranges() == ["bytes=0-999"])
            var current = try library.current(asset)
            #expect(current.availability == .partial)
            #expect(current.partialRanges == [0..<1000])
            let change = try await reader.next()
            #expect(change.details(for: asset)?.objectAfterChanges?.availability == .partial)

            // Overlapping: only the part after 1000 is fetched.
            #expect(try await library.read(asset, range: 500..<3000) == original[500..<3000])
            #expect(ranges() == ["bytes=0-999", "bytes=1000-2999"])
            #expect(try library.current(asset).partialRanges == [0..<3000])

            // Already on disk: no request at all.
            let requests = harness.log.count
            #expect(try await library.read(asset, range: 0..<3000) == original[0..<3000])
            #expect(
                try await library.read(asset, range: 100..<200, isNetworkAccessAllowed: false) == original[100..<200])
            #expect(harness.log.count == requests)

            // A disjoint range, then one spanning two holes: one GET per hole.
            #expect(try await library.read(asset, range: 10_000..<11_000) == original[10_000..<11_000])
            #expect(try await library.read(asset, range: 2000..<12_000) == original[2000..<12_000])
            #expect(
                ranges() == [
                    "bytes=0-999", "bytes=1000-2999", "bytes=10000-10999", "bytes=3000-9999", "bytes=11000-11999",
                ])
            current = try library.current(asset)
            #expect(current.availability == .partial)
            #expect(current.partialRanges == [0..<12_000])
            #expect(harness.gets(of: "r.png").allSatisfy { $0.ifMatch != nil })
        }
    }

    @Test("a read past the end is clamped; a read starting past the end is an invalid range")
    func readsAreClampedToTheOriginal() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 5000, seed: 42)
            try harness.put("r.png", data: original)
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "r.png")
            #expect(try await library.read(asset, range: 4000..<9000) == original[4000..<5000])
            #expect(try await library.read(asset, range: 5000..<5000) == Data())
            // Starting at or past the end: HTTP's "range not satisfiable", never an empty answer.
            for start: Int64 in [5000, 5001] {
                await expectError(.invalidRange) {
                    try await library.read(asset, range: start..<6000)
                }
            }
            #expect(harness.gets(of: "r.png").map(\.rangeHeader) == ["bytes=4000-4999"])
        }
    }

    @Test("a read of missing bytes without network throws in-cloud and sends nothing")
    func readWithoutNetworkThrowsInCloud() async throws {
        try await withHarness { harness in
            try harness.put("r.png", data: testBytes(count: 5000, seed: 43))
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "r.png")
            let requests = harness.log.count
            await expectError(.networkNotAllowed) {
                try await library.read(asset, range: 0..<10, isNetworkAccessAllowed: false)
            }
            #expect(harness.log.count == requests)
            #expect(try library.current(asset).availability == .cloudOnly)
        }
    }

    @Test("a full download after partial reads makes the asset full and reads stop using the network")
    func fullDownloadSupersedesPartialRanges() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 20_000, seed: 44)
            try harness.put("r.png", data: original)
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "r.png")
            _ = try await library.read(asset, range: 0..<100)
            #expect(try library.current(asset).availability == .partial)
            #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == original)
            let current = try library.current(asset)
            #expect(current.availability == .full)
            #expect(current.partialRanges == [0..<20_000])
            let requests = harness.log.count
            #expect(try await library.read(asset, range: 15_000..<16_000) == original[15_000..<16_000])
            #expect(harness.log.count == requests)
            #expect(
                !FileManager.default.fileExists(
                    atPath: harness.storeURL.appendingPathComponent("partial/\(asset.id).ranges").path))
        }
    }
}

@Suite("Library: concurrent ranged reads", .heavy, .timeLimit(.minutes(1)))
struct LibraryConcurrentRangedReadTests {
    @Test("concurrent reads of different ranges keep every range, and later reads return the right bytes")
    func concurrentReadsKeepEveryRange() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 200_000, seed: 45)
            try harness.put("r.png", data: original)
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "r.png")
            // Both GETs are answered late, so both reads start from an asset with no ranges on disk.
            harness.server.faults.add(.latency(milliseconds: 300), keyPattern: "originals/r.png", method: "GET")
            async let first = library.read(asset, range: 0..<50_000)
            async let second = library.read(asset, range: 100_000..<150_000)
            let (a, b) = try await (first, second)
            #expect(a == original[0..<50_000])
            #expect(b == original[100_000..<150_000])
            #expect(harness.gets(of: "r.png").count == 2)

            let current = try library.current(asset)
            #expect(current.partialRanges == [0..<50_000, 100_000..<150_000])
            // Whatever the record says is present must be the original's bytes.
            for range in current.partialRanges {
                let bytes = try await library.read(
                    asset, range: Int64(range.lowerBound)..<Int64(range.upperBound), isNetworkAccessAllowed: false)
                #expect(bytes == original[Int(range.lowerBound)..<Int(range.upperBound)])
            }
        }
    }
}
