import Foundation
import Hashing

/// One upload: a single PutObject, or a multipart upload (started or resumed) whose parts are read in order and
/// sent up to ``UploaderConfiguration/maxConcurrentParts`` at a time, then completed.
struct UploadJob: Sendable {
    let client: S3Client
    let configuration: UploaderConfiguration
    let request: UploadRequest
    let source: UploadSource
    let reporter: UploadProgressReporter
    let persist: @Sendable (UploadCheckpoint?) throws -> Void

    private var policy: RetryPolicy { configuration.retryPolicy }
    private var algorithm: S3ChecksumAlgorithm { configuration.checksum }
    private var size: Int64 { source.size }

    /// Runs the upload; a failure after the task was cancelled (by the caller or the stop flag) is
    /// ``S3Error/cancelled``.
    func run(resumingFrom: UploadCheckpoint?) async -> Result<UploadOutcome, S3Error> {
        do throws(S3Error) {
            let outcome = try await upload(resumingFrom: resumingFrom)
            if case .created = outcome { await reporter.finish() }
            return .success(outcome)
        } catch {
            return .failure(Task.isCancelled ? .cancelled : error)
        }
    }

    private func upload(resumingFrom: UploadCheckpoint?) async throws(S3Error) -> UploadOutcome {
        var resume = resumingFrom.flatMap { usable($0) ? $0 : nil }
        if let stale = resumingFrom, resume == nil, stale.key == request.key {
            // Another file size (or a corrupt checkpoint): that upload can never complete this file.
            // try?: an upload left open costs only its parts until the lifecycle rule ends it
            try? await client.abortUpload(
                bucket: request.bucket, key: stale.key, uploadId: stale.uploadId, policy: policy)
            try save(nil)
        }
        if resume == nil, size < configuration.multipartThreshold || size == 0 {
            return try await putWhole()
        }
        // A 409 at completion can make S3 drop the upload; AWS then asks for a new one: at most once here.
        for round in 0..<2 {
            switch try await multipart(resume: resume) {
            case .done(let outcome): return outcome
            case .startOver where round == 0: resume = nil
            case .startOver: break
            }
        }
        throw .service(
            code: "NoSuchUpload", message: "the multipart upload vanished twice before it completed", status: 404,
            requestID: nil)
    }

    /// Whether a checkpoint can resume this file: the same key and size, a valid part size and parts in range.
    private func usable(_ checkpoint: UploadCheckpoint) -> Bool {
        guard checkpoint.key == request.key, checkpoint.size == size, size > 0, !checkpoint.uploadId.isEmpty,
            checkpoint.partSize >= UploaderConfiguration.minimumPartSize
        else { return false }
        let count = (size + checkpoint.partSize - 1) / checkpoint.partSize
        return count <= 10_000 && checkpoint.parts.allSatisfy { $0.number >= 1 && Int64($0.number) <= count }
    }

    private func save(_ checkpoint: UploadCheckpoint?) throws(S3Error) {
        do {
            try persist(checkpoint)
        } catch let error as S3Error {
            throw error
        } catch {
            throw .fileSystem(path: "the upload checkpoint of \(request.key)", errno: EIO)
        }
    }

    // MARK: One request

    private func putWhole() async throws(S3Error) -> UploadOutcome {
        let checksum: S3ChecksumValue
        if let known = knownFullChecksum {
            checksum = known
            source.prefetch(0..<size)
        } else {
            var running = RunningChecksum(algorithm)
            try source.scan(0..<size) { running.update($0) }
            checksum = running.value
        }
        try source.checkUnchanged()
        let body = S3UploadBody.file(source.body(0..<size))
        for _ in 0..<3 {
            var attempts = 0
            do {
                let head = try await client.uploadObject(
                    bucket: request.bucket, key: request.key, body: body, contentType: request.contentType,
                    metadata: request.metadata, checksum: checksum, ifNoneMatch: request.createOnly, policy: policy,
                    attempts: &attempts)
                reporter.acknowledged(size)
                var checksums = S3Checksums(head: head)
                checksums.fill(checksum)
                return .created(etag: S3ETag.unquoted(head["etag"] ?? ""), checksums: checksums)
            } catch .preconditionFailed where request.createOnly {
                // Deleted since the 412: try again.
                guard let head = try await headIfPresent() else { continue }
                if attempts > 1, isOurs(head, etag: nil, checksum: checksum) {
                    // An earlier attempt wrote it and its answer was lost.
                    reporter.acknowledged(size)
                    return .created(etag: head.etag, checksums: head.checksums.filling(checksum))
                }
                return .keyExists(head)
            }
        }
        throw .preconditionFailed
    }

