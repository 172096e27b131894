import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

/// The uploader against the in-process fake S3: single puts and multipart uploads, the checksums they leave,
/// create-only writes, faults, resuming, aborting, the network gate and progress.
@Suite(.heavy) struct UploaderTests {
    static let partSize: Int64 = 5 << 20
    static let bucket = FakeS3Fixture.bucket

    /// A fixture, an uploader with 5 MiB parts, and a folder for the files to upload.
    struct Harness {
        let fixture: FakeS3Fixture
        let uploader: Uploader
        var server: FakeS3Server { fixture.server }

        static func start(
            maxConcurrentParts: Int = 4, maxAttempts: Int = 5, maxDelay: TimeInterval = 0.01,
            networkPolicy: NetworkPolicy = .allowed
        ) async throws -> Harness {
            let fixture = try await FakeS3Fixture.start()
            let uploader = Uploader(
                client: fixture.client,
                configuration: UploaderConfiguration(
                    partSize: UploaderTests.partSize, maxConcurrentParts: maxConcurrentParts,
                    retryPolicy: RetryPolicy(maxAttempts: maxAttempts, baseDelay: 0.001, maxDelay: maxDelay),
                    networkPolicy: networkPolicy, progressInterval: 0))
            return Harness(fixture: fixture, uploader: uploader)
        }

        /// Writes `size` pseudo-random bytes to a new file.
        func file(_ name: String, size: Int, seed: UInt64 = 7) throws -> (URL, Data) {
            let data = fastBytes(size, seed: seed)
            let url = fixture.directory.appendingPathComponent(name)
            try data.write(to: url)
            return (url, data)
        }

        func request(_ key: String, _ file: URL, progress: (@Sendable (UploadProgress, inout Bool) -> Void)? = nil)
            -> UploadRequest
        {
            UploadRequest(bucket: UploaderTests.bucket, key: key, file: file, progress: progress)
        }

        func stored(_ key: String) throws -> Data? { try server.objectData(bucket: UploaderTests.bucket, key: key) }

        /// The UploadPart requests the server answered with 200, as (upload id, part number).
        func acknowledgedParts(from index: Int = 0) -> [(String, Int)] {
            server.requestLog.entries().dropFirst(index).filter { $0.isUploadPart && $0.status == 200 }.map {
                ($0.uploadId ?? "", $0.partNumber ?? 0)
            }
        }

        func stop() async { await fixture.stop() }
    }

    /// Every checkpoint the uploader hands over, in order.
    final class Checkpoints: Sendable {
        private let all = LockedBox<[UploadCheckpoint?]>([])
        var values: [UploadCheckpoint?] { all.withLock { $0 } }
        var last: UploadCheckpoint? { all.withLock { $0.last ?? nil } }
        var record: @Sendable (UploadCheckpoint?) throws -> Void {
            { checkpoint in self.all.withLock { $0.append(checkpoint) } }
        }
    }

    static func crc32c(_ data: Data) -> String { S3ChecksumAlgorithm.crc32c.checksum(of: data) }

    // MARK: Single request and multipart

    @Test func aSmallFileGoesUpInOnePutWithItsCRC32C() async throws {
        let h = try await Harness.start()
        TestEnd.run { await h.stop() }
        let (url, data) = try h.file("small.bin", size: 100_000)
        let checkpoints = Checkpoints()
        let outcome = try await h.uploader.upload(
            h.request("small.jpg", url), resumingFrom: nil, checkpoint: checkpoints.record)
        guard case .created(let etag, let checksums) = outcome else { Issue.record("\(outcome)"); return }
        #expect(checksums.crc32c == Self.crc32c(data))
        #expect(try h.stored("small.jpg") == data)
        let puts = h.server.requestLog.entries().filter { $0.method == "PUT" }
        #expect(puts.count == 1)
        #expect(puts.first?.ifNoneMatch == "*" && puts.first?.partNumber == nil)
        let head = try await h.fixture.client.headObject(bucket: Self.bucket, key: "small.jpg")
        #expect(head.etag == etag)
        #expect(head.checksums.crc32c == Self.crc32c(data))
        #expect(checkpoints.values.isEmpty)
    }

