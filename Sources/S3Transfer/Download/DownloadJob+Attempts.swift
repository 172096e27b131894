import AWSSigV4
import Essentials
import Foundation

/// The task path of a download: the loop of GET attempts that resumes, retries (``RetryState``), verifies and
/// moves the file into place.
extension DownloadJob {
    /// The download as a task: slot (unless held), resume, attempts, verification, rename. `first` is an
    /// attempt already made (by ``startFirstAttempt()``) whose outcome the loop takes up before any other.
    func run(
        first: (writer: PartFileWriter, outcome: DownloadAttemptOutcome)?, holdingSlot: Bool
    ) async -> Result<DownloadResult, S3Error> {
        if !holdingSlot {
            guard await scheduler.acquire(priority: request.priority) else { return .failure(.cancelled) }
        }
        var holdsSlot = true
        defer { if holdsSlot { scheduler.release() } }
        /// The connection is done with: the next download gets it while this file is synced and renamed.
        func finalizeWithoutSlot(writer: PartFileWriter, version: ObjectVersion, attempts: Int) async throws(S3Error)
            -> Result<DownloadResult, S3Error>
        {
            scheduler.release()
            holdsSlot = false
            try await writer.syncAndRename(to: jobKey.destination).get()
            return .success(result(writer: writer, version: version, attempts: attempts))
        }
        do {
            var version = ObjectVersion()
            let writer: PartFileWriter
            var pending: DownloadAttemptOutcome?
            var attempts = 0
            if let first {
                writer = first.writer
                pending = first.outcome
                attempts = 1
                await writer.drain()
            } else {
                (writer, version) = try await prepareWriter()
            }
            progress.withLock { $0.total = version.total }

            var retries = RetryState(
                policy: configuration.retryPolicy, observer: configuration.observer, request: "GET " + request.key)
            while true {
                let offset: Int64
                let outcome: DownloadAttemptOutcome
                if let taken = pending {
                    pending = nil
                    offset = 0
                    outcome = taken
                } else {
                    if isCancelled || Task.isCancelled { return .failure(.cancelled) }
                    if isPaused {
                        scheduler.release()
                        holdsSlot = false
                        await waitWhilePaused()
                        if isCancelled { return .failure(.cancelled) }
                        guard await scheduler.acquire(priority: request.priority) else { return .failure(.cancelled) }
                        holdsSlot = true
                        continue
                    }
                    offset = writer.written
                    if offset > 0, version.etag != nil, offset == version.total {
                        // Every byte is on disk already (an earlier run stopped after the last write and before the
                        // rename): asking for `bytes=size-` would be a 416. Verify what is there and finish, or start over.
                        if verify(writer: writer, version: version) == nil {
                            return try await finalizeWithoutSlot(writer: writer, version: version, attempts: attempts)
                        }
                        discard(writer: writer)
                        await writer.drain()
                        version = ObjectVersion()
                        continue
                    }
                    attempts += 1
                    outcome = await attempt(writer: writer, offset: offset, version: version, number: attempts)
                }
                switch outcome {
                case .completed(let head):
                    version.adopt(head)
                    if let mismatch = verify(writer: writer, version: version) {
                        writer.restart(hasher: nil)
                        await writer.drain()
                        removeSidecar()
                        version = ObjectVersion()
                        if case .checksumMismatch = mismatch {
                            // A corrupt body is downloaded once more, then reported as it is.
                            if retries.takeFreeRetry(.checksumMismatch) { continue }
                            return .failure(mismatch)
                        }
                        try await retries.backOffOrThrow(mismatch, retryingAlso: true)
                        continue
                    }
                    return try await finalizeWithoutSlot(writer: writer, version: version, attempts: attempts)
                case .failed(let error, let head, let retryAfter):
                    if let head { version.adopt(head) }
                    saveSidecar(writer: writer, version: version)
                    switch error {
                    case .cancelled:
                        // A pause stops the transfer the same way; only a cancelled job ends here.
                        if !isCancelled && !Task.isCancelled {
                            attempts -= 1
                            continue
                        }
                        return .failure(.cancelled)
                    case .preconditionFailed, .objectChanged:
                        // The object changed since the bytes on disk were fetched: never mix versions.
                        discard(writer: writer)
                        await writer.drain()
                        if request.expectedETag != nil { return .failure(.objectChanged) }
                        version = ObjectVersion()
                        if retries.takeFreeRetry(.objectChanged) { continue }
                        try await retries.backOffOrThrow(.objectChanged, retryingAlso: true)
                    default:
                        // An attempt that added bytes on disk (a connection reset mid-body) starts the count of
                        // failures in a row again: a resumed download is not a repeated failure.
                        try await retries.backOffOrThrow(
                            error, keptBytes: writer.written - offset, serverAsked: retryAfter)
                    }
                }
            }
        } catch {
            return .failure(error)
        }
    }

