import Essentials
package import Foundation

/// One caller's view of a download: its progress reports, its result, its cancel/pause/resume.
///
/// Several handles may share one transfer (the same bucket, key and destination requested twice): each gets
/// progress and the result; cancelling one detaches only that one (the transfer stops when none is left);
/// the transfer pauses while every handle sharing it is paused.
package final class DownloadHandle: Sendable {
    /// Identifies this request: unique among the requests of every process (a random prefix per process, then
    /// a counter).
    package var id: UUID { attachment.id.uuid }
    let attachment: DownloadAttachment

    init(attachment: DownloadAttachment) {
        self.attachment = attachment
    }

    /// Cancels this request: ``result()`` throws ``S3Error/cancelled`` at once. Safe from any thread.
    /// The `.part` file and its sidecar stay, so a later request resumes.
    package func cancel() { attachment.cancel() }

    /// Pauses: the connection is closed and its slot given up; bytes received so far are kept.
    package func pause() { attachment.setPaused(true) }

    /// Continues a paused download from the bytes on disk.
    package func resume() { attachment.setPaused(false) }

    /// Waits for the verified file (or the error). Every progress report of this request has been
    /// delivered before this returns. Cancelling the waiting task cancels the request.
    /// - Returns: The result.
    /// - Throws: ``S3Error``.
    package func result() async throws(S3Error) -> DownloadResult {
        let attachment = self.attachment
        let result = await withTaskCancellationHandler {
            await attachment.result()
        } onCancel: {
            attachment.cancel()
        }
        return try result.get()
    }
}

/// The per-request side of a (possibly shared) ``DownloadJob``.
// @unchecked: its mutable state is in `state`, a LockedBox; the rest is immutable (`progress` is @Sendable).
final class DownloadAttachment: @unchecked Sendable {
    let id = AttachmentID.next()
    /// The serial queue progress reports and then the result are delivered on (only with a progress handler).
    let queue: DispatchQueue?
    let progress: (@Sendable (DownloadProgress, inout Bool) -> Void)?
    let priority: DownloadPriority

    private struct State {
        var result: Result<DownloadResult, S3Error>?
        var waiters: [CheckedContinuation<Result<DownloadResult, S3Error>, Never>] = []
        var job: DownloadJob?
        var stopped = false
        /// The bytes of the last progress report delivered: reports only ever rise.
        var lastReported: Int64 = -1
    }
    private let state = LockedBox(State())

    init(request: DownloadRequest) {
        queue = request.progress.map { _ in
            DispatchQueue(label: "DownloadHandle.progress", target: request.progressQueue)
        }
        progress = request.progress
        priority = request.priority
    }

    func bind(to job: DownloadJob) { state.withLock { $0.job = job } }

    /// Delivers a progress report made while the transfer runs. Reports only rise (one that does not pass the last
    /// delivered — an attempt started again — is dropped), and none says complete: 1.0 is reported once, by
    /// ``finish(_:finalProgress:)``, with the verified file.
    func deliver(_ report: DownloadProgress) {
        guard let progress, let queue, !state.withLock({ $0.stopped }) else { return }
        queue.async { [self] in
            let passes = state.withLock { s -> Bool in
                if let total = report.totalBytes, total > 0, report.bytesReceived >= total { return false }
                guard !s.stopped, report.bytesReceived > s.lastReported else { return false }
                s.lastReported = report.bytesReceived
                return true
            }
            guard passes else { return }
            var stop = false
            progress(report, &stop)
            if stop { cancel() }
        }
    }

    /// Delivers the final progress (on success) and then the result, in that order.
    func finish(_ result: Result<DownloadResult, S3Error>, finalProgress: DownloadProgress?) {
        // Without a progress handler there is nothing to deliver first: the result needs no hop.
        guard let queue else { return complete(result) }
        queue.async { [self] in
            if case .success = result, let finalProgress, let progress, !state.withLock({ $0.stopped }) {
                var stop = false
                progress(finalProgress, &stop)
            }
            complete(result)
        }
    }

    func complete(_ result: Result<DownloadResult, S3Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Result<DownloadResult, S3Error>, Never>] in
            guard state.result == nil else { return [] }
            state.result = result
            state.job = nil
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    func result() async -> Result<DownloadResult, S3Error> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<DownloadResult, S3Error>? in
                if let result = state.result { return result }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    func cancel() {
        let job = state.withLock { state -> DownloadJob? in
            state.stopped = true
            return state.job
        }
        job?.detach(id)
        complete(.failure(.cancelled))
    }

    func setPaused(_ paused: Bool) {
        state.withLock { $0.job }?.setPaused(id, paused)
    }
}

/// Identifies a ``DownloadAttachment``: a counter, so that a request costs no read of the system's random source
/// (Foundation's `UUID()` opens `/dev/urandom` each time on Linux).
struct AttachmentID: Hashable, Sendable {
    let value: UInt64

    private static let counter = LockedBox<UInt64>(0)
    private static let processPrefix = UInt64.random(in: .min ... .max)

    static func next() -> AttachmentID {
        AttachmentID(
            value: counter.withLock { value in
                value &+= 1
                return value
            })
    }

    /// As a UUID: the process's random prefix, then the counter (version 4 and variant bits set).
    var uuid: UUID {
        let high = (Self.processPrefix & ~0xF000) | 0x4000
        let low = (value & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        func byte(_ word: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: word >> (56 - 8 * index)) }
        return UUID(
            uuid: (
                byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3), byte(high, 4), byte(high, 5),
                byte(high, 6), byte(high, 7), byte(low, 0), byte(low, 1), byte(low, 2), byte(low, 3),
                byte(low, 4), byte(low, 5), byte(low, 6), byte(low, 7)
            ))
    }
}