    @Test func aMultipartUploadStoresTheBytesAndAFullObjectCRC32C() async throws {
        let h = try await Harness.start()
        TestEnd.run { await h.stop() }
        let size = Int(3 * Self.partSize) + 123_456
        let (url, data) = try h.file("big.bin", size: size)
        let checkpoints = Checkpoints()
        let outcome = try await h.uploader.upload(
            h.request("big.mov", url), resumingFrom: nil, checkpoint: checkpoints.record)
        guard case .created(let etag, let checksums) = outcome else { Issue.record("\(outcome)"); return }
        #expect(etag.hasSuffix("-4"))
        #expect(checksums.crc32c == Self.crc32c(data))
        #expect(try h.stored("big.mov") == data)
        #expect(h.acknowledgedParts().map(\.1).sorted() == [1, 2, 3, 4])
        let head = try await h.fixture.client.headObject(bucket: Self.bucket, key: "big.mov")
        #expect(head.checksums.crc32c == Self.crc32c(data))
        #expect(try h.server.objectChecksums(bucket: Self.bucket, key: "big.mov")?.type == "FULL_OBJECT")
        #expect(try h.server.multipartUploads(bucket: Self.bucket).isEmpty)
        // A checkpoint when the upload starts, one per acknowledged part (each with one part more), nil at the end.
        let counts = checkpoints.values.map { $0?.parts.count ?? -1 }
        #expect(counts == [0, 1, 2, 3, 4, -1])
        #expect(checkpoints.values.first??.partSize == Self.partSize)
        #expect(checkpoints.values.first??.size == Int64(size))
    }

    @Test func aCallerKnownCRC32CIsSentAndAWrongOneRefused() async throws {
        let h = try await Harness.start()
        TestEnd.run { await h.stop() }
        let (url, data) = try h.file("big.bin", size: Int(Self.partSize) + 1000)
        var request = h.request("known.bin", url)
        request.fullObjectCRC32C = Self.crc32cValue(data)
        let outcome = try await h.uploader.upload(request, resumingFrom: nil, checkpoint: { _ in })
        #expect(outcome == .created(etag: outcome.etag, checksums: S3Checksums(crc32c: Self.crc32c(data))))
        request.key = "wrong.bin"
        request.fullObjectCRC32C = 0x1234_5678
        do {
            let refused = try await h.uploader.upload(request, resumingFrom: nil, checkpoint: { _ in })
            Issue.record("a wrong full-object CRC-32C was accepted: \(refused)")
        } catch {
            #expect(error.serviceCode == "BadDigest")
        }
        #expect(try h.stored("wrong.bin") == nil)
    }

