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
    let client: S3Client
    let configuration: DownloaderConfiguration
    let scheduler: TransferScheduler
    let onFinish: @Sendable (DownloadJob) -> Void

    struct State {
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
    let state = LockedBox(State())

    struct Progress {
        var total: Int64?
        var base: Int64 = 0
        var attemptBytes: Int64 = 0
        var transferred: Int64 = 0
        var lastReport: UInt64 = 0
        var started = DispatchTime.now().uptimeNanoseconds
    }
    let progress = LockedBox(Progress())
    struct SidecarState {
        /// Whether a sidecar may be on disk (so that finishing without one costs no `unlink`).
        var mayExist = false
        /// The version whose resume point (see ``persistResumePoint(etag:total:checksums:)``) the sidecar on disk holds: it stays
        /// true however far the in-order `.part` grows, so later attempts and failures need not rewrite it.
        var resumePoint: (etag: String, total: Int64)?
    }
    let sidecarState = LockedBox(SidecarState())

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

    func wakeIfResumed(force: Bool = false) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard force || !state.paused || state.cancelled else { return nil }
            defer { state.resumeWaiter = nil }
            return state.resumeWaiter
        }
        waiter?.resume()
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }
    var isPaused: Bool { state.withLock { $0.paused && !$0.cancelled } }

    func waitWhilePaused() async {
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
    func startFirstAttempt(onCallerThread: Bool) {
        let writer = PartFileWriter(
            path: partPath, allowsFileSystemSync: configuration.syncsFileSystemForGroups, durable: request.durable)
        state.withLock { $0.writer = writer }
        if onCallerThread {
            writer.perform { [self] in openAndStart(writer) }
        } else {
            openAndStart(writer)
        }
    }

    /// Creates the empty `.part` and starts the GET. A `.part` left by an earlier run (its sidecar says which
    /// version it holds), or a job cancelled or paused meanwhile, is the task's business.
    func openAndStart(_ writer: PartFileWriter) {
        guard !PartSidecar.lookup(forPart: partPath).present else {
            return startTask(first: nil, holdingSlot: true)
        }
        // Credentials that must be resolved or refreshed first are awaited on the task path.
        guard case .ready(let credentials) = client.signingCredentialsWithoutWaiting() else {
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
        let started = startAttempt(writer: writer, offset: 0, version: ObjectVersion(), credentials: credentials) {
            [self] outcome in
            firstAttemptEnded(outcome, writer: writer)
        }
        if !started { startTask(first: (writer, .failed(.cancelled, nil)), holdingSlot: true) }
    }

    /// The end of the first attempt (engine thread): a complete body is verified, synced and renamed on the
    /// writer's queue (after the hashing queued there); anything else goes on as a task.
    func firstAttemptEnded(_ outcome: DownloadAttemptOutcome, writer: PartFileWriter) {
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
    func startTask(
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
    func end(_ result: Result<DownloadResult, S3Error>) {
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
    func waitUntilEnded() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state -> Bool in
                if !state.ended { state.endWaiters.append(continuation) }
                return state.ended
            }
            if ended { continuation.resume() }
        }
    }

    static func rate(_ p: Progress) -> Double {
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - p.started) / 1e9
        return elapsed > 0 ? Double(p.transferred) / elapsed : 0
    }

    /// Counts body bytes (engine thread) and reports progress at most every ``DownloaderConfiguration/progressInterval``.
    func received(_ count: Int) {
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
}
