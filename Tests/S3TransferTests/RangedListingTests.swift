import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

@Suite(.heavy) struct KeySpaceTests {
    @Test func aMidpointLiesStrictlyBetweenItsEnds() {
        let pairs: [(String, String?)] = [
            ("p/0000999.jpg", nil), ("p/0000999.jpg", "p/0199999.jpg"), ("p/a", "p/b"), ("p/a", "p/a~~~"),
            ("p/2024/01/IMG_0001.HEIC", "p/2024/12/IMG_9999.HEIC"), ("p/ü", "p/ü~"), ("p/", nil),
        ]
        for (lower, upper) in pairs {
            guard let middle = KeySpace.midpoint(lower, upper, prefix: "p/") else {
                Issue.record("no midpoint between \(lower) and \(upper ?? "the end")")
                continue
            }
            #expect(lower.utf8.lexicographicallyPrecedes(middle.utf8))
            if let upper { #expect(middle.utf8.lexicographicallyPrecedes(upper.utf8)) }
            #expect(middle.hasPrefix("p/"))
        }
    }

    @Test func keysWithNoRoomBetweenThemHaveNoMidpoint() {
        #expect(KeySpace.midpoint("p/a", "p/a ", prefix: "p/") == nil)
        #expect(KeySpace.midpoint("p/abcdefghijk", "p/abcdefghijl", prefix: "p/") != nil)
        // Past printable ASCII every byte counts alike: no split inside a run of non-ASCII characters.
        #expect(KeySpace.midpoint("p/é", "p/ê", prefix: "p/") == nil)
        #expect(KeySpace.midpoint("p/b", "p/a", prefix: "p/") == nil)
        #expect(KeySpace.midpoint("p/~~~~~~~~~~", nil, prefix: "p/") == nil)
    }

    @Test func theWidestRangeMeasuresWidest() {
        let whole = KeySpace.width(from: nil, to: nil, prefix: "p/")
        let half = KeySpace.width(from: "p/O", to: nil, prefix: "p/")
        let narrow = KeySpace.width(from: "p/0000999", to: "p/0001000", prefix: "p/")
        #expect(whole == 1)
        #expect(half > narrow && half < whole)
    }
}

@Suite(.heavy, .timeLimit(.minutes(1))) struct RangedListingTests {
    /// What one run handed over: the intervals, and the frontiers reported (with the keys delivered by then).
    final class Delivery: Sendable {
        let intervals = LockedBox([ListedInterval]())
        let frontierViolations = LockedBox([String]())

        func record(_ interval: ListedInterval) { intervals.withLock { $0.append(interval) } }

        /// Checks that every key up to `frontier` was delivered in an interval already handed over.
        func check(frontier: String, after: String?, against keys: [String]) {
            let delivered = intervals.withLock { Set($0.flatMap { $0.objects.map(\.key) }) }
            let missing = keys.filter { key in
                (after.map { $0.utf8.lexicographicallyPrecedes(key.utf8) } ?? true)
                    && !frontier.utf8.lexicographicallyPrecedes(key.utf8) && !delivered.contains(key)
            }
            if let first = missing.first {
                frontierViolations.withLock {
                    $0.append("\(missing.count) keys ≤ frontier \(frontier) not delivered, first \(first)")
                }
            }
        }
    }

    /// Lists `(after, through]` and checks the intervals tile it exactly and carry every key once.
    func listAndCheck(
        _ fixture: FakeS3Fixture, keys: [String], prefix: String, width: Int, after: String? = nil,
        through: String? = nil
    ) async throws {
        let delivery = Delivery()
        let listing = RangedListing(client: fixture.client, bucket: FakeS3Fixture.bucket, prefix: prefix, width: width)
        try await listing.run(after: after, through: through) {
            delivery.record($0)
        } progress: { frontier in
            delivery.check(frontier: frontier, after: after, against: keys)
        }
        let intervals = delivery.intervals.withLock { $0 }.sorted { lhs, rhs in
            guard let l = lhs.after else { return rhs.after != nil }
            guard let r = rhs.after else { return false }
            return l.utf8.lexicographicallyPrecedes(r.utf8)
        }
        // The intervals tile the range: each starts where the one before ended.
        #expect(intervals.first?.after == after)
        #expect(intervals.last?.through == through)
        for (previous, next) in zip(intervals, intervals.dropFirst()) {
            #expect(previous.through != nil && previous.through == next.after)
        }
        // Each interval carries exactly the keys inside it, in order.
        for interval in intervals {
            let inside = keys.filter { key in
                (interval.after.map { $0.utf8.lexicographicallyPrecedes(key.utf8) } ?? true)
                    && (interval.through.map { !$0.utf8.lexicographicallyPrecedes(key.utf8) } ?? true)
            }
            #expect(interval.objects.map(\.key) == inside)
        }
        let expected = keys.filter { key in
            (after.map { $0.utf8.lexicographicallyPrecedes(key.utf8) } ?? true)
                && (through.map { !$0.utf8.lexicographicallyPrecedes(key.utf8) } ?? true)
        }
        #expect(intervals.flatMap { $0.objects.map(\.key) } == expected)
        #expect(delivery.frontierViolations.withLock { $0 }.isEmpty)
    }

    static func sorted(_ keys: some Sequence<String>) -> [String] {
        keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    @Test(arguments: [1, 2, 8])
    func sequentialKeysAreListedOnceInIntervalsThatTileTheRange(width: Int) async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let keys = (0..<4500).map { String(format: "originals/%07d.jpg", $0) }
        for key in keys { try fixture.server.putObject(bucket: FakeS3Fixture.bucket, key: key, data: Data()) }
        try fixture.server.putObject(bucket: FakeS3Fixture.bucket, key: "other/x", data: Data())
        try await listAndCheck(fixture, keys: keys, prefix: "originals/", width: width)
        // Listing went on several ranges at once: more requests than pages, several starting after a split point.
        if width > 1 {
            let starts = fixture.server.requestLog.entries().filter { $0.query.contains("start-after") }
            #expect(!starts.isEmpty)
        }
    }

    @Test func randomKeySetsAndRangesAreListedExactly() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        var random = SplitMix64(seed: 7)
        let alphabet = Array("0123456789abcdefghijklmnopqrstuvwxyz ABC~-_/.é日")
        var keys = Set<String>()
        // Dense runs, sparse random names, names sharing long prefixes, non-ASCII.
        for run in 0..<3 {
            for i in 0..<1200 { keys.insert("p/run\(run)/\(String(format: "%05d", i))") }
        }
        for _ in 0..<1500 {
            let length = 1 + Int(random.next(below: 12))
            keys.insert(
                "p/" + String((0..<length).map { _ in alphabet[Int(random.next(below: UInt64(alphabet.count)))] }))
        }
        for i in 0..<300 { keys.insert("p/日本/写真\(i).heic") }
        let sorted = Self.sorted(keys)
        for key in sorted { try fixture.server.putObject(bucket: FakeS3Fixture.bucket, key: key, data: Data()) }
        try await listAndCheck(fixture, keys: sorted, prefix: "p/", width: 6)
        try await listAndCheck(
            fixture, keys: sorted, prefix: "p/", width: 4, after: sorted[1000], through: sorted[5000])
        try await listAndCheck(fixture, keys: sorted, prefix: "p/", width: 3, through: sorted[10])
        try await listAndCheck(fixture, keys: sorted, prefix: "p/", width: 3, after: sorted.last)
    }

