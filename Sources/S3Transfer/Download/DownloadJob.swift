import Essentials
import Foundation

/// One transfer of one object to one destination, shared by every ``DownloadAttachment`` that asked for it.
///
/// The common case runs without a task: the slot's grant (on whatever thread gave the slot back) signs and
/// starts the GET, the engine thread streams the body into the `.part`, and the writer's queue verifies,
/// syncs, renames and delivers the result. Anything else — a `.part` to resume, a failed or unverifiable
/// attempt, a pause, a previous job for the same file still letting go — continues as a task that resumes
/// from a `.part` file and its sidecar when they belong to the right version, makes GET attempts (Range +
/// If-Match when continuing), retries within the budget, verifies and moves the file into place. Only a
/// verified file is ever renamed to the destination.
// @unchecked: mutable state is in LockedBoxes; the attempt's handler and writer are used by one attempt at a time.
final class DownloadJob: @unchecked Sendable {
    struct Key: Hashable {
        var bucket: String
        var key: String
        var destination: String
    }

    let jobKey: Key
    let request: DownloadRequest
    /// `<destination>.part`.
    let partPath: String
    private let client: S3Client
    private let configuration: DownloaderConfiguration
    private let scheduler: TransferScheduler
    private let onFinish: @Sendable (DownloadJob) -> Void

    private struct State {
        var attachments: [AttachmentID: DownloadAttachment] = [:]
        var pausedAttachments: Set<AttachmentID> = []
        var finished = false
        var cancelled = false
        var paused = false
        var resumeWaiter: CheckedContinuation<Void, Never>?
        var currentTransfer: HTTPTransferID?
        /// The request for a slot while it waits in the scheduler (withdrawn when the job is cancelled).
        var slotTicket: TransferScheduler.Ticket?
        var task: Task<Void, Never>?
        /// Set once the job's file work is over and its attachments are told; later jobs for the same file
        /// wait for it (``waitUntilEnded()``).
        var ended = false
        var endWaiters: [CheckedContinuation<Void, Never>] = []
        /// The writer of the `.part`, so that the job ends only after its queued file work (a background open
        /// that has not run yet must not create the file after the job is over).
        var writer: PartFileWriter?
    }
    private let state = LockedBox(State())

    private struct Progress {
        var total: Int64?
        var base: Int64 = 0
        var attemptBytes: Int64 = 0
        var transferred: Int64 = 0
        var lastReport: UInt64 = 0
        var started = DispatchTime.now().uptimeNanoseconds
    }
    private let progress = LockedBox(Progress())
    private struct SidecarState {
        /// Whether a sidecar may be on disk (so that finishing without one costs no `unlink`).
        var mayExist = false
        /// The version whose resume point (see ``persistResumePoint(etag:total:checksums:)``) the sidecar on disk holds: it stays
        /// true however far the in-order `.part` grows, so later attempts and failures need not rewrite it.
        var resumePoint: (etag: String, total: Int64)?
    }
    private let sidecarState = LockedBox(SidecarState())

    init(
        key: Key, request: DownloadRequest, client: S3Client, configuration: DownloaderConfiguration,
        scheduler: TransferScheduler, onFinish: @escaping @Sendable (DownloadJob) -> Void
    ) {
        jobKey = key
        self.request = request
        partPath = key.destination + ".part"
        self.client = client
        self.configuration = configuration
        self.scheduler = scheduler
        self.onFinish = onFinish
    }

    // MARK: Attachments

    /// Adds a request; false when the job has already finished (then start a new one).
    func attach(_ attachment: DownloadAttachment) -> Bool {
        let ok = state.withLock { state -> Bool in
            guard !state.finished, !state.cancelled else { return false }
            state.attachments[attachment.id] = attachment
            state.paused = false
            state.pausedAttachments.remove(attachment.id)
            return true
        }
        if ok {
            attachment.bind(to: self)
            wakeIfResumed()
        }
        return ok
    }

    /// Removes a request; cancels the transfer when none is left.
    func detach(_ id: AttachmentID) {
        let (engineCancel, task, ticket) = state.withLock {
            state -> (HTTPTransferID?, Task<Void, Never>?, TransferScheduler.Ticket?) in
            guard state.attachments.removeValue(forKey: id) != nil else { return (nil, nil, nil) }
            state.pausedAttachments.remove(id)
            guard state.attachments.isEmpty, !state.finished else { return (nil, nil, nil) }
            state.cancelled = true
            return (state.currentTransfer, state.task, state.slotTicket)
        }
        // A job still waiting for a slot leaves the queue and ends at once (through its grant).
        if let ticket { scheduler.withdraw(ticket) }
        if let engineCancel { client.engine.cancel(engineCancel) }
        task?.cancel()
        wakeIfResumed(force: true)
    }