    /// The caller's CRC-32C of the file as the full-object checksum, when it gave one for that algorithm.
    private var knownFullChecksum: S3ChecksumValue? {
        guard algorithm == .crc32c, let crc = request.fullObjectCRC32C else { return nil }
        return S3ChecksumValue(algorithm: .crc32c, base64: S3ChecksumAlgorithm.base64(crc))
    }

    private func headIfPresent() async throws(S3Error) -> S3ObjectHead? {
        do {
            return try await client.headObject(bucket: request.bucket, key: request.key)
        } catch .noSuchKey {
            return nil
        }
    }

    /// Whether the object under the key is the one this upload wrote (an earlier attempt whose answer was lost):
    /// the same size, and the same multipart ETag or full-object checksum. An object that cannot be told apart
    /// from another is not taken for ours.
    private func isOurs(_ head: S3ObjectHead, etag: String?, checksum: S3ChecksumValue?) -> Bool {
        guard head.size == size else { return false }
        if let etag, head.etag == etag { return true }
        guard let checksum else { return false }
        switch checksum.algorithm {
        case .crc32: return head.checksums.crc32 == checksum.base64
        case .crc32c: return head.checksums.crc32c == checksum.base64
        case .sha256: return head.checksums.sha256 == checksum.base64
        }
    }

    /// The full-object checksum of the file: the caller's, or computed by reading it (nil for an algorithm S3
    /// keeps no full-object checksum of for a multipart object).
    private func fullChecksum() throws(S3Error) -> S3ChecksumValue? {
        if let known = knownFullChecksum { return known }
        guard algorithm.supportsFullObjectMultipart else { return nil }
        var running = RunningChecksum(algorithm)
        try source.scan(0..<size) { running.update($0) }
        return running.value
    }

    /// Whether the object under the key has this file's size and full-object checksum (read from the file only
    /// when the size matches).
    private func isOursByContent(_ head: S3ObjectHead) throws(S3Error) -> Bool {
        guard head.size == size else { return false }
        return isOurs(head, etag: nil, checksum: try fullChecksum())
    }

    // MARK: Multipart

    private enum MultipartEnd {
        case done(UploadOutcome)
        /// The upload vanished at completion (after a conflict): start a new one.
        case startOver
    }

    /// The parts of the file.
    private struct PartPlan {
        let size: Int64
        let partSize: Int64
        var count: Int { Int((size + partSize - 1) / partSize) }

        func range(_ number: Int) -> Range<Int64> {
            let start = Int64(number - 1) * partSize
            return start..<min(size, start + partSize)
        }
    }

    /// A multipart upload to send parts to: its id, its parts, and those already acknowledged.
    private struct StartedUpload {
        var uploadId: String
        var plan: PartPlan
        var acknowledged: [Int: UploadedPart]
    }