    /// Many small pages listed by many workers, each request suspending a random number of times: splits happen
    /// all the time, while other workers claim and start segments. Every listing ends, each key is handed over
    /// exactly once, and the intervals tile the range (a worker that took a segment by its position in the plan,
    /// which a split in front of it moves, listed another worker's segment twice and left its own to nobody: the
    /// sync hung).
    @Test func listingsWithConstantSplitsEndAndCoverEveryKeyOnce() async throws {
        var random = SplitMix64(seed: 11)
        for round in 0..<60 {
            var keys = Set<String>()
            for _ in 0..<(400 + Int(random.next(below: 1200))) {
                keys.insert(String(format: "p/%08llu", random.next(below: 100_000_000)))
            }
            let sorted = Self.sorted(keys)
            let pageSize = 3 + Int(random.next(below: 6))
            let listing = RangedListing(prefix: "p/", width: 8) { token, startAfter in
                for _ in 0..<Int.random(in: 0...3) { await Task.yield() }
                let from = token ?? startAfter
                // The first key after `from`.
                var start = 0
                if let from {
                    var high = sorted.count
                    while start < high {
                        let middle = (start + high) / 2
                        if from.utf8.lexicographicallyPrecedes(sorted[middle].utf8) {
                            high = middle
                        } else {
                            start = middle + 1
                        }
                    }
                }
                let end = min(sorted.count, start + pageSize)
                let objects = sorted[start..<end].map {
                    S3ObjectSummary(key: $0, size: 1, etag: "e", lastModified: Date(timeIntervalSince1970: 0))
                }
                let truncated = end < sorted.count
                return ListObjectsPage(
                    objects: objects, commonPrefixes: [], isTruncated: truncated,
                    nextContinuationToken: truncated ? sorted[end - 1] : nil)
            }
            let delivered = LockedBox([ListedInterval]())
            try await listing.run(after: nil, through: nil) { interval in
                for _ in 0..<Int.random(in: 0...2) { await Task.yield() }
                delivered.withLock { $0.append(interval) }
            }
            let intervals = delivered.withLock { $0 }.sorted { lhs, rhs in
                guard let l = lhs.after else { return rhs.after != nil }
                guard let r = rhs.after else { return false }
                return l.utf8.lexicographicallyPrecedes(r.utf8)
            }
            #expect(intervals.flatMap { $0.objects.map(\.key) } == sorted, "round \(round)")
            #expect(intervals.first?.after == nil && intervals.last?.through == nil, "round \(round)")
            for (previous, next) in zip(intervals, intervals.dropFirst()) {
                #expect(previous.through != nil && previous.through == next.after, "round \(round)")
            }
        }
    }