    static func crc32cValue(_ data: Data) -> UInt32 {
        let bytes = Data(base64Encoded: crc32c(data))!
        return bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    // MARK: Create-only

    @Test func aPutToAnExistingKeyReportsTheObjectThere() async throws {
        let h = try await Harness.start()
        TestEnd.run { await h.stop() }
        let existing = Data("already here".utf8)
        let etag = try h.server.putObject(bucket: Self.bucket, key: "taken.jpg", data: existing)
        let (url, _) = try h.file("small.bin", size: 5000)
        let outcome = try await h.uploader.upload(h.request("taken.jpg", url), resumingFrom: nil, checkpoint: { _ in })
        guard case .keyExists(let head) = outcome else { Issue.record("\(outcome)"); return }
        #expect(head.etag == S3ETag.unquoted(etag))
        #expect(try h.stored("taken.jpg") == existing)
    }

    @Test func aMultipartUploadToAnExistingKeyReportsTheObjectAndLeavesNoUpload() async throws {
        let h = try await Harness.start()
        TestEnd.run { await h.stop() }
        let existing = Data("already here".utf8)
        try h.server.putObject(bucket: Self.bucket, key: "taken.mov", data: existing)
        let (url, _) = try h.file("big.bin", size: Int(2 * Self.partSize))
        let checkpoints = Checkpoints()
        let outcome = try await h.uploader.upload(
            h.request("taken.mov", url), resumingFrom: nil, checkpoint: checkpoints.record)
        guard case .keyExists(let head) = outcome else { Issue.record("\(outcome)"); return }
        #expect(head.size == Int64(existing.count))
        #expect(try h.stored("taken.mov") == existing)
        // Asked first: no upload was started, no byte of the file sent.
        #expect(h.server.requestLog.entries().map(\.method) == ["HEAD"])
        #expect(checkpoints.values.isEmpty)
    }

    @Test func aKeyTakenDuringAMultipartUploadEndsItAt412AndAbortsIt() async throws {
        let h = try await Harness.start(maxConcurrentParts: 1)
        TestEnd.run { await h.stop() }
        let (url, _) = try h.file("big.bin", size: Int(2 * Self.partSize) + 1)
        let checkpoints = Checkpoints()
        let server = h.server
        let outcome = try await h.uploader.upload(h.request("raced.mov", url), resumingFrom: nil) { checkpoint in
            try checkpoints.record(checkpoint)
            // Another writer stores the key once the first part is acknowledged.
            if checkpoint?.parts.count == 1 {
                try server.putObject(bucket: UploaderTests.bucket, key: "raced.mov", data: Data("other".utf8))
            }
        }
        guard case .keyExists(let head) = outcome else { Issue.record("\(outcome)"); return }
        #expect(head.size == 5)
        #expect(try h.stored("raced.mov") == Data("other".utf8))
        let completes = h.server.requestLog.entries().filter { $0.method == "POST" && $0.uploadId != nil }
        #expect(completes.map(\.status) == [412])
        #expect(try h.server.multipartUploads(bucket: Self.bucket).isEmpty)
        #expect(checkpoints.values.last! == nil)
    }

    @Test func resumingAnUploadAnEarlierRunCompletedFindsTheObjectWithoutSendingAnything() async throws {
        let h = try await Harness.start()
        TestEnd.run { await h.stop() }
        let (url, data) = try h.file("big.bin", size: Int(2 * Self.partSize) + 99)
        let checkpoints = Checkpoints()
        _ = try await h.uploader.upload(h.request("done.mov", url), resumingFrom: nil, checkpoint: checkpoints.record)
        // The run's last checkpoint (before the nil) was what the caller kept.
        let kept = try #require(checkpoints.values.dropLast().last ?? nil)
        let before = h.server.requestLog.entries().count
        let outcome = try await h.uploader.upload(h.request("done.mov", url), resumingFrom: kept, checkpoint: { _ in })
        guard case .created(_, let checksums) = outcome else { Issue.record("\(outcome)"); return }
        #expect(checksums.crc32c == Self.crc32c(data))
        let second = h.server.requestLog.entries().dropFirst(before).map { "\($0.method) \($0.status)" }
        #expect(second == ["GET 404", "HEAD 200"])
    }

    @Test(arguments: [100, 15 << 20])
    func twoConcurrentUploadsOfOneKeyCreateItOnce(size: Int) async throws {
        // The loser is answered 409 for as long as the winner's write is in flight (as S3 does) and retries: a
        // budget of many attempts (backing off to a quarter second) outlasts a winner slowed by a loaded machine.
        let h = try await Harness.start(maxAttempts: 80, maxDelay: 0.25)
        TestEnd.run { await h.stop() }
        let (a, dataA) = try h.file("a.bin", size: size, seed: 1)
        let (b, dataB) = try h.file("b.bin", size: size, seed: 2)
        async let first = h.uploader.upload(h.request("same.mov", a), resumingFrom: nil, checkpoint: { _ in })
        async let second = h.uploader.upload(h.request("same.mov", b), resumingFrom: nil, checkpoint: { _ in })
        let outcomes = try await [first, second]
        let created = outcomes.indices.filter { if case .created = outcomes[$0] { true } else { false } }
        #expect(created.count == 1, "\(outcomes)")
        #expect(outcomes.contains { if case .keyExists = $0 { true } else { false } })
        #expect(try h.stored("same.mov") == (created == [0] ? dataA : dataB))
        #expect(try h.server.multipartUploads(bucket: Self.bucket).isEmpty)
        let listed = try await h.fixture.client.listObjectsV2(bucket: Self.bucket)
        #expect(listed.objects.map(\.key) == ["same.mov"])
    }

    // MARK: Faults

    /// Uploads a 3½-part file with `fault` armed and expects the object to be created with the file's bytes.
    func expectCreated(despite fault: Fault, method: String, afterRequests: Int = 0, times: Int = 1) async throws
        -> Harness
    {
        let h = try await Harness.start()
        let (url, data) = try h.file("big.bin", size: Int(3 * Self.partSize) + 500_000)
        h.server.faults.add(fault, keyPattern: "f.mov", method: method, afterRequests: afterRequests, times: times)
        let outcome = try await h.uploader.upload(h.request("f.mov", url), resumingFrom: nil, checkpoint: { _ in })
        guard case .created(_, let checksums) = outcome else {
            Issue.record("\(outcome)")
            return h
        }
        #expect(checksums.crc32c == Self.crc32c(data))
        #expect(try h.stored("f.mov") == data)
        #expect(try h.server.multipartUploads(bucket: Self.bucket).isEmpty)
        return h
    }

    @Test func aConnectionResetMidPartIsRetriedAndTheObjectCreated() async throws {
        let h = try await expectCreated(
            despite: .resetAfter(bytes: 1_000_000), method: "PUT", afterRequests: 1, times: 2)
        TestEnd.run { await h.stop() }
        #expect(Set(h.acknowledgedParts().map(\.1)) == [1, 2, 3, 4])
    }

    @Test func anUploadCutShortIsRetriedAndTheObjectCreated() async throws {
        let h = try await expectCreated(despite: .truncateBody(afterBytes: 3_000_000), method: "PUT", times: 1)
        await h.stop()
    }

    @Test func slowDownOnPartsIsRetried() async throws {
        let h = try await expectCreated(despite: .slowDown(retryAfterSeconds: nil), method: "PUT", times: 3)
        TestEnd.run { await h.stop() }
        #expect(h.server.requestLog.entries().filter { $0.status == 503 }.count == 3)
    }

    @Test func aPartRefusedWithSlowDownIsRetriedNoSoonerThanItsRetryAfter() async throws {
        let h = try await Harness.start()
        TestEnd.run { await h.stop() }
        let uploader = Uploader(
            client: h.fixture.client,
            configuration: UploaderConfiguration(
                partSize: Self.partSize, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 0.001, maxDelay: 5)))
        let (url, data) = try h.file("big.bin", size: Int(Self.partSize) + 100)
        h.server.faults.add(.slowDown(retryAfterSeconds: 1), keyPattern: "slow.mov", method: "PUT", times: 1)
        let clock = ContinuousClock()
        let start = clock.now
        _ = try await uploader.upload(h.request("slow.mov", url), resumingFrom: nil, checkpoint: { _ in })
        #expect(clock.now - start >= .seconds(1))
        #expect(try h.stored("slow.mov") == data)
    }