    private func multipart(resume: UploadCheckpoint?) async throws(S3Error) -> MultipartEnd {
        var started: StartedUpload?
        var vanished = false
        if let resume {
            switch try await confirm(resume) {
            case .resumable(let upload): started = upload
            case .vanished: vanished = true
            case .unusable: break
            }
        }
        let isNew = started == nil
        if started == nil {
            // A create-only upload to a key that holds an object would end in a 412: ask first, before sending the
            // file. After an upload that vanished, the object there may be that upload's, completed by an earlier
            // run whose last checkpoint was not kept.
            if request.createOnly, let head = try await headIfPresent() {
                // try?: a stale checkpoint finds its upload gone next time and is dropped
                if resume != nil { try? persist(nil) }
                if vanished, try isOursByContent(head) {
                    return .done(.created(etag: head.etag, checksums: head.checksums.filling(try fullChecksum())))
                }
                return .done(.keyExists(head))
            }
            let id = try await client.createUpload(
                bucket: request.bucket, key: request.key, contentType: request.contentType,
                metadata: request.metadata, checksum: algorithm, fullObject: algorithm.supportsFullObjectMultipart,
                policy: policy)
            started = StartedUpload(
                uploadId: id, plan: PartPlan(size: size, partSize: configuration.partSize(forFileOf: size)),
                acknowledged: [:])
        }
        guard let started else { throw .cancelled }
        let base = UploadCheckpoint(
            uploadId: started.uploadId, key: request.key, partSize: started.plan.partSize, size: size, parts: [])
        if isNew || started.acknowledged.count != resume?.parts.count {
            do {
                try save(Self.checkpoint(base, started.acknowledged))
            } catch {
                if isNew {
                    // try?: an upload left open costs only its parts until the lifecycle rule ends it
                    try? await client.abortUpload(
                        bucket: request.bucket, key: request.key, uploadId: started.uploadId, policy: policy)
                }
                throw error
            }
        }
        let (parts, full) = try await sendParts(started, base: base)
        try source.checkUnchanged()
        return try await complete(uploadId: started.uploadId, plan: started.plan, parts: parts, full: full)
    }

    private static func checkpoint(_ base: UploadCheckpoint, _ parts: [Int: UploadedPart]) -> UploadCheckpoint {
        var checkpoint = base
        checkpoint.parts = parts.values.sorted { $0.number < $1.number }
        return checkpoint
    }

    /// What a checkpoint's upload turned out to be.
    private enum Confirmation {
        /// It goes on, with the parts the service still has as they were acknowledged.
        case resumable(StartedUpload)
        /// The service no longer knows it (completed, aborted, expired).
        case vanished
        /// It cannot be completed with this configuration (it was aborted).
        case unusable
    }

    /// Lists a checkpoint's upload and keeps the parts the service still has as they were acknowledged.
    private func confirm(_ checkpoint: UploadCheckpoint) async throws(S3Error) -> Confirmation {
        let listed: S3ListedParts
        do {
            listed = try await client.listParts(
                bucket: request.bucket, key: request.key, uploadId: checkpoint.uploadId, checksum: algorithm,
                policy: policy)
        } catch {
            if error.serviceCode == "NoSuchUpload" { return .vanished }
            throw error
        }
        if let other = listed.checksumAlgorithm, other.uppercased() != algorithm.headerValue {
            // Made with another checksum: its parts cannot be completed with this one's.
            // try?: an upload left open costs only its parts until the lifecycle rule ends it
            try? await client.abortUpload(
                bucket: request.bucket, key: request.key, uploadId: checkpoint.uploadId, policy: policy)
            return .unusable
        }
        let plan = PartPlan(size: size, partSize: checkpoint.partSize)
        var service: [Int: S3ListedPart] = [:]
        for part in listed.parts { service[part.number] = part }
        var confirmed: [Int: UploadedPart] = [:]
        for part in checkpoint.parts {
            guard let listed = service[part.number], listed.etag == part.etag, listed.size == part.size,
                part.size == Int64(plan.range(part.number).count)
            else { continue }
            var kept = part
            if kept.checksum == nil { kept.checksum = listed.checksum }
            confirmed[part.number] = kept
        }
        // A part the service has with a checksum, that no checkpoint recorded (the process was killed between the
        // answer and saving it): kept too, as its checksum is compared with the file's bytes before the upload goes
        // on — an acknowledged part is never sent again.
        for (number, listed) in service where confirmed[number] == nil && number >= 1 && number <= plan.count {
            guard let checksum = listed.checksum, listed.size == Int64(plan.range(number).count) else { continue }
            confirmed[number] = UploadedPart(number: number, etag: listed.etag, size: listed.size, checksum: checksum)
        }
        return .resumable(StartedUpload(uploadId: checkpoint.uploadId, plan: plan, acknowledged: confirmed))
    }

