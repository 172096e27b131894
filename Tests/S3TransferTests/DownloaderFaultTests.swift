import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

/// One test per fault the fake server injects: each download ends with a verified file in place or a typed
/// error and no file — never a wrong file.
@Suite(.heavy) struct DownloaderFaultTests {
    static let size = 2_000_000

    func expectVerified(_ result: DownloadResult, _ data: Data, _ fixture: FakeS3Fixture) throws {
        #expect(try Data(contentsOf: result.url) == data)
        #expect(result.verification.isSuperset(of: [.length, .md5]))
        #expect(result.size == Int64(data.count))
        #expect(!FileManager.default.fileExists(atPath: result.url.path + ".part"))
        #expect(!FileManager.default.fileExists(atPath: result.url.path + ".part.json"))
    }

    @Test func resetsThatEachLeaveBytesBehindDoNotExhaustTheRetryBudget() async throws {
        // maxAttempts 3 counts failures in a row; every reset here comes after 150 kB of progress.
        let fixture = try await FakeS3Fixture.start(maxAttempts: 3)
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("m.jpg", size: Self.size)
        fixture.server.faults.add(.resetAfter(bytes: 150_000), keyPattern: "m.jpg", method: "GET", times: 6)
        let result = try await fixture.downloader.download(fixture.request("m.jpg")).result()
        try expectVerified(result, data, fixture)
        #expect(result.attempts == 7)
        let starts = fixture.gets("m.jpg").map {
            Int($0.rangeHeader?.dropFirst("bytes=".count).split(separator: "-").first ?? "") ?? 0
        }
        #expect(starts.count == 7)
        #expect(zip(starts, starts.dropFirst()).allSatisfy { $0 < $1 }, "each attempt continues further: \(starts)")
    }