    /// Pauses while every attached request is paused.
    func setPaused(_ id: AttachmentID, _ paused: Bool) {
        let cancelTransfer = state.withLock { state -> HTTPTransferID? in
            guard state.attachments[id] != nil else { return nil }
            if paused { state.pausedAttachments.insert(id) } else { state.pausedAttachments.remove(id) }
            let allPaused = state.pausedAttachments.count == state.attachments.count
            state.paused = allPaused
            return allPaused ? state.currentTransfer : nil
        }
        if let cancelTransfer { client.engine.cancel(cancelTransfer) }
        if !paused { wakeIfResumed() }
    }

    private func wakeIfResumed(force: Bool = false) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard force || !state.paused || state.cancelled else { return nil }
            defer { state.resumeWaiter = nil }
            return state.resumeWaiter
        }
        waiter?.resume()
    }

    private var isCancelled: Bool { state.withLock { $0.cancelled } }
    private var isPaused: Bool { state.withLock { $0.paused && !$0.cancelled } }

    private func waitWhilePaused() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let proceed = state.withLock { state -> Bool in
                guard state.paused, !state.cancelled else { return true }
                state.resumeWaiter = continuation
                return false
            }
            if proceed { continuation.resume() }
        }
    }

    // MARK: Running

    /// Starts the job: at once (as soon as a slot is free) without a task, or, when `previous` (a cancelled
    /// job for the same file) is given, as a task that first waits for it to let go of the file.
    func start(after previous: DownloadJob? = nil) {
        if let previous {
            startTask(first: nil, holdingSlot: false, after: previous)
            return
        }
        let ticket = scheduler.makeTicket()
        state.withLock { $0.slotTicket = ticket }
        let now = scheduler.request(ticket, priority: request.priority) { [self] granted in
            state.withLock { $0.slotTicket = nil }
            if granted {
                startFirstAttempt(onCallerThread: false)
            } else {
                end(.failure(.cancelled))
            }
        }
        if now {
            state.withLock { $0.slotTicket = nil }
            startFirstAttempt(onCallerThread: true)
        }
    }

    /// The first attempt of a job that holds a slot, made on the writer's queue when the slot came at once
    /// (the caller's thread may belong to the caller's pool, and creating a file may wait for the disk), else
    /// on the thread that gave the slot back (a writer's queue, or a task of the downloader's).
    private func startFirstAttempt(onCallerThread: Bool) {
        let writer = PartFileWriter(path: partPath, allowsFileSystemSync: configuration.syncsFileSystemForGroups)
        state.withLock { $0.writer = writer }
        if onCallerThread {
            writer.perform { [self] in openAndStart(writer) }
        } else {
            openAndStart(writer)
        }
    }

    /// Creates the empty `.part` and starts the GET. A `.part` left by an earlier run (its sidecar says which
    /// version it holds), or a job cancelled or paused meanwhile, is the task's business.
    private func openAndStart(_ writer: PartFileWriter) {
        guard !PartSidecar.lookup(forPart: partPath).present else {
            return startTask(first: nil, holdingSlot: true)
        }
        if case .failure(let error) = openPart(writer, truncate: true) {
            // From the writer's queue, after this returns: the slot's next grant may run on this thread and
            // fail the same way (a missing folder), which must not nest one grant in another thousands deep.
            writer.perform { [self] in
                scheduler.release()
                end(.failure(error))
            }
            return
        }
        let started = startAttempt(writer: writer, offset: 0, version: ObjectVersion()) { [self] outcome in
            firstAttemptEnded(outcome, writer: writer)
        }
        if !started { startTask(first: (writer, .failed(.cancelled, nil)), holdingSlot: true) }
    }

    /// The end of the first attempt (engine thread): a complete body is verified, synced and renamed on the
    /// writer's queue (after the hashing queued there); anything else goes on as a task.
    private func firstAttemptEnded(_ outcome: DownloadAttemptOutcome, writer: PartFileWriter) {
        state.withLock { $0.currentTransfer = nil }
        guard case .completed(let head) = outcome else {
            return startTask(first: (writer, outcome), holdingSlot: true)
        }
        writer.perform { [self] in
            var version = ObjectVersion()
            version.adopt(head)
            guard verify(writer: writer, version: version) == nil else {
                return startTask(first: (writer, outcome), holdingSlot: true)
            }
            // The connection is done with: the next download gets it while this file is synced and renamed.
            scheduler.release()
            writer.commitNow(renamingTo: jobKey.destination) { [self, version] renamed in
                end(renamed.map { result(writer: writer, version: version, attempts: 1) })
            }
        }
    }

    /// Runs the rest of the job as a task (see ``run(first:holdingSlot:)``).
    private func startTask(
        first: (writer: PartFileWriter, outcome: DownloadAttemptOutcome)?, holdingSlot: Bool,
        after previous: DownloadJob? = nil
    ) {
        let task = Task.detached { [self] in
            await previous?.waitUntilEnded()
            let result = await run(first: first, holdingSlot: holdingSlot)
            await state.withLock({ $0.writer })?.drain()
            end(result)
        }
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// Tells the attachments the result, after the job's file work is over.
    private func end(_ result: Result<DownloadResult, S3Error>) {
        if case .failure(let error) = result, error.isOutOfSpace {
            // The disk is full: keeping the partial bytes would keep it full, and they cannot grow anyway.
            unlink(partPath)
            removeSidecar()
        }
        let attachments = state.withLock { state -> [DownloadAttachment] in
            state.finished = true
            return Array(state.attachments.values)
        }
        onFinish(self)
        let final: DownloadProgress? = progress.withLock { p in
            guard case .success(let r) = result else { return nil }
            return DownloadProgress(bytesReceived: r.size, totalBytes: r.size, bytesPerSecond: Self.rate(p))
        }
        for attachment in attachments { attachment.finish(result, finalProgress: final) }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.ended = true
            defer { state.endWaiters = [] }
            return state.endWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the job has ended (its file work is over).
    private func waitUntilEnded() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state -> Bool in
                if !state.ended { state.endWaiters.append(continuation) }
                return state.ended
            }
            if ended { continuation.resume() }
        }
    }

    private static func rate(_ p: Progress) -> Double {
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - p.started) / 1e9
        return elapsed > 0 ? Double(p.transferred) / elapsed : 0
    }

    /// Counts body bytes (engine thread) and reports progress at most every ``DownloaderConfiguration/progressInterval``.
    private func received(_ count: Int) {
        let report = progress.withLock { p -> DownloadProgress? in
            p.transferred += Int64(count)
            p.attemptBytes += Int64(count)
            let now = DispatchTime.now().uptimeNanoseconds
            guard now - p.lastReport >= UInt64(configuration.progressInterval) * 1_000_000 else { return nil }
            p.lastReport = now
            return DownloadProgress(
                bytesReceived: p.base + p.attemptBytes, totalBytes: p.total, bytesPerSecond: Self.rate(p))
        }
        guard let report else { return }
        for attachment in state.withLock({ Array($0.attachments.values) }) { attachment.deliver(report) }
    }

    /// The download as a task: slot (unless held), resume, attempts, verification, rename. `first` is an
    /// attempt already made (by ``startFirstAttempt()``) whose outcome the loop takes up before any other.
    private func run(
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

            var failures = 0
            var checksumRetried = false
            var restartedForChange = false
            var skewRetried = false
            let policy = configuration.retryPolicy
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
                    outcome = await attempt(writer: writer, offset: offset, version: version)
                }
                switch outcome {
                case .completed(let head):
                    version.adopt(head)
                    if let mismatch = verify(writer: writer, version: version) {
                        writer.restart(hasher: nil)
                        await writer.drain()
                        removeSidecar()
                        version = ObjectVersion()
                        if case .checksumMismatch = mismatch, !checksumRetried {
                            checksumRetried = true
                            continue
                        }
                        if case .checksumMismatch = mismatch { return .failure(mismatch) }
                        failures += 1
                        if failures >= policy.maxAttempts {
                            return .failure(.retriesExhausted(lastError: mismatch, attempts: attempts))
                        }
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
                    case .requestTimeTooSkewed where !skewRetried:
                        // The client measured the offset from the response; the next attempt is re-signed.
                        skewRetried = true
                        continue
                    case .preconditionFailed, .objectChanged:
                        if request.expectedETag != nil {
                            discard(writer: writer)
                            await writer.drain()
                            return .failure(.objectChanged)
                        }
                        // The object changed since the bytes on disk were fetched: never mix versions.
                        discard(writer: writer)
                        await writer.drain()
                        version = ObjectVersion()
                        if !restartedForChange {
                            restartedForChange = true
                            continue
                        }
                        failures += 1
                        if failures >= policy.maxAttempts {
                            return .failure(.retriesExhausted(lastError: .objectChanged, attempts: attempts))
                        }
                    default:
                        guard error.isRetryable else { return .failure(error) }
                        // The budget and the backoff count failures in a row: an attempt that added bytes on
                        // disk (a connection reset mid-body) starts the count again, as a resumed download is
                        // not a repeated failure.
                        failures = writer.written > offset ? 1 : failures + 1
                        if !policy.allowsAnotherAttempt(after: error, failures: failures) {
                            return .failure(
                                policy.maxAttempts > 1 ? .retriesExhausted(lastError: error, attempts: attempts) : error
                            )
                        }
                        do {
                            try await policy.backoff(
                                afterAttempt: failures, keptBytes: writer.written - offset, serverAsked: retryAfter)
                        } catch {
                            return .failure(.cancelled)
                        }
                    }
                }
            }
        } catch {
            return .failure(error)
        }
    }

    /// A writer for the `.part`: continued from what an earlier run left when its sidecar names the right
    /// version (the returned version), else empty.
    private func prepareWriter() async throws(S3Error) -> (PartFileWriter, ObjectVersion) {
        var version = ObjectVersion()
        // Continue a `.part` left by an earlier run when its sidecar names the right version.
        let found = PartSidecar.lookup(forPart: partPath)
        let usable = found.sidecar.flatMap { sidecar in
            request.expectedETag.map({ S3ETag.unquoted($0) == sidecar.etag }) ?? true ? sidecar : nil
        }
        if found.present && usable == nil { PartSidecar.remove(forPart: partPath) }
        let writer = PartFileWriter(path: partPath, allowsFileSystemSync: configuration.syncsFileSystemForGroups)
        state.withLock { $0.writer = writer }
        if let sidecar = usable {
            let onDisk = try await openPartOnQueue(writer, truncate: false).get()
            sidecarState.withLock { $0.mayExist = true }
            var keep = min(sidecar.contiguousPrefix, onDisk)
            if let size = sidecar.size, keep > size { keep = 0 }
            version = ObjectVersion(etag: sidecar.etag, total: sidecar.size, checksums: sidecar.checksums)
            let hasher = IntegrityHasher(
                etag: sidecar.etag, checksums: sidecar.checksums, policy: configuration.integrity)
            try await writer.resume(keeping: keep, hasher: keep > 0 ? hasher : nil).get()
            if keep == 0 { version = ObjectVersion() }
            if keep > 0, let size = sidecar.size {
                // The file now ends at the kept prefix: from here on the sidecar is this version's resume
                // point, with the whole object's checksums (a 206 brings none).
                persistResumePoint(etag: sidecar.etag, total: size, checksums: sidecar.checksums)
            }
        } else {
            // Without a usable sidecar nothing on disk can be trusted: the `.part` starts empty.
            _ = try await openPartOnQueue(writer, truncate: true).get()
        }
        return (writer, version)
    }

    /// One GET: starts it (unless cancelled or paused meanwhile) and waits for its end and for the writer.
    private func attempt(writer: PartFileWriter, offset: Int64, version: ObjectVersion) async
        -> DownloadAttemptOutcome
    {
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<DownloadAttemptOutcome, Never>) in
            let started = startAttempt(writer: writer, offset: offset, version: version) {
                continuation.resume(returning: $0)
            }
            if !started { continuation.resume(returning: .failed(.cancelled, nil)) }
        }
        state.withLock { $0.currentTransfer = nil }
        await writer.drain()
        return outcome
    }

    /// Signs and starts one GET; false (and nothing started) when the job was cancelled or paused meanwhile.
    /// `completion` runs on the engine thread; the writer may still have queued work then.
    private func startAttempt(
        writer: PartFileWriter, offset: Int64, version: ObjectVersion,
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
        let handler = DownloadStreamHandler(
            client: client, writer: writer, expectation: expectation,
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
        var request = client.makeRequest(
            method: "GET", bucket: request.bucket, key: request.key, headers: headers,
            stallTimeout: configuration.stallTimeout)
        request.successHeaders = DownloadStreamHandler.headersRead
        return state.withLock { state -> Bool in
            guard !state.cancelled, !state.paused else { return false }
            state.currentTransfer = id
            engine.start(request, handler: handler, id: id)
            return true
        }
    }

    /// Length and hashes; nil when everything matches.
    private func verify(writer: PartFileWriter, version: ObjectVersion) -> S3Error? {
        guard let total = version.total, writer.written == total else {
            return .transport(
                curlCode: 18, message: "received \(writer.written) of \(version.total.map(String.init) ?? "?") bytes")
        }
        if let expected = request.expectedSize, expected != total { return .objectChanged }
        if let code = writer.writeError { return .fileSystem(path: writer.path, errno: code) }
        if writer.hasher?.etag != version.etag, version.etag != nil, total > 0 {
            // Hash state from another version must never vouch for these bytes.
            return .checksumMismatch(expected: version.etag ?? "", actual: writer.hasher?.etag ?? "", algorithm: "ETag")
        }
        return writer.hasher?.firstMismatch()
    }

    /// The result of a verified file now at its destination.
    private func result(writer: PartFileWriter, version: ObjectVersion, attempts: Int) -> DownloadResult {
        removeSidecar()
        let verification = Set([IntegrityCheck.length]).union(writer.hasher?.checks ?? [])
        let transferred = progress.withLock { $0.transferred }
        return DownloadResult(
            url: request.destination, etag: version.etag ?? "", size: version.total ?? 0,
            verification: verification, bytesTransferred: transferred, attempts: attempts)
    }

    /// Written as soon as a response's headers name the version, so that a process killed mid-body (kill -9,
    /// power loss excepted) can continue: the `.part` file is written strictly in order, so its size is the
    /// verified-to-be-contiguous prefix; the sidecar only needs to say which version those bytes belong to.
    /// (The final whole-file check still guards against anything else.)
    /// Written once per version (a resumed attempt's 206, which carries no whole-object checksums, must not
    /// replace the sidecar its 200 wrote).
    private func persistResumePoint(etag: String, total: Int64, checksums: S3Checksums) {
        let fresh = sidecarState.withLock { state -> Bool in
            state.mayExist = true
            if let point = state.resumePoint, point.etag == etag, point.total == total { return false }
            state.resumePoint = (etag, total)
            return true
        }
        guard fresh else { return }
        let sidecar = PartSidecar(etag: etag, size: total, checksums: checksums, ranges: [0..<max(0, total)])
        save(sidecar)
    }

    /// After a failed attempt: records the bytes on disk, unless the sidecar already holds this version's
    /// resume point (which covers them).
    private func saveSidecar(writer: PartFileWriter, version: ObjectVersion) {
        guard let etag = version.etag, writer.written > 0 else { return }
        let covered = sidecarState.withLock { state -> Bool in
            state.mayExist = true
            guard let point = state.resumePoint, point.etag == etag, point.total == version.total else {
                state.resumePoint = nil
                return false
            }
            return true
        }
        guard !covered else { return }
        let sidecar = PartSidecar(
            etag: etag, size: version.total, checksums: version.checksums, ranges: [0..<writer.written])
        save(sidecar)
    }

    /// Opens (creating it if needed) the `.part` unless the job is cancelled, under the job's lock, for the same
    /// reason as ``save(_:)``: no file appears after a cancel. On a thread that may wait for the file system.
    private func openPart(_ writer: PartFileWriter, truncate: Bool) -> Result<Int64, S3Error> {
        state.withLock { state in
            state.cancelled ? .failure(.cancelled) : writer.openNow(truncate: truncate)
        }
    }

    /// ``openPart(_:truncate:)`` on the writer's queue.
    private func openPartOnQueue(_ writer: PartFileWriter, truncate: Bool) async -> Result<Int64, S3Error> {
        await withCheckedContinuation { continuation in
            writer.perform { [self] in continuation.resume(returning: openPart(writer, truncate: truncate)) }
        }
    }

    /// Writes the sidecar unless the job is cancelled, under the job's lock: a caller that cancels its
    /// requests and then removes the files (an asset deleted meanwhile) never sees a sidecar appear after.
    /// A cancelled job needs none: a resume point worth keeping was written when the response's head came.
    private func save(_ sidecar: PartSidecar) {
        state.withLock { state in
            guard !state.cancelled else { return }
            try? sidecar.save(forPart: partPath)
        }
    }

    private func removeSidecar() {
        let present = sidecarState.withLock { state in
            defer { state = SidecarState() }
            return state.mayExist
        }
        if present { PartSidecar.remove(forPart: partPath) }
    }

    private func discard(writer: PartFileWriter) {
        writer.restart(hasher: nil)
        removeSidecar()
    }
}

/// The version of the object the bytes on disk belong to.
struct ObjectVersion: Sendable {
    var etag: String?
    var total: Int64?
    var checksums = S3Checksums()

    mutating func adopt(_ head: DownloadAttemptHead) {
        etag = head.etag
        total = head.total
        if head.status == 200 { checksums = head.checksums }
    }
}