    /// The result of sending one part.
    private struct PartResult: Sendable {
        var number: Int
        var result: Result<UploadedPart, S3Error>
    }

    /// Reads the parts in order (checking those already acknowledged against the file, sending the others up to
    /// the parallelism) and returns every part once all are acknowledged, with the full-object checksum to send.
    private func sendParts(_ upload: StartedUpload, base: UploadCheckpoint) async throws(S3Error) -> (
        [Int: UploadedPart], S3ChecksumValue?
    ) {
        let plan = upload.plan
        let uploadId = upload.uploadId
        var parts = upload.acknowledged
        var failure: S3Error?
        let known = knownFullChecksum
        var running: RunningChecksum? =
            known == nil && algorithm.supportsFullObjectMultipart ? RunningChecksum(algorithm) : nil
        let limit = max(1, configuration.maxConcurrentParts)

        /// Records a finished part; false when the upload must stop.
        func absorb(_ finished: PartResult) -> Bool {
            switch finished.result {
            case .success(let part):
                parts[part.number] = part
                reporter.acknowledged(part.size)
                do {
                    try save(Self.checkpoint(base, parts))
                } catch {
                    if failure == nil { failure = error }
                    return false
                }
                return true
            case .failure(let error):
                if failure == nil { failure = error }
                return false
            }
        }

        await withTaskGroup(of: PartResult.self) { group in
            var inFlight = 0
            for number in 1...plan.count {
                if failure != nil || Task.isCancelled { break }
                let range = plan.range(number)
                do throws(S3Error) {
                    if let part = parts[number] {
                        // Acknowledged earlier: kept if the file still has the bytes it was computed from.
                        let before = running
                        var local = RunningChecksum(algorithm)
                        try source.scan(range) { bytes in
                            local.update(bytes)
                            running?.update(bytes)
                        }
                        if part.checksum == nil || part.checksum == local.value.base64 {
                            reporter.resumed(part.size)
                            continue
                        }
                        // The file changed since: this part is sent again, with its bytes as they are now.
                        parts[number] = nil
                        running = before
                    }
                    while inFlight >= limit, let finished = await group.next() {
                        inFlight -= 1
                        if !absorb(finished) { group.cancelAll() }
                    }
                    if failure != nil { break }
                    // The part is read here for its checksum (and the object's), then again by the engine as it is
                    // sent (from the page cache): no part is held in memory.
                    var part = RunningChecksum(algorithm)
                    try source.scan(range) { bytes in
                        part.update(bytes)
                        running?.update(bytes)
                    }
                    try source.checkUnchanged()
                    let checksum = part.value
                    group.addTask { await send(part: number, range: range, checksum: checksum, uploadId: uploadId) }
                    inFlight += 1
                } catch {
                    if failure == nil { failure = error }
                }
            }
            if failure != nil || Task.isCancelled { group.cancelAll() }
            while let finished = await group.next() {
                if !absorb(finished) { group.cancelAll() }
            }
        }
        if Task.isCancelled { throw .cancelled }
        if let failure { throw failure }
        guard parts.count == plan.count else { throw .cancelled }
        return (parts, known ?? running?.value)
    }

    private func send(part number: Int, range: Range<Int64>, checksum: S3ChecksumValue, uploadId: String) async
        -> PartResult
    {
        do {
            let etag = try await client.uploadPart(
                bucket: request.bucket, key: request.key, uploadId: uploadId, number: number,
                body: .file(source.body(range)), checksum: checksum, policy: policy)
            return PartResult(
                number: number,
                result: .success(
                    UploadedPart(number: number, etag: etag, size: Int64(range.count), checksum: checksum.base64)))
        } catch {
            // The service found other bytes than were checksummed: the file changed in between.
            if error.serviceCode == "BadDigest" {
                do { try source.checkUnchanged() } catch { return PartResult(number: number, result: .failure(error)) }
            }
            return PartResult(number: number, result: .failure(error))
        }
    }