    @Test func connectionResetMidBodyResumesFromTheBytesOnDisk() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("a.jpg", size: Self.size)
        fixture.server.faults.add(.resetAfter(bytes: 700_000), keyPattern: "a.jpg", method: "GET", times: 1)
        let result = try await fixture.downloader.download(fixture.request("a.jpg")).result()
        try expectVerified(result, data, fixture)
        let gets = fixture.gets("a.jpg")
        #expect(gets.count == 2)
        let resumed = try #require(gets.last)
        #expect(resumed.ifMatch?.contains(result.etag) == true)
        let start = Int(resumed.rangeHeader?.dropFirst("bytes=".count).split(separator: "-").first ?? "") ?? 0
        #expect(start > 0 && start <= 700_000)
        #expect(result.bytesTransferred < Int64(Self.size) + 700_000)
    }

    @Test func stalledBodyTimesOutAndIsRetried() async throws {
        // A stall limit of a few seconds: a loaded test machine must not trip it on a healthy attempt.
        let fixture = try await FakeS3Fixture.start(stallTimeout: 3)
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("s.jpg", size: Self.size)
        fixture.server.faults.add(.stallAfter(bytes: 500_000), keyPattern: "s.jpg", method: "GET", times: 1)
        let result = try await fixture.downloader.download(fixture.request("s.jpg")).result()
        try expectVerified(result, data, fixture)
        #expect(result.attempts >= 2)
        // The retry continues after the bytes received before the stall.
        #expect(fixture.gets("s.jpg").dropFirst().contains { $0.rangeHeader != nil })
    }

    @Test func internalErrorsAreRetried() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("e.jpg", size: 300_000)
        fixture.server.faults.add(.internalError, keyPattern: "e.jpg", method: "GET", times: 2)
        let result = try await fixture.downloader.download(fixture.request("e.jpg")).result()
        try expectVerified(result, data, fixture)
        #expect(result.attempts == 3)
        #expect(fixture.gets("e.jpg").map(\.status) == [500, 500, 200])
    }

    @Test func persistentInternalErrorsExhaustTheBudgetAndNameTheCause() async throws {
        let fixture = try await FakeS3Fixture.start(maxAttempts: 3)
        TestEnd.run { await fixture.stop() }
        try fixture.put("e.jpg", size: 1000)
        fixture.server.faults.add(.internalError, keyPattern: "e.jpg", method: "GET")
        let request = fixture.request("e.jpg")
        await #expect {
            _ = try await fixture.downloader.download(request).result()
        } throws: { error in
            guard case S3Transfer.S3Error.retriesExhausted(.service(code: "InternalError", _, 500, _), 3) = error else {
                return false
            }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: request.destination.path))
    }

    @Test("a SlowDown with Retry-After waits that long before the next attempt (the backoff alone is ~1 ms here)")
    func retryAfterIsHonoured() async throws {
        let fixture = try await FakeS3Fixture.start(maxDelay: 5)
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("w.jpg", size: 10_000)
        fixture.server.faults.add(.slowDown(retryAfterSeconds: 1), keyPattern: "w.jpg", method: "GET", times: 1)
        let clock = ContinuousClock()
        let started = clock.now
        let result = try await fixture.downloader.download(fixture.request("w.jpg")).result()
        #expect(clock.now - started >= .seconds(1))
        try expectVerified(result, data, fixture)
        #expect(fixture.gets("w.jpg").count == 2)

        // The client's own requests (HEAD here) honour it too.
        fixture.server.faults.add(.slowDown(retryAfterSeconds: 1), keyPattern: "w.jpg", method: "HEAD", times: 1)
        let headStarted = clock.now
        _ = try await fixture.client.headObject(bucket: FakeS3Fixture.bucket, key: "w.jpg")
        #expect(clock.now - headStarted >= .seconds(1))
    }

    @Test("a Retry-After longer than the policy's longest delay waits only that delay")
    func retryAfterIsCappedByTheLongestDelay() async throws {
        let fixture = try await FakeS3Fixture.start(maxDelay: 0.05)
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("c.jpg", size: 10_000)
        fixture.server.faults.add(.slowDown(retryAfterSeconds: 3600), keyPattern: "c.jpg", method: "GET", times: 1)
        let clock = ContinuousClock()
        let started = clock.now
        let result = try await fixture.downloader.download(fixture.request("c.jpg")).result()
        #expect(clock.now - started < .seconds(60), "an hour asked for, at most 50 ms waited")
        try expectVerified(result, data, fixture)
    }

    @Test func slowDownIsRetried() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("d.jpg", size: 300_000)
        fixture.server.faults.add(.slowDown(retryAfterSeconds: nil), keyPattern: "d.jpg", method: "GET", times: 1)
        let result = try await fixture.downloader.download(fixture.request("d.jpg")).result()
        try expectVerified(result, data, fixture)
        #expect(fixture.gets("d.jpg").map(\.status) == [503, 200])
    }

    @Test func truncatedBodyIsResumed() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("t.jpg", size: Self.size)
        fixture.server.faults.add(.truncateBody(afterBytes: 1_000_000), keyPattern: "t.jpg", method: "GET", times: 1)
        let result = try await fixture.downloader.download(fixture.request("t.jpg")).result()
        try expectVerified(result, data, fixture)
        #expect(result.attempts == 2)
    }

    @Test func flippedByteIsCaughtByMD5AndRefetchedOnce() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("f.jpg", size: Self.size)
        fixture.server.faults.add(.flipByte(atOffset: 1_234_567), keyPattern: "f.jpg", method: "GET", times: 1)
        let result = try await fixture.downloader.download(fixture.request("f.jpg")).result()
        try expectVerified(result, data, fixture)
        #expect(fixture.gets("f.jpg").count == 2)
        #expect(fixture.gets("f.jpg").last?.rangeHeader == nil)
    }

    @Test func persistentCorruptionFailsWithChecksumMismatchAndLeavesNoFile() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        try fixture.put("f.jpg", size: 400_000, crc32: true)
        fixture.server.faults.add(.flipByte(atOffset: 10), keyPattern: "f.jpg", method: "GET")
        let request = fixture.request("f.jpg")
        await #expect {
            _ = try await fixture.downloader.download(request).result()
        } throws: { error in
            guard case S3Transfer.S3Error.checksumMismatch = error else { return false }
            return true
        }
        #expect(fixture.gets("f.jpg").count == 2)
        #expect(!FileManager.default.fileExists(atPath: request.destination.path))
    }

    @Test func crc32ChecksumIsVerifiedWhenTheServerReturnsOne() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("c.jpg", size: 500_000, crc32: true)
        let result = try await fixture.downloader.download(fixture.request("c.jpg")).result()
        #expect(try Data(contentsOf: result.url) == data)
        // The default policy verifies the cheapest check that applies: the CRC-32 rather than the ETag's MD5.
        #expect(result.verification == [.length, .crc32])
    }

    @Test func objectReplacedMidDownloadRestartsFromZeroWithoutMixingVersions() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        try fixture.put("r.jpg", size: Self.size, seed: 1)
        let replacement = testBytes(Self.size + 1000, seed: 2)
        fixture.server.faults.add(.resetAfter(bytes: 800_000), keyPattern: "r.jpg", method: "GET", times: 1)
        fixture.server.faults.add(
            .replaceObject(with: replacement), keyPattern: "r.jpg", method: "GET", afterRequests: 1, times: 1)
        let result = try await fixture.downloader.download(fixture.request("r.jpg")).result()
        try expectVerified(result, replacement, fixture)
        let gets = fixture.gets("r.jpg")
        #expect(gets.map(\.status) == [200, 412, 200])
        #expect(gets.last?.rangeHeader == nil)
    }

    @Test func objectReplacedWhenAnETagIsRequiredFailsWithObjectChanged() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        try fixture.put("r.jpg", size: 100_000, seed: 1)
        let head = try await fixture.client.headObject(bucket: FakeS3Fixture.bucket, key: "r.jpg")
        fixture.server.faults.add(
            .replaceObject(with: testBytes(100, seed: 3)), keyPattern: "r.jpg", method: "GET", times: 1)
        var request = fixture.request("r.jpg")
        request.expectedETag = head.etag
        await #expect(throws: S3Transfer.S3Error.objectChanged) {
            _ = try await fixture.downloader.download(request).result()
        }
        #expect(!FileManager.default.fileExists(atPath: request.destination.path))
    }

    @Test func wholeBodyWhereAPartWasAskedIsTakenFromZero() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("p.jpg", size: Self.size)
        fixture.server.faults.add(.resetAfter(bytes: 600_000), keyPattern: "p.jpg", method: "GET", times: 1)
        fixture.server.faults.add(
            .fullBodyInsteadOfPartial, keyPattern: "p.jpg", method: "GET", afterRequests: 1, times: 1)
        let result = try await fixture.downloader.download(fixture.request("p.jpg")).result()
        try expectVerified(result, data, fixture)
        let gets = fixture.gets("p.jpg")
        #expect(gets.count == 2)
        #expect(gets.last?.rangeHeader != nil)
        #expect(gets.last?.status == 200)
    }

    @Test func slowLinkDeliversOrderedThrottledProgress() async throws {
        let fixture = try await FakeS3Fixture.start(progressInterval: 20)
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("slow.jpg", size: 1_500_000)
        fixture.server.faults.add(.bandwidthLimit(bytesPerSecond: 6_000_000), keyPattern: "slow.jpg", method: "GET")
        let reports = LockedBox<[(DownloadProgress, UInt64)]>([])
        let queue = DispatchQueue(label: "progress")
        var request = fixture.request("slow.jpg") { progress, _ in
            dispatchPrecondition(condition: .onQueue(queue))
            reports.withLock { $0.append((progress, DispatchTime.now().uptimeNanoseconds)) }
        }
        request.progressQueue = queue
        let started = DispatchTime.now().uptimeNanoseconds
        let result = try await fixture.downloader.download(request).result()
        let elapsedMs = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        try expectVerified(result, data, fixture)
        let seen = reports.withLock { $0 }
        #expect(seen.count >= 3)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.0.bytesReceived <= $1.0.bytesReceived })
        #expect(seen.last?.0.fractionCompleted == 1)
        #expect(seen.dropLast().allSatisfy { $0.0.totalBytes == Int64(data.count) || $0.0.totalBytes == nil })
        // Throttled: at most one report per interval, plus the final one.
        #expect(Double(seen.count) <= elapsedMs / 20 + 2)
    }
}
