import Essentials
import Foundation

/// Delivers one upload's progress: on a private serial queue (targeting the request's queue), in order, at most
/// every interval, and a last report at 100% before the upload returns. A handler that sets its stop flag stops
/// the upload (``onStop(_:)``); no report is delivered after that.
final class UploadProgressReporter: Sendable {
    private struct State {
        /// Bytes acknowledged (including parts of an earlier run).
        var acknowledged: Int64 = 0
        /// Bytes acknowledged by this run.
        var sentThisRun: Int64 = 0
        var lastReport: UInt64 = 0
        var stopped = false
        var onStop: (@Sendable () -> Void)?
    }

    private let handler: (@Sendable (UploadProgress, inout Bool) -> Void)?
    private let queue: DispatchQueue?
    private let interval: UInt64
    private let total: Int64
    private let started = DispatchTime.now().uptimeNanoseconds
    private let state = LockedBox(State())

    init(request: UploadRequest, total: Int64, intervalMilliseconds: Int) {
        handler = request.progress
        queue = request.progress.map { _ in
            DispatchQueue(label: "Uploader.progress", target: request.progressQueue)
        }
        interval = UInt64(max(0, intervalMilliseconds)) * 1_000_000
        self.total = total
    }

    /// Whether the handler asked to stop.
    var isStopped: Bool { state.withLock { $0.stopped } }

    /// Runs `action` once when the handler asks to stop (at once if it already has).
    func onStop(_ action: @escaping @Sendable () -> Void) {
        let stopped = state.withLock { state -> Bool in
            if !state.stopped { state.onStop = action }
            return state.stopped
        }
        if stopped { action() }
    }

    /// Counts bytes acknowledged in an earlier run (they do not count towards the rate).
    func resumed(_ bytes: Int64) {
        state.withLock { $0.acknowledged += bytes }
    }

    /// Counts bytes the service acknowledged now, and reports when the interval has passed.
    func acknowledged(_ bytes: Int64) {
        let report = state.withLock { state -> UploadProgress? in
            state.acknowledged += bytes
            state.sentThisRun += bytes
            let now = DispatchTime.now().uptimeNanoseconds
            guard handler != nil, now - state.lastReport >= interval else { return nil }
            state.lastReport = now
            return progress(state, now: now)
        }
        if let report { deliver(report) }
    }

    private func progress(_ state: State, now: UInt64) -> UploadProgress {
        let elapsed = Double(now - started) / 1e9
        return UploadProgress(
            bytesSent: state.acknowledged, totalBytes: total,
            bytesPerSecond: elapsed > 0 ? Double(state.sentThisRun) / elapsed : 0)
    }

    private func deliver(_ report: UploadProgress) {
        guard let handler, let queue else { return }
        queue.async { [self] in
            guard !isStopped else { return }
            var stop = false
            handler(report, &stop)
            if stop { requestStop() }
        }
    }

    private func requestStop() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.stopped else { return nil }
            state.stopped = true
            defer { state.onStop = nil }
            return state.onStop
        }
        action?()
    }

    /// Delivers the report at 100% (unless stopped) and returns once every report has been delivered.
    func finish() async {
        let final = state.withLock { state -> UploadProgress in
            state.acknowledged = total
            return progress(state, now: DispatchTime.now().uptimeNanoseconds)
        }
        deliver(final)
        await drain()
    }

    /// Returns once every report queued so far has been delivered.
    func drain() async {
        guard let queue else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }
}