    /// CompleteMultipartUpload, and what its failures mean: a 412 (the key holds an object) aborts this upload and
    /// reports the object, unless an earlier attempt of this completion wrote it; a vanished upload after a
    /// retried completion is checked the same way, else started over.
    private func complete(uploadId: String, plan: PartPlan, parts: [Int: UploadedPart], full: S3ChecksumValue?)
        async throws(S3Error) -> MultipartEnd
    {
        let ordered = (1...plan.count).compactMap { parts[$0] }
        let toComplete = ordered.map { part in
            S3PartToComplete(
                number: part.number, etag: part.etag,
                checksum: part.checksum.map { S3ChecksumValue(algorithm: algorithm, base64: $0) })
        }
        let etag = Self.multipartETag(ordered)
        for _ in 0..<3 {
            var attempts = 0
            do {
                let done = try await client.completeUpload(
                    bucket: request.bucket, key: request.key, uploadId: uploadId, parts: toComplete, fullObject: full,
                    ifNoneMatch: request.createOnly, policy: policy, attempts: &attempts)
                // try?: the object is complete; a stale checkpoint is dropped at next resume
                try? persist(nil)
                var checksums = S3Checksums()
                for (algorithm, value) in done.checksums where !value.contains("-") {
                    checksums.fill(S3ChecksumValue(algorithm: algorithm, base64: value))
                }
                checksums.fill(full)
                return .done(.created(etag: done.etag.isEmpty ? etag ?? "" : done.etag, checksums: checksums))
            } catch .preconditionFailed where request.createOnly {
                guard let head = try await headIfPresent() else { continue }  // deleted since: complete again
                if attempts > 1, isOurs(head, etag: etag, checksum: full) {
                    // try?: the object is complete; a stale checkpoint is dropped at next resume
                    try? persist(nil)
                    return .done(.created(etag: head.etag, checksums: head.checksums.filling(full)))
                }
                // try?: an upload left open costs only its parts until the lifecycle rule ends it
                try? await client.abortUpload(
                    bucket: request.bucket, key: request.key, uploadId: uploadId, policy: policy)
                // try?: the object is complete; a stale checkpoint is dropped at next resume
                try? persist(nil)
                return .done(.keyExists(head))
            } catch {
                guard error.serviceCode == "NoSuchUpload" else { throw error }
                if attempts > 1, let head = try await headIfPresent(), isOurs(head, etag: etag, checksum: full) {
                    // try?: the object is complete; a stale checkpoint is dropped at next resume
                    try? persist(nil)
                    return .done(.created(etag: head.etag, checksums: head.checksums.filling(full)))
                }
                return .startOver
            }
        }
        throw .preconditionFailed
    }

    /// The ETag S3 gives a multipart object (the MD5 of the parts' MD5s, then `-N`), when every part's ETag is
    /// its MD5.
    static func multipartETag(_ parts: [UploadedPart]) -> String? {
        var digests = Data()
        for part in parts {
            guard S3ETag.isPlainMD5(part.etag) else { return nil }
            var bytes = part.etag.utf8.makeIterator()
            while let high = bytes.next(), let low = bytes.next() {
                guard let h = hexValue(high), let l = hexValue(low) else { return nil }
                digests.append(h << 4 | l)
            }
        }
        let hex = Insecure.MD5.hash(data: digests).map { String(format: "%02x", $0) }.joined()
        return "\(hex)-\(parts.count)"
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 97...102: byte - 87
        case 65...70: byte - 55
        default: nil
        }
    }
}

extension S3Checksums {
    /// Sets the checksum of `value`'s algorithm where the service returned none.
    mutating func fill(_ value: S3ChecksumValue?) {
        guard let value else { return }
        switch value.algorithm {
        case .crc32: crc32 = crc32 ?? value.base64
        case .crc32c: crc32c = crc32c ?? value.base64
        case .sha256: sha256 = sha256 ?? value.base64
        }
    }

    func filling(_ value: S3ChecksumValue?) -> S3Checksums {
        var copy = self
        copy.fill(value)
        return copy
    }
}
