import AssetStore
import Essentials
import Foundation
import S3Transfer

/// The library's background worker for what is local and not yet in the bucket: imported originals, then
/// shared-property edits. One per library; it runs while there is work and the network policy is `.allowed`
/// (uploads are background work: `.userRequestsOnly` and `.offline` hold them), and stops when there is none.
final class UploadQueue: Sendable {
    /// What the queue holds besides its worker's lifecycle: the uploads in flight and the sources noted.
    private struct State {
        var worker = Worker()
        var task: Task<Void, Never>?
        var progress: [Int64: AssetUploadProgress] = [:]
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// Imported originals' sources, for their first uploads (``UploadSourceHint``).
        var sources: [Int64: UploadSourceHint] = [:]
    }

    /// At most this many sources are remembered (the newest are dropped beyond it: their uploads read the library's
    /// copies).
    static let sourceLimit = 256
    /// One upload pass at a time (the worker's, a sync's, an explicit wait's): together they keep to
    /// ``UploadSettings/concurrentUploads``, and an error that stops one pass is not met again by another.
    let passGate = SerialGate()
    private let state = LockedBox(State())

    /// Starts the worker, or has a running one look for work again when it finishes its round.
    func wake(_ engine: UploadEngine) {
        let start = state.withLock { $0.worker.wake() == .startWorker }
        guard start else { return }
        let task = Task { await self.drain(engine) }
        state.withLock { s in if s.worker.isRunning { s.task = task } }
    }

    /// Returns when the worker is idle: everything it may upload under the current policy went up or failed.
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { s -> Bool in
                if !s.worker.isRunning { return true }
                s.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Stops the worker for good (the library closes); interrupted uploads resume when the library reopens.
    func close() {
        let (task, waiters) = state.withLock { s in
            s.worker.close()
            defer { s.idleWaiters = [] }
            return (s.task, s.idleWaiters)
        }
        task?.cancel()
        for waiter in waiters { waiter.resume() }
    }

    var inFlight: [AssetUploadProgress] {
        state.withLock { $0.progress.values.sorted { $0.localIdentifier < $1.localIdentifier } }
    }

    var isActive: Bool { state.withLock { $0.worker.isRunning } }

    func report(_ progress: AssetUploadProgress, for id: Int64) {
        state.withLock { $0.progress[id] = progress }
    }

    /// Remembers where an imported original's first upload may read its bytes.
    func noteSource(_ source: UploadSourceHint, for id: Int64) {
        state.withLock { s in
            if s.sources.count < Self.sourceLimit { s.sources[id] = source }
        }
    }

    /// Takes the source an asset's upload may read, if one was noted and the file is still the one copied.
    func takeSource(for id: Int64) -> UploadSourceHint? {
        state.withLock { $0.sources.removeValue(forKey: id) }.flatMap { $0.isCurrent ? $0 : nil }
    }

    /// Claims an asset's upload for one caller in this process (the worker, or a sync): `false` when it is taken.
    func claim(_ id: Int64, size: Int64) -> Bool {
        state.withLock { s in
            guard s.progress[id] == nil else { return false }
            s.progress[id] = AssetUploadProgress(localIdentifier: String(id), bytesSent: 0, totalBytes: size)
            return true
        }
    }

    /// Whether an upload of this asset runs in this process now.
    func isClaimed(_ id: Int64) -> Bool { state.withLock { $0.progress[id] != nil } }

    func release(_ id: Int64) {
        state.withLock { _ = $0.progress.removeValue(forKey: id) }
    }

    private func drain(_ engine: UploadEngine) async {
        while true {
            if engine.mayUploadInBackground { await engine.sendPending(explicitly: false) }
            let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>]? in
                guard s.worker.roundFinished() == .stop else { return nil }
                s.task = nil
                defer { s.idleWaiters = [] }
                return s.idleWaiters
            }
            guard let waiters else { continue }
            for waiter in waiters { waiter.resume() }
            return
        }
    }
}

extension UploadQueue {
    /// The worker's lifecycle as a value: `idle` → (wake) `running` → (wake while running) `runningAgain` →
    /// (round finished) `running` … → (round finished with no wake) `idle`; `closed` absorbs everything. Its
    /// transitions return what the queue must do; it does no I/O and holds no task (tested on its own).
    struct Worker: Equatable {
        enum Phase: Equatable {
            case idle
            case running
            /// Running, and woken during its round: it looks for work once more.
            case runningAgain
            case closed
        }

        enum WakeAction: Equatable {
            case startWorker
            case none
        }

        enum RoundAction: Equatable {
            /// Run another round.
            case runAgain
            /// The worker stops: resume whoever waits for it to be idle.
            case stop
        }

        private(set) var phase = Phase.idle

        var isRunning: Bool { phase == .running || phase == .runningAgain }

        mutating func wake() -> WakeAction {
            switch phase {
            case .idle:
                phase = .running
                return .startWorker
            case .running, .runningAgain:
                phase = .runningAgain
                return .none
            case .closed:
                return .none
            }
        }

        mutating func roundFinished() -> RoundAction {
            switch phase {
            case .runningAgain:
                phase = .running
                return .runAgain
            case .running, .idle:
                phase = .idle
                return .stop
            case .closed:
                return .stop
            }
        }

        mutating func close() { phase = .closed }
    }
}