    /// One GET: starts it (unless cancelled or paused meanwhile) and waits for its end and for the writer.
    func attempt(writer: PartFileWriter, offset: Int64, version: ObjectVersion, number: Int) async
        -> DownloadAttemptOutcome
    {
        let credentials: AWSCredentials?
        do {
            credentials = try await client.signingCredentials()
        } catch {
            return .failed(error, nil)
        }
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<DownloadAttemptOutcome, Never>) in
            let started = startAttempt(
                writer: writer, offset: offset, version: version, credentials: credentials, number: number
            ) { [self] outcome in
                // On the engine thread, which has just read the hasher (a batched MD5): the job's lock, taken
                // again below once resumed, orders that before the job's own use of the hasher — for any
                // checker, not only through the continuation.
                state.withLock { $0.currentTransfer = nil }
                continuation.resume(returning: outcome)
            }
            if !started { continuation.resume(returning: .failed(.cancelled, nil)) }
        }
        state.withLock { $0.currentTransfer = nil }
        await writer.drain()
        return outcome
    }

    /// Signs (with `credentials`) and starts one GET; false (and nothing started) when the job was cancelled or
    /// paused meanwhile. `completion` runs on the engine thread; the writer may still have queued work then.
    func startAttempt(
        writer: PartFileWriter, offset: Int64, version: ObjectVersion, credentials: AWSCredentials?, number: Int = 1,
        completion: @escaping @Sendable (DownloadAttemptOutcome) -> Void
    ) -> Bool {
        var headers: [(name: String, value: String)] = [("x-amz-checksum-mode", "ENABLED")]
        if offset > 0, let etag = version.etag {
            headers.append(("range", "bytes=\(offset)-"))
            headers.append(("if-match", S3ETag.quoted(etag)))
        } else if let expected = request.expectedETag {
            headers.append(("if-match", S3ETag.quoted(S3ETag.unquoted(expected))))
        }
        let expectation = DownloadStreamHandler.Expectation(
            offset: offset, rangeEnd: nil, knownETag: version.etag, knownTotal: version.total,
            requiredETag: request.expectedETag, requiredSize: request.expectedSize, acceptsWholeObject: true,
            integrity: configuration.integrity)
        let engine = client.engine
        let id = engine.makeTransferID()
        var request = client.makeRequest(
            method: "GET", bucket: request.bucket, key: request.key, headers: headers,
            stallTimeout: configuration.stallTimeout, credentials: credentials)
        request.successHeaders = DownloadStreamHandler.headersRead
        let handler = DownloadStreamHandler(
            client: client, writer: writer, expectation: expectation,
            reporter: configuration.observer?.attemptReporter(request, attempt: number),
            onHead: { [weak self] head in
                self?.progress.withLock { p in
                    p.total = head.total
                    p.base = head.start
                    p.attemptBytes = 0
                }
                // A body that fits in one write chunk has nothing on disk to continue from until it is
                // complete, so it gets no sidecar (which would cost two more inodes per small object).
                if head.length > Int64(writer.chunkSize) {
                    self?.persistResumePoint(etag: head.etag, total: head.total, checksums: head.checksums)
                }
            },
            onBytes: { [weak self] n in self?.received(n) },
            completion: completion)
        writer.attach(engine, id)
        return state.withLock { state -> Bool in
            guard !state.cancelled, !state.paused else { return false }
            state.currentTransfer = id
            engine.start(request, handler: handler, id: id)
            return true
        }
    }
}
