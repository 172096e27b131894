import AssetStore
import Essentials
import Foundation
import S3Transfer

/// The library's background worker for what is local and not yet in the bucket: imported originals, then
/// shared-property edits. One per library; it runs while there is work and the network policy is `.allowed`
/// (uploads are background work: `.userRequestsOnly` and `.offline` hold them), and stops when there is none.
final class UploadQueue: Sendable {
    private struct State {
        var running = false
        var again = false
        var closed = false
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
    func wake(_ library: AssetLibrary) {
        let start = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            if s.running {
                s.again = true
                return false
            }
            s.running = true
            s.again = false
            return true
        }
        guard start else { return }
        let task = Task { await self.drain(library) }
        state.withLock { s in if s.running { s.task = task } }
    }

    /// Returns when the worker is idle: everything it may upload under the current policy went up or failed.
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { s -> Bool in
                if !s.running { return true }
                s.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Stops the worker for good (the library closes); interrupted uploads resume when the library reopens.
    func close() {
        let (task, waiters) = state.withLock { s in
            s.closed = true
            defer { s.idleWaiters = [] }
            return (s.task, s.idleWaiters)
        }
        task?.cancel()
        for waiter in waiters { waiter.resume() }
    }

    var inFlight: [AssetUploadProgress] {
        state.withLock { $0.progress.values.sorted { $0.localIdentifier < $1.localIdentifier } }
    }

    var isActive: Bool { state.withLock { $0.running } }

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

    private func drain(_ library: AssetLibrary) async {
        while true {
            if library.mayUploadInBackground {
                await library.uploadPendingOriginals(queue: self, explicitly: false)
                await library.shareEditedMetadata()
                await library.shareEditRevisions()
            }
            let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>]? in
                if s.again && !s.closed {
                    s.again = false
                    return nil
                }
                s.running = false
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