    @Test func internalErrorsAtCompletionAreRetried() async throws {
        // The first POST creates the upload; the next two (completions) fail.
        let h = try await expectCreated(despite: .internalError, method: "POST", afterRequests: 1, times: 2)
        TestEnd.run { await h.stop() }
        let posts = h.server.requestLog.entries().filter { $0.method == "POST" }.map(\.status)
        #expect(posts == [200, 500, 500, 200])
    }

    @Test func aCompletionWhoseAnswerWasCutShortIsRecognisedAsOurs() async throws {
        // The object is stored, the answer lost; the retry finds the upload gone and the object ours.
        let h = try await expectCreated(
            despite: .truncateBody(afterBytes: 30), method: "POST", afterRequests: 1, times: 1)
        TestEnd.run { await h.stop() }
        let posts = h.server.requestLog.entries().filter { $0.method == "POST" }.map(\.status)
        #expect(posts == [200, 200, 404])
        #expect(h.server.requestLog.entries().last?.method == "HEAD")
    }

    @Test func aPutWhoseAnswerWasLostIsRecognisedAsOursNotAsAnExistingKey() async throws {
        let h = try await Harness.start()
        TestEnd.run { await h.stop() }
        let (url, data) = try h.file("small.bin", size: 200_000)
        // The first PUT is stored but its answer never comes.
        h.server.faults.add(.dropResponse, keyPattern: "lost.jpg", method: "PUT", times: 1)
        let outcome = try await h.uploader.upload(h.request("lost.jpg", url), resumingFrom: nil, checkpoint: { _ in })
        guard case .created(_, let checksums) = outcome else { Issue.record("\(outcome)"); return }
        #expect(checksums.crc32c == Self.crc32c(data))
        #expect(try h.stored("lost.jpg") == data)
        // The retry was refused (the first attempt had stored the object), and the object recognised.
        let statuses = h.server.requestLog.entries().map { "\($0.method) \($0.status)" }
        #expect(statuses == ["PUT 0", "PUT 412", "HEAD 200"])
    }

    @Test func aCompletionWhoseAnswerWasLostIsRecognisedAsOurs() async throws {
        let h = try await expectCreated(despite: .dropResponse, method: "POST", afterRequests: 1, times: 1)
        TestEnd.run { await h.stop() }
        let posts = h.server.requestLog.entries().filter { $0.method == "POST" }.map(\.status)
        #expect(posts == [200, 0, 404])
    }

