import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

/// Cancellation, sharing, the network gate, clock skew and awkward keys, against the fake server.
@Suite(.heavy) struct DownloaderBehaviourTests {
    @Test func cancellingFromAnotherThreadStopsWithoutAFileInPlace() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        try fixture.put("big.jpg", size: 4_000_000)
        fixture.server.faults.add(.bandwidthLimit(bytesPerSecond: 2_000_000), keyPattern: "big.jpg", method: "GET")
        // The cancelling thread waits for the first bytes itself: no hop through the (busy, under a full test
        // run) cooperative pool between them and the cancel.
        let firstBytes = DispatchSemaphore(value: 0)
        let request = fixture.request("big.jpg") { progress, _ in
            if progress.bytesReceived > 0 { firstBytes.signal() }
        }
        let handle = fixture.downloader.download(request)
        Thread.detachNewThread {
            firstBytes.wait()
            handle.cancel()
        }
        await #expect(throws: S3Transfer.S3Error.cancelled) { _ = try await handle.result() }
        #expect(!FileManager.default.fileExists(atPath: request.destination.path))
    }

    @Test func stopFlagInTheProgressHandlerCancels() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        try fixture.put("big.jpg", size: 3_000_000)
        fixture.server.faults.add(.bandwidthLimit(bytesPerSecond: 3_000_000), keyPattern: "big.jpg", method: "GET")
        let request = fixture.request("big.jpg") { progress, stop in
            if progress.bytesReceived > 100_000 { stop = true }
        }
        await #expect(throws: S3Transfer.S3Error.cancelled) {
            _ = try await fixture.downloader.download(request).result()
        }
        #expect(!FileManager.default.fileExists(atPath: request.destination.path))
    }

    @Test func identicalRequestsShareOneTransferAndBothGetTheResult() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("shared.jpg", size: 1_000_000)
        fixture.server.faults.add(.bandwidthLimit(bytesPerSecond: 8_000_000), keyPattern: "shared.jpg", method: "GET")
        let counts = LockedBox<[Int]>([0, 0])
        let a = fixture.downloader.download(fixture.request("shared.jpg") { _, _ in counts.withLock { $0[0] += 1 } })
        let b = fixture.downloader.download(fixture.request("shared.jpg") { _, _ in counts.withLock { $0[1] += 1 } })
        let (ra, rb) = try await (a.result(), b.result())
        #expect(ra == rb)
        #expect(try Data(contentsOf: ra.url) == data)
        #expect(fixture.gets("shared.jpg").count == 1)
        #expect(counts.withLock { $0.allSatisfy { $0 > 0 } })
    }

    @Test func aDestinationSpelledWithDotSegmentsSharesTheTransferOfItsCleanPath() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("shared.jpg", size: 1_000_000)
        fixture.server.faults.add(.bandwidthLimit(bytesPerSecond: 8_000_000), keyPattern: "shared.jpg", method: "GET")
        let clean = fixture.request("shared.jpg")
        var roundabout = clean
        let folder = clean.destination.deletingLastPathComponent()
        roundabout.destination = URL(
            fileURLWithPath: folder.path + "/./sub/..//" + clean.destination.lastPathComponent, isDirectory: false)
        #expect(Downloader.normalizedPath(roundabout.destination) == clean.destination.path)
        let a = fixture.downloader.download(clean)
        let b = fixture.downloader.download(roundabout)
        let (ra, rb) = try await (a.result(), b.result())
        #expect(try Data(contentsOf: ra.url) == data)
        #expect(ra.etag == rb.etag)
        #expect(fixture.gets("shared.jpg").count == 1)
    }

    @Test func cancellingOneOfTwoSharersOnlyDetachesIt() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("shared.jpg", size: 1_000_000)
        fixture.server.faults.add(.bandwidthLimit(bytesPerSecond: 5_000_000), keyPattern: "shared.jpg", method: "GET")
        let a = fixture.downloader.download(fixture.request("shared.jpg"))
        let b = fixture.downloader.download(fixture.request("shared.jpg"))
        a.cancel()
        await #expect(throws: S3Transfer.S3Error.cancelled) { _ = try await a.result() }
        let result = try await b.result()
        #expect(try Data(contentsOf: result.url) == data)
        #expect(fixture.gets("shared.jpg").count == 1)
    }

    @Test func networkGateMakesNoRequest() async throws {
        let fixture = try await FakeS3Fixture.start(networkPolicy: .userRequestsOnly)
        TestEnd.run { await fixture.stop() }
        try fixture.put("g.jpg", size: 1000)
        await #expect(throws: S3Transfer.S3Error.networkAccessNotAllowed) {
            _ = try await fixture.downloader.download(fixture.request("g.jpg")).result()
        }
        fixture.downloader.networkPolicy = .offline
        var user = fixture.request("g.jpg")
        user.isUserRequest = true
        await #expect(throws: S3Transfer.S3Error.networkAccessNotAllowed) {
            _ = try await fixture.downloader.download(user).result()
        }
        #expect(fixture.server.requestLog.entries().isEmpty)
        fixture.downloader.networkPolicy = .userRequestsOnly
        _ = try await fixture.downloader.download(user).result()
        #expect(fixture.gets("g.jpg").count == 1)
    }

    @Test func aDestinationThatCannotBeCreatedFailsWithItsErrnoBeforeAnyRequest() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        try fixture.put("f.jpg", size: 1000)
        let request = fixture.request("f.jpg", file: "no-such-folder/out.bin")
        await #expect {
            _ = try await fixture.downloader.download(request).result()
        } throws: { error in
            guard case S3Transfer.S3Error.fileSystem(let path, let code) = error else { return false }
            return code == ENOENT && path.hasSuffix("no-such-folder/out.bin.part")
        }
        #expect(fixture.gets("f.jpg").isEmpty)
        // The slot was given back: the next download runs.
        _ = try await fixture.downloader.download(fixture.request("f.jpg")).result()
    }

    @Test func aQueueOfDownloadsThatCannotCreateTheirFilesAllFailTypedAndInTurn() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        try fixture.put("f.jpg", size: 1000)
        // One slot, 2,000 requests: each failure hands the slot to the next from a queue of its own, never
        // from inside the previous grant.
        let downloader = Downloader(client: fixture.client, configuration: DownloaderConfiguration(maxConnections: 1))
        let handles = (0..<2_000).map { i in
            downloader.download(fixture.request("f.jpg", file: "no-such-folder/\(i).bin"))
        }
        for handle in handles {
            await #expect {
                _ = try await handle.result()
            } throws: { error in
                guard case S3Transfer.S3Error.fileSystem(_, let code) = error else { return false }
                return code == ENOENT
            }
        }
        #expect(fixture.gets("f.jpg").isEmpty)
        _ = try await downloader.download(fixture.request("f.jpg")).result()
        #expect(downloader.scheduler.rememberedTicketCount == 0)
    }

    @Test func skewedLocalClockIsCorrectedOnceAndRemembered() async throws {
        let fixture = try await FakeS3Fixture.start(clockError: -3600)
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("clock.jpg", size: 10_000)
        let result = try await fixture.downloader.download(fixture.request("clock.jpg")).result()
        #expect(try Data(contentsOf: result.url) == data)
        #expect(fixture.gets("clock.jpg").map(\.status) == [403, 200])
        #expect(abs(fixture.client.measuredClockOffset - 3600) < 5)
        _ = try await fixture.client.headObject(bucket: FakeS3Fixture.bucket, key: "clock.jpg")
        #expect(fixture.server.requestLog.entries().last?.status == 200)
    }

    @Test(arguments: ["with space.jpg", "caf\u{E9}/\u{1F4F7} photo.heic", "a+b=c&d.jpg", "dir//x?y#z.png"])
    func awkwardKeysRoundTrip(_ key: String) async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put(key, size: 20_000)
        let page = try await fixture.client.listObjectsV2(bucket: FakeS3Fixture.bucket)
        #expect(page.objects.map(\.key) == [key])
        let head = try await fixture.client.headObject(bucket: FakeS3Fixture.bucket, key: key)
        #expect(head.size == 20_000)
        let result = try await fixture.downloader.download(fixture.request(key)).result()
        #expect(try Data(contentsOf: result.url) == data)
    }

    @Test func pauseThenResumeContinuesFromTheBytesOnDisk() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("p.jpg", size: 3_000_000)
        // The first response stalls after 1.2 MB (well within the stall timeout), so the pause always
        // lands mid-transfer.
        fixture.server.faults.add(.stallAfter(bytes: 1_200_000), keyPattern: "p.jpg", method: "GET", times: 1)
        let reached = AsyncStream<Void>.makeStream()
        let handle = fixture.downloader.download(
            fixture.request("p.jpg") { progress, _ in
                if progress.bytesReceived >= 1_200_000 { reached.continuation.yield() }
            })
        for await _ in reached.stream { break }
        handle.pause()
        handle.resume()
        let result = try await handle.result()
        #expect(try Data(contentsOf: result.url) == data)
        let gets = fixture.gets("p.jpg")
        #expect(gets.count == 2)
        #expect(gets.last?.rangeHeader != nil)
    }

    @Test func aNewDownloaderResumesALeftoverPartFile() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("left.jpg", size: 2_000_000)
        fixture.server.faults.add(.resetAfter(bytes: 900_000), keyPattern: "left.jpg", method: "GET", times: 1)
        let once = Downloader(
            client: fixture.client, configuration: DownloaderConfiguration(retryPolicy: RetryPolicy(maxAttempts: 1)))
        let request = fixture.request("left.jpg")
        await #expect(throws: S3Transfer.S3Error.self) { _ = try await once.download(request).result() }
        #expect(FileManager.default.fileExists(atPath: request.destination.path + ".part.json"))
        #expect(!FileManager.default.fileExists(atPath: request.destination.path))
        let result = try await fixture.downloader.download(request).result()
        #expect(try Data(contentsOf: result.url) == data)
        #expect(result.verification.contains(.md5))
        #expect(result.bytesTransferred < 2_000_000)
        #expect(fixture.gets("left.jpg").last?.rangeHeader != nil)
    }

    @Test func aResumedDownloadInterruptedAgainStillVerifiesTheWholeObjectChecksum() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = try fixture.put("twice.jpg", size: 3_000_000, crc32: true)
        fixture.server.faults.add(.resetAfter(bytes: 900_000), keyPattern: "twice.jpg", method: "GET", times: 2)
        let once = Downloader(
            client: fixture.client, configuration: DownloaderConfiguration(retryPolicy: RetryPolicy(maxAttempts: 1)))
        let request = fixture.request("twice.jpg")
        await #expect(throws: S3Transfer.S3Error.self) { _ = try await once.download(request).result() }
        // A new downloader continues from the sidecar, is cut off again, and continues once more.
        let result = try await fixture.downloader.download(request).result()
        #expect(try Data(contentsOf: result.url) == data)
        #expect(result.verification.contains(.crc32))
        #expect(result.attempts == 2)
        #expect(fixture.gets("twice.jpg").count == 3)
        #expect(!FileManager.default.fileExists(atPath: request.destination.path + ".part.json"))
    }

    @Test func higherPriorityWaitingRequestsGetTheNextSlot() async throws {
        let scheduler = TransferScheduler(slots: 1)
        #expect(await scheduler.acquire(priority: .utility))
        let order = LockedBox<[DownloadPriority]>([])
        let queued = AsyncStream<Void>.makeStream()
        let tasks = [DownloadPriority.prefetch, .userInitiated, .utility].map { priority in
            Task {
                queued.continuation.yield()
                _ = await scheduler.acquire(priority: priority)
                order.withLock { $0.append(priority) }
                scheduler.release()
            }
        }
        var count = 0
        for await _ in queued.stream {
            count += 1
            if count == 3 { break }
        }
        // Each task yields just before it waits; let the waits register by polling the scheduler's queue.
        while scheduler.waitingCount < 3 { await Task.yield() }
        scheduler.release()
        for task in tasks { await task.value }
        #expect(order.withLock { $0 } == [.userInitiated, .utility, .prefetch])
    }

    @Test func withdrawnTicketsLeaveNothingBehindAndAnEarlyWithdrawalIsRefused() {
        let scheduler = TransferScheduler(slots: 1)
        let answers = LockedBox<[Bool]>([])
        // Granted at once, then withdrawn (a job cancelled just after its slot came): nothing to remember.
        let first = scheduler.makeTicket()
        #expect(scheduler.request(first, priority: .utility) { _ in Issue.record("a granted ticket was answered") })
        scheduler.withdraw(first)
        // Withdrawn before it was asked with: refused when it is.
        let early = scheduler.makeTicket()
        scheduler.withdraw(early)
        #expect(!scheduler.request(early, priority: .utility) { granted in answers.withLock { $0.append(granted) } })
        // Queued, then withdrawn: its grant says no.
        let queued = scheduler.makeTicket()
        #expect(!scheduler.request(queued, priority: .utility) { granted in answers.withLock { $0.append(granted) } })
        scheduler.withdraw(queued)
        #expect(answers.withLock { $0 } == [false, false])
        scheduler.release()
        #expect(scheduler.waitingCount == 0)
        #expect(scheduler.rememberedTicketCount == 0)
    }

    @Test func waitersOfOnePriorityAreServedFirstComeFirstServedAndACancelledOneIsSkipped() async throws {
        let scheduler = TransferScheduler(slots: 1)
        #expect(await scheduler.acquire(priority: .utility))
        let order = LockedBox<[Int]>([])
        var tasks: [Task<Void, Never>] = []
        for i in 0..<200 {
            tasks.append(
                Task {
                    if await scheduler.acquire(priority: .utility) {
                        order.withLock { $0.append(i) }
                        scheduler.release()
                    }
                })
            // Register each wait before starting the next, so that arrival order is known.
            while scheduler.waitingCount < i + 1 { await Task.yield() }
        }
        tasks[50].cancel()
        while scheduler.waitingCount > 199 { await Task.yield() }
        scheduler.release()
        for task in tasks { await task.value }
        #expect(order.withLock { $0 } == Array(0..<200).filter { $0 != 50 })
        #expect(scheduler.waitingCount == 0)
    }
}
