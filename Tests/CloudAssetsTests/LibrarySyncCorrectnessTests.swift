import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// What a sync reports is what the bucket holds: odd keys, metadata-only changes, interrupted first syncs.
@Suite("Library: sync reflects the bucket", .heavy, .timeLimit(.minutes(1)))
struct LibrarySyncCorrectnessTests {
    @Test("keys with dot segments are sent exactly as listed; a key the service refuses is skipped, not fatal")
    func oddKeysAreKeptOrSkipped() async throws {
        try await withHarness { harness in
            let dotted = testBytes(count: 5000, seed: 11)
            try harness.put("hostile/./dot/./x.png", data: dotted)
            try harness.put("hostile/../up.png", data: testBytes(count: 10, seed: 12))
            try harness.put("plain.png", data: testBytes(count: 10, seed: 13))
            try harness.put("refused.png", data: testBytes(count: 10, seed: 14))
            harness.server.faults.add(.internalError, keyPattern: "originals/refused.png", method: "HEAD")
            let library = try await harness.open()
            let summary = try await library.sync()
            // Every listed object is in the catalog; the one whose HEAD is refused keeps its listing's facts only.
            #expect(summary.inserted == 4 && summary.metadataFilled == 3 && summary.metadataPending == 1)
            #expect(summary.skipped.map(\.key) == ["originals/refused.png"])
            #expect(summary.skipped.first?.reason.contains("500") == true)
            let keys = Set(try library.fetchAssets().map(\.key))
            #expect(
                keys == [
                    "originals/hostile/./dot/./x.png", "originals/hostile/../up.png", "originals/plain.png",
                    "originals/refused.png",
                ])
            #expect(try library.asset(path: "refused.png").provisionalFields.contains(.creationDate))
            #expect(try library.asset(path: "plain.png").provisionalFields.isEmpty)
            let asset = try library.asset(path: "hostile/./dot/./x.png")
            #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == dotted)
            #expect(harness.log.contains { $0.method == "HEAD" && $0.key == "originals/hostile/./dot/./x.png" })

            // The refused object is tried again, and its metadata read once the service answers.
            harness.server.faults.removeAll()
            let again = try await library.sync()
            #expect(again.metadataFilled == 1 && again.metadataPending == 0 && again.skipped.isEmpty)
            #expect(try library.asset(path: "refused.png").provisionalFields.isEmpty)
        }
    }

    @Test("a metadata-only change (same ETag, new Last-Modified) is seen, delivered, and moves the asset")
    func metadataOnlyChangeIsSeen() async throws {
        try await withHarness { harness in
            let data = testBytes(count: 3000, seed: 21)
            try harness.put("a.png", data: data, created: Date(timeIntervalSince1970: 1_600_000_000))
            try harness.put(
                "b.png", data: testBytes(count: 30, seed: 22), created: Date(timeIntervalSince1970: 1_650_000_000))
            let library = try await harness.open()
            try await library.sync()
            let a = try library.asset(path: "a.png")
            _ = try await library.data(for: a, options: AssetLibrary.networkOptions())
            let byDate = try library.fetchAssets(FetchOptions(sortBy: [.creationDate(ascending: true)]))
            #expect(byDate.map(\.key) == ["originals/a.png", "originals/b.png"])
            var reader = ChangeReader(observing: library)

            // What `aws s3 cp s3://b/K s3://b/K --metadata creation-date=… --metadata-directive REPLACE` does:
            // the same bytes (so the same ETag) with new metadata and a new Last-Modified.
            let etag = try harness.put("a.png", data: data, created: Date(timeIntervalSince1970: 1_700_000_000))
            #expect(ETagText(etag) == ETagText(try library.current(a).etag))
            let summary = try await library.sync()
            #expect(summary.metadataChanged == 1 && summary.contentChanged == 0)
            let after = try library.current(a)
            #expect(after.creationDate == Date(timeIntervalSince1970: 1_700_000_000))
            #expect(after.availability == .full, "same bytes: the verified original stays")
            let change = try await reader.next()
            let details = try #require(change.details(for: byDate))
            #expect(details.fetchResultAfterChanges.map(\.key) == ["originals/b.png", "originals/a.png"])
            #expect(details.hasMoves)

            // Nothing changed since: no HEAD, no write.
            let quiet = try await library.sync()
            #expect(quiet.headRequests == 0 && quiet.transactions == 0)
        }
    }

    @Test("a creation date with an offset and a long fraction is read; text that is not a date falls back, no crash")
    func strangersCreationDatesAreReadByHand() async throws {
        try await withHarness { harness in
            // Foundation's ISO8601DateFormatter (ICU) died of SIGFPE on the first (Fuzz/regressions/credentials).
            let dates = [
                "long": "2026-05-01T14:00:00." + String(repeating: "2", count: 80) + "+02:00",
                "offset": "2026-05-01T08:30:00-03:30", "junk": "2026-05-01T12:00:00.+99:99",
            ]
            for (name, text) in dates {
                try harness.server.putObject(
                    bucket: LibraryHarness.bucket, key: "originals/\(name).png", data: Data(name.utf8),
                    metadata: ["creation-date": text, "media-type": "image", "pixel-width": "1", "pixel-height": "1"])
            }
            let library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            let noon = Date(timeIntervalSince1970: 1_777_636_800)
            #expect(
                abs(try library.asset(path: "long.png").creationDate.timeIntervalSince(noon) - 0.222_222_222) < 1e-6)
            #expect(try library.asset(path: "offset.png").creationDate == noon)
            let junk = try library.asset(path: "junk.png")
            #expect(junk.creationDate != noon, "not a date: the object's Last-Modified instead")
        }
    }

    @Test("an interrupted first sync then a successful one removes objects deleted from the part already done")
    func resumedSyncReconcilesTheWholeBucket() async throws {
        try await withHarness { harness in
            for index in 0..<2500 {
                try harness.server.putObject(
                    bucket: LibraryHarness.bucket, key: String(format: "originals/o%05d.png", index),
                    data: Data("\(index)".utf8))
            }
            var configuration = harness.configuration()
            configuration.metadataSource = .listingOnly
            let library = try await harness.open(configuration)
            // The thumbnails listing and the first originals page succeed; the second page fails.
            let fault = harness.server.faults.add(.internalError, keyPattern: "", method: "GET", afterRequests: 2)
            await #expect(throws: (any Error).self) { try await library.sync() }
            #expect(try library.fetchAssets().count == 1000)
            harness.server.faults.remove(fault)

            try harness.server.deleteObject(bucket: LibraryHarness.bucket, key: "originals/o00000.png")
            let summary = try await library.sync()
            #expect(summary.resumed)
            #expect(summary.inserted == 1500)
            #expect(summary.removed == 1)
            #expect(summary.listed == 2499)
            let keys = try library.fetchAssets().map(\.key)
            #expect(keys.count == 2499 && !keys.contains("originals/o00000.png"))
        }
    }
}

/// An ETag without its quotes, for comparing the server's and the catalog's spellings.
private func ETagText(_ etag: String) -> String { etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
