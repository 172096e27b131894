import Foundation

/// Hands out a fixed number of slots to waiting downloads, highest priority first, then first come.
final class TransferScheduler: Sendable {
    private struct Waiter {
        let id: UInt64
        let priority: DownloadPriority
        let continuation: CheckedContinuation<Bool, Never>
    }
    private struct State {
        var available: Int
        var waiters: [Waiter] = []
        var cancelledBeforeWaiting: Set<UInt64> = []
        var nextID: UInt64 = 0
    }
    private let state: Locked<State>

    init(slots: Int) { state = Locked(State(available: slots)) }

    /// Waits for a slot. Returns false (without a slot) if the task is cancelled while waiting.
    func acquire(priority: DownloadPriority) async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate = state.withLock { state -> Bool? in
                    if state.cancelledBeforeWaiting.remove(id) != nil { return false }
                    if state.available > 0 {
                        state.available -= 1
                        return true
                    }
                    state.waiters.append(Waiter(id: id, priority: priority, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                    return state.waiters.remove(at: index)
                }
                state.cancelledBeforeWaiting.insert(id)
                return nil
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// Requests waiting for a slot.
    var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// Returns a slot: the best waiter gets it, or it becomes available.
    func release() {
        let next = state.withLock { state -> Waiter? in
            var best: Int?
            for (index, waiter) in state.waiters.enumerated()
            where best == nil || waiter.priority > state.waiters[best!].priority {
                best = index
            }
            if let best { return state.waiters.remove(at: best) }
            state.available += 1
            return nil
        }
        next?.continuation.resume(returning: true)
    }
}
