import CloudAssets
import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

/// The first sync of a bucket other tools wrote: usable after the listing, metadata read after it (issue 41).
@Suite("Library: a first sync is usable after the listing", .heavy, .timeLimit(.minutes(1)))
struct FirstSyncFillTests {
    /// What a sync reported, in order, with what the catalog held when it said it was ready.
    final class ProgressLog: Sendable {
        let events = LockedBox<[SyncProgress]>([])
        let atReady = LockedBox<(result: FetchResult, assets: [Asset])?>(nil)
    }

    /// Puts `count` small objects another tool wrote: `originals/f/0000.dat`, … (no fields of ours).
    static func putNumberedObjects(_ count: Int, in harness: LibraryHarness) throws {
        for i in 0..<count {
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: String(format: "originals/f/%04d.dat", i),
                data: Data("object \(i)".utf8))
        }
    }

    @Test("every object is fetchable after the listing; the capture dates read after it are changes with moves")
    func usableAfterListingThenFilled() async throws {
        try await withHarness { harness in
            // Listed (key order) oldest first by Last-Modified; taken in the opposite order.
            let count = 12
            let base = Date(timeIntervalSince1970: 1_500_000_000)
            var taken: [String: Date] = [:]
            for i in 0..<count {
                let key = String(format: "camera/IMG_%04d.jpg", i)
                let date = base.addingTimeInterval(Double(count - i) * 86_400)
                taken["originals/" + key] = date
                let jpeg = try QuadrantJPEG.make(width: 64, height: 48, date: date)
                try harness.server.putObject(bucket: LibraryHarness.bucket, key: "originals/" + key, data: jpeg)
            }
            let library = try await harness.open()
            var reader = ChangeReader(observing: library)
            let log = ProgressLog()
            let byDate = FetchOptions(sortBy: [.creationDate()])
            harness.server.requestLog.clear()
            let summary = try await library.sync(mode: .automatic, fetchThumbnails: false) { progress in
                log.events.withLock { $0.append(progress) }
                if case .catalogReady = progress, let all = try? library.fetchAssets(byDate) {
                    // Read now: a fetch result's assets are read from the catalog as they are accessed.
                    let assets = (0..<all.count).map { all[$0] }
                    log.atReady.withLock { $0 = (all, assets) }
                }
            }
            // When the sync said the catalog was ready, every object was there — all provisional, in listing order.
            let (ready, readyAssets) = try #require(log.atReady.withLock { $0 })
            #expect(
                readyAssets.count == count && readyAssets.allSatisfy { $0.provisionalFields.contains(.creationDate) })
            #expect(readyAssets.map(\.key) == readyAssets.map(\.key).sorted())
            let events = log.events.withLock { $0 }
            #expect(events.first == .catalogReady(assets: count, metadataPending: count))
            #expect(
                events.suffix(2) == [
                    .fillingMetadata(filled: count, of: count), .metadataComplete(assets: count, metadataPending: 0),
                ])
            #expect(summary.inserted == count && summary.metadataFilled == count && summary.metadataPending == 0)

            // Afterwards: capture dates from EXIF, nothing provisional, sorted newest key first.
            let after = try library.fetchAssets(byDate)
            let assets = (0..<after.count).map { after[$0] }
            #expect(assets.allSatisfy { $0.provisionalFields.isEmpty && $0.creationDate == taken[$0.key] })
            #expect(assets.map(\.key) == assets.map(\.key).sorted().reversed())

            // The fill reached observers as a change of its own: the provisional result becomes the final one,
            // with moves.
            _ = try await reader.next()  // the listing's insertion
            let filled = try await reader.next()
            let details = try #require(filled.details(for: ready))
            #expect(details.hasMoves && details.changedIndexes?.count == count)
            let final = details.fetchResultAfterChanges
            #expect((0..<final.count).map { final[$0].key } == assets.map(\.key))

            // One request per object once the bucket is known to be another tool's (the first reads HEAD first).
            let requests = harness.log.filter { $0.key?.hasPrefix("originals/") == true }
            let maxConnections = library.configuration.maxConnections
            #expect(requests.count <= count + maxConnections)
            #expect(Set(requests.compactMap(\.key)).count == count)
        }
    }

    @Test(
        "an object another tool replaces between the listing and its read keeps the listing's facts, not the new head")
    func replacedBeforeItsReadIsLeftToTheNextListing() async throws {
        try await withHarness { harness in
            let old = Data("the listed bytes".utf8)
            let etag = try harness.server.putObject(bucket: LibraryHarness.bucket, key: "originals/a.dat", data: old)
            try harness.server.putObject(bucket: LibraryHarness.bucket, key: "originals/b.dat", data: Data("b".utf8))
            // Another tool writes a.dat again just as the library asks for its head.
            let replacement = Data("another tool's new version".utf8)
            harness.server.faults.add(
                .replaceObject(with: replacement), keyPattern: "originals/a.dat", method: "HEAD", times: 1)
            let library = try await harness.open()
            let first = try await library.sync(fetchThumbnails: false)
            #expect(first.inserted == 2 && first.metadataFilled == 1 && first.metadataPending == 1)
            let listed = try library.asset(path: "a.dat")
            #expect(listed.etag == etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
            #expect(listed.size == Int64(old.count) && !listed.provisionalFields.isEmpty)
            #expect(try library.asset(path: "b.dat").provisionalFields.isEmpty)

            // The next listing sees the new version: a content change, read at once.
            let second = try await library.sync(mode: .full, fetchThumbnails: false)
            #expect(second.contentChanged == 1 && second.metadataPending == 0)
            let now = try library.asset(path: "a.dat")
            #expect(now.size == Int64(replacement.count) && now.provisionalFields.isEmpty)
        }
    }

    @Test("a long listing is filled beside it: what it committed is read while it goes on, each object once")
    func filledBesideTheListing() async throws {
        try await withHarness { harness in
            let count = 2500
            try Self.putNumberedObjects(count, in: harness)
            var configuration = harness.configuration()
            configuration.metadataFillBesideListingAfter = 0
            // One listing request at a time: the thumbnails' listing, the first page of originals, then the second
            // page, held until the test has seen the first page filled.
            configuration.maxConnections = 1
            let gate = FaultGate()
            harness.server.faults.add(
                .holdAfter(bytes: 0, gate: gate), keyPattern: "", method: "GET", afterRequests: 2, times: 1)
            let library = try await harness.open(configuration)
            var reader = ChangeReader(observing: library)
            let log = ProgressLog()
            harness.server.requestLog.clear()
            let sync = Task {
                try await library.sync(mode: .automatic, fetchThumbnails: false) { progress in
                    log.events.withLock { $0.append(progress) }
                }
            }
            // The first page's rows, then the fill's first batch of them, while the second page is held.
            let listed = try await reader.next()
            let filled = try await reader.next()
            #expect(listed.insertedIdentifiers.count == 1000 && filled.insertedIdentifiers.isEmpty)
            let early = try library.fetchAssets().filter { $0.provisionalFields.isEmpty }
            #expect(!early.isEmpty && early.count <= 1000)
            #expect(log.events.withLock { $0.isEmpty })
            gate.open()
            let summary = try await sync.value

            let events = log.events.withLock { $0 }
            guard case .catalogReady(let assets, let pending) = events.first else {
                Issue.record("no catalogReady first: \(events)")
                return
            }
            #expect(assets == count && pending < count)
            #expect(events.last == .metadataComplete(assets: count, metadataPending: 0))
            #expect(summary.inserted == count && summary.metadataFilled == count && summary.metadataPending == 0)
            #expect(try library.fetchAssets().allSatisfy { $0.provisionalFields.isEmpty })
            // Each object read once: the fill after the listing reads only what the one beside it did not.
            let heads = harness.log.filter { $0.method == "HEAD" }.compactMap(\.key)
            #expect(heads.count == count && Set(heads).count == count)
        }
    }

    @Test("a fill cut short keeps what it committed, and the next sync reads only the rest")
    func interruptedFillResumes() async throws {
        try await withHarness { harness in
            let count = 3000
            try Self.putNumberedObjects(count, in: harness)
            let library = try await harness.open()
            let (cut, cutter) = AsyncStream<Void>.makeStream()
            let sync = Task {
                try await library.sync(mode: .automatic, fetchThumbnails: false) { progress in
                    // Cut once a batch is committed and more are to come.
                    if case .fillingMetadata(let filled, let total) = progress, filled > 0, filled < total {
                        cutter.yield()
                    }
                }
            }
            var cuts = cut.makeAsyncIterator()
            _ = await cuts.next()
            sync.cancel()
            await #expect(throws: (any Error).self) { try await sync.value }

            let provisional = try library.fetchAssets().filter { !$0.provisionalFields.isEmpty }
            #expect(!provisional.isEmpty && provisional.count < count)
            let filledKeys = Set(try library.fetchAssets().filter { $0.provisionalFields.isEmpty }.map(\.key))
            #expect(try library.fetchAssets().count == count)

            harness.server.requestLog.clear()
            let again = try await library.sync(fetchThumbnails: false)
            #expect(again.metadataFilled == provisional.count && again.metadataPending == 0)
            let heads = harness.log.filter { $0.method == "HEAD" }.compactMap(\.key)
            #expect(heads.count == provisional.count)
            #expect(filledKeys.isDisjoint(with: heads))
            #expect(try library.fetchAssets().allSatisfy { $0.provisionalFields.isEmpty })
        }
    }
}