    // MARK: Resume and abort

    @Test func aResumedUploadNeverSendsAnAcknowledgedPartAgain() async throws {
        let h = try await Harness.start(maxConcurrentParts: 2)
        TestEnd.run { await h.stop() }
        let (url, data) = try h.file("big.bin", size: 40 << 20)
        let checkpoints = Checkpoints()
        let stopAfter = 3 * Self.partSize
        // Answers to later parts come slowly: the stop arrives while they are in flight.
        h.server.faults.add(.latency(milliseconds: 5000), keyPattern: "resume.mov", method: "PUT", afterRequests: 3)
        let stopping = h.request("resume.mov", url) { progress, stop in
            if progress.bytesSent >= stopAfter { stop = true }
        }
        await #expect(throws: S3Error.cancelled) {
            _ = try await h.uploader.upload(stopping, resumingFrom: nil, checkpoint: checkpoints.record)
        }
        let saved = try #require(checkpoints.last)
        #expect(saved.parts.count == 3)
        #expect(try h.stored("resume.mov") == nil)
        h.server.faults.removeAll()
        let firstRun = h.server.requestLog.entries().count

        let resumed = Checkpoints()
        let outcome = try await h.uploader.upload(
            h.request("resume.mov", url), resumingFrom: saved, checkpoint: resumed.record)
        guard case .created(_, let checksums) = outcome else { Issue.record("\(outcome)"); return }
        #expect(checksums.crc32c == Self.crc32c(data))
        #expect(try h.stored("resume.mov") == data)
        let acknowledged = Set(saved.parts.map(\.number))
        let sentAgain = h.acknowledgedParts(from: firstRun).filter { acknowledged.contains($0.1) }
        #expect(sentAgain.isEmpty, "parts sent again: \(sentAgain)")
        let resent = h.server.requestLog.entries().dropFirst(firstRun).filter(\.isUploadPart)
        #expect(resent.allSatisfy { $0.uploadId == saved.uploadId })
        // Only parts the checkpoint lacks are sent; one the service took after the stop (it lists it, with its
        // checksum) is kept as well.
        #expect(Set(resent.compactMap(\.partNumber)).isSubset(of: Set(1...8).subtracting(acknowledged)))
        #expect(!resent.isEmpty)
        #expect(resumed.values.last! == nil)
    }

    @Test func resumingAnUploadTheServiceForgotStartsAFreshOne() async throws {
        let h = try await Harness.start(maxConcurrentParts: 1)
        TestEnd.run { await h.stop() }
        let (url, data) = try h.file("big.bin", size: Int(2 * Self.partSize) + 10)
        let checkpoints = Checkpoints()
        h.server.faults.add(.latency(milliseconds: 5000), keyPattern: "gone.mov", method: "PUT", afterRequests: 1)
        let stopping = h.request("gone.mov", url) { progress, stop in
            if progress.bytesSent > 0 { stop = true }
        }
        _ = try? await h.uploader.upload(stopping, resumingFrom: nil, checkpoint: checkpoints.record)
        let saved = try #require(checkpoints.last)
        h.server.faults.removeAll()
        try await h.uploader.abort(saved, bucket: Self.bucket)
        let resumed = Checkpoints()
        let outcome = try await h.uploader.upload(
            h.request("gone.mov", url), resumingFrom: saved, checkpoint: resumed.record)
        guard case .created = outcome else { Issue.record("\(outcome)"); return }
        #expect(try h.stored("gone.mov") == data)
        let fresh = try #require(resumed.values.first ?? nil)
        #expect(fresh.uploadId != saved.uploadId)
        #expect(fresh.parts.isEmpty)
    }

    @Test func aCheckpointPartWhoseBytesChangedSinceIsSentAgain() async throws {
        let h = try await Harness.start(maxConcurrentParts: 1)
        TestEnd.run { await h.stop() }
        let (url, data) = try h.file("big.bin", size: Int(2 * Self.partSize) + 10)
        let checkpoints = Checkpoints()
        h.server.faults.add(.latency(milliseconds: 5000), keyPattern: "edited.mov", method: "PUT", afterRequests: 1)
        let stopping = h.request("edited.mov", url) { progress, stop in
            if progress.bytesSent > 0 { stop = true }
        }
        _ = try? await h.uploader.upload(stopping, resumingFrom: nil, checkpoint: checkpoints.record)
        let saved = try #require(checkpoints.last)
        #expect(saved.parts.map(\.number) == [1])
        h.server.faults.removeAll()
        // The first part's bytes change (same size) between the runs.
        var edited = data
        edited[0] ^= 0xFF
        try edited.write(to: url)
        let before = h.server.requestLog.entries().count
        let outcome = try await h.uploader.upload(
            h.request("edited.mov", url), resumingFrom: saved, checkpoint: { _ in })
        guard case .created(_, let checksums) = outcome else { Issue.record("\(outcome)"); return }
        #expect(checksums.crc32c == Self.crc32c(edited))
        #expect(try h.stored("edited.mov") == edited)
        #expect(h.acknowledgedParts(from: before).map(\.1).contains(1))
    }

    @Test func abortLeavesNoUploadAndAnAbortedUploadCountsAsAborted() async throws {
        let h = try await Harness.start(maxConcurrentParts: 1)
        TestEnd.run { await h.stop() }
        let (url, _) = try h.file("big.bin", size: Int(3 * Self.partSize))
        let checkpoints = Checkpoints()
        h.server.faults.add(.latency(milliseconds: 5000), keyPattern: "abort.mov", method: "PUT", afterRequests: 1)
        let stopping = h.request("abort.mov", url) { progress, stop in
            if progress.bytesSent > 0 { stop = true }
        }
        await #expect(throws: S3Error.cancelled) {
            _ = try await h.uploader.upload(stopping, resumingFrom: nil, checkpoint: checkpoints.record)
        }
        #expect(try h.server.multipartUploads(bucket: Self.bucket).count == 1)
        let saved = try #require(checkpoints.last)
        try await h.uploader.abort(saved, bucket: Self.bucket)
        #expect(try h.server.multipartUploads(bucket: Self.bucket).isEmpty)
        try await h.uploader.abort(saved, bucket: Self.bucket)
        #expect(try h.stored("abort.mov") == nil)
    }

    @Test func cancellingTheTaskStopsTheUploadAndLeavesItResumable() async throws {
        let h = try await Harness.start(maxConcurrentParts: 1)
        TestEnd.run { await h.stop() }
        let (url, data) = try h.file("big.bin", size: Int(4 * Self.partSize))
        let checkpoints = Checkpoints()
        let cancel = LockedBox<Task<UploadOutcome, any Error>?>(nil)
        let task = Task {
            try await h.uploader.upload(h.request("cancel.mov", url), resumingFrom: nil) { checkpoint in
                try checkpoints.record(checkpoint)
                // Cancelled once the first part is acknowledged, before the next is read.
                if checkpoint?.parts.count == 1 { cancel.withLock { $0 }?.cancel() }
            }
        }
        cancel.withLock { $0 = task }
        if checkpoints.values.contains(where: { $0?.parts.isEmpty == false }) { task.cancel() }
        await #expect(throws: S3Error.cancelled) { _ = try await task.value }
        let saved = try #require(checkpoints.last)
        #expect(saved.parts.count < 4)
        #expect(try h.server.multipartUploads(bucket: Self.bucket).map(\.uploadId) == [saved.uploadId])
        let outcome = try await h.uploader.upload(
            h.request("cancel.mov", url), resumingFrom: saved, checkpoint: { _ in })
        guard case .created = outcome else { Issue.record("\(outcome)"); return }
        #expect(try h.stored("cancel.mov") == data)
    }

    // MARK: File, gate, progress

    @Test func aFileThatChangesDuringTheUploadFailsItWithATypedError() async throws {
        let h = try await Harness.start(maxConcurrentParts: 1)
        TestEnd.run { await h.stop() }
        let (url, _) = try h.file("big.bin", size: Int(3 * Self.partSize))
        let grow: @Sendable (UploadCheckpoint?) throws -> Void = { checkpoint in
            // Once the first part is acknowledged, the file grows.
            guard checkpoint?.parts.count == 1 else { return }
            let handle = try FileHandle(forWritingTo: url)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("more".utf8))
            try handle.close()
        }
        do {
            let outcome = try await h.uploader.upload(
                h.request("changing.mov", url), resumingFrom: nil, checkpoint: grow)
            Issue.record("a file that changed was uploaded: \(outcome)")
        } catch {
            #expect(error.isSourceFileChanged)
        }
        #expect(try h.stored("changing.mov") == nil)
    }

    @Test func theNetworkGateRefusesAtOnceWithoutARequest() async throws {
        let h = try await Harness.start(networkPolicy: .userRequestsOnly)
        TestEnd.run { await h.stop() }
        let (url, _) = try h.file("small.bin", size: 100)
        await #expect(throws: S3Error.networkAccessNotAllowed) {
            _ = try await h.uploader.upload(h.request("gated.jpg", url), resumingFrom: nil, checkpoint: { _ in })
        }
        var user = h.request("gated.jpg", url)
        user.isUserRequest = true
        user.networkAccessAllowed = false
        await #expect(throws: S3Error.networkAccessNotAllowed) {
            _ = try await h.uploader.upload(user, resumingFrom: nil, checkpoint: { _ in })
        }
        h.uploader.networkPolicy = .offline
        user.networkAccessAllowed = true
        await #expect(throws: S3Error.networkAccessNotAllowed) {
            _ = try await h.uploader.upload(user, resumingFrom: nil, checkpoint: { _ in })
        }
        #expect(h.server.requestLog.entries().isEmpty)
        h.uploader.networkPolicy = .userRequestsOnly
        _ = try await h.uploader.upload(user, resumingFrom: nil, checkpoint: { _ in })
        #expect(try h.stored("gated.jpg") != nil)
    }

    @Test func progressIsReportedInOrderUpToTheWholeFileBeforeTheUploadReturns() async throws {
        let h = try await Harness.start()
        TestEnd.run { await h.stop() }
        let size = Int(3 * Self.partSize) + 77
        let (url, _) = try h.file("big.bin", size: size)
        let reports = LockedBox<[UploadProgress]>([])
        let request = h.request("progress.mov", url) { progress, _ in reports.withLock { $0.append(progress) } }
        _ = try await h.uploader.upload(request, resumingFrom: nil, checkpoint: { _ in })
        let seen = reports.withLock { $0 }
        #expect(seen.count >= 2)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.bytesSent <= $1.bytesSent })
        #expect(seen.allSatisfy { $0.totalBytes == Int64(size) })
        #expect(seen.last?.bytesSent == Int64(size))
        #expect(seen.last?.fractionCompleted == 1)
        #expect((seen.last?.bytesPerSecond ?? 0) > 0)
    }

    @Test func partSizesGrowForFilesThatWouldNeedMoreThanTenThousandParts() {
        let configuration = UploaderConfiguration(partSize: 1 << 20)
        #expect(configuration.partSize == UploaderConfiguration.minimumPartSize)
        #expect(configuration.multipartThreshold == UploaderConfiguration.minimumPartSize)
        let huge: Int64 = 100 << 30
        let part = configuration.partSize(forFileOf: huge)
        #expect((huge + part - 1) / part <= 10_000)
        #expect(part % (1 << 20) == 0)
        #expect(configuration.partSize(forFileOf: 1 << 30) == UploaderConfiguration.minimumPartSize)
    }

    @Test func theMultipartETagIsComputedFromThePartETags() {
        let parts = [
            UploadedPart(number: 1, etag: "b1946ac92492d2347c6235b4d2611184", size: 6, checksum: nil),
            UploadedPart(number: 2, etag: "591785b794601e212b260e25925636fd", size: 6, checksum: nil),
        ]
        // md5(md5("hello\n") ‖ md5("world\n")) - 2
        let etag = UploadJob.multipartETag(parts)
        #expect(etag?.hasSuffix("-2") == true)
        #expect(etag?.count == 34)
        #expect(UploadJob.multipartETag([UploadedPart(number: 1, etag: "opaque", size: 1, checksum: nil)]) == nil)
    }
}

extension UploadOutcome {
    /// The ETag of a created object ("" otherwise).
    var etag: String {
        if case .created(let etag, _) = self { return etag }
        return ""
    }
}

/// `count` pseudo-random bytes, eight at a time (fast enough for tens of MiB in a debug build).
func fastBytes(_ count: Int, seed: UInt64) -> Data {
    var data = Data(count: count)
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    data.withUnsafeMutableBytes { raw in
        let words = count / 8
        let wordPointer = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
        for i in 0..<words {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            withUnsafeBytes(of: state) {
                (wordPointer + 8 * i).update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: 8)
            }
        }
        for i in (8 * words)..<count { wordPointer[i] = UInt8(truncatingIfNeeded: state >> (8 * (i % 8))) }
    }
    return data
}