    /// Keys with markup and control characters come back exactly (escaped by the server, read back by the
    /// client's parser), beside plain ones the server sends as they are.
    @Test func keysWithMarkupAndControlCharactersAreListedExactly() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let keys = Self.sorted([
            "m/a&b", "m/<tag>", "m/\"quoted\"", "m/it's", "m/tab\tkey", "m/del\u{7F}", "m/&amp;", "m/plain",
            "m/caf\u{E9}", "m/]]>",
        ])
        for key in keys { try fixture.server.putObject(bucket: FakeS3Fixture.bucket, key: key, data: Data()) }
        try await listAndCheck(fixture, keys: keys, prefix: "m/", width: 1)
    }

    @Test func anEmptyRangeIsOneIntervalWithNoObjects() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        try await listAndCheck(fixture, keys: [], prefix: "nothing/", width: 4)
        #expect(fixture.server.requestLog.entries().count == 1)
    }

    @Test func aFailedRequestFailsTheListingAndNoIntervalCoversWhatWasNotListed() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let keys = (0..<3000).map { String(format: "k/%05d", $0) }
        for key in keys { try fixture.server.putObject(bucket: FakeS3Fixture.bucket, key: key, data: Data()) }
        fixture.server.faults.add(.internalError, keyPattern: "", method: "GET", afterRequests: 2)
        let delivery = Delivery()
        let listing = RangedListing(client: fixture.client, bucket: FakeS3Fixture.bucket, prefix: "k/", width: 4)
        var failure: (any Error)?
        do {
            try await listing.run(after: nil, through: nil) { delivery.record($0) }
        } catch {
            failure = error
        }
        #expect(failure is S3Transfer.S3Error)
        // Only the first two pages arrived: their intervals end at their last key, not at the end of the range.
        let intervals = delivery.intervals.withLock { $0 }
        #expect(intervals.map(\.through) == [keys[999], keys[1999]])
    }
}
