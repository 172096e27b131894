import Foundation

/// Hands out a fixed number of slots to waiting downloads, highest priority first, then first come.
final class TransferScheduler: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }
    /// One FIFO queue per priority (removed entries leave a gap the head skips), so handing a slot on is
    /// O(1) with thousands waiting.
    private struct Queue {
        var items: [Waiter?] = []
        var head = 0
        var count = 0

        mutating func append(_ waiter: Waiter) {
            items.append(waiter)
            count += 1
        }

        mutating func popFirst() -> Waiter? {
            while head < items.count {
                defer { head += 1 }
                if let waiter = items[head] {
                    items[head] = nil
                    count -= 1
                    compact()
                    return waiter
                }
            }
            return nil
        }

        mutating func remove(id: UInt64) -> Waiter? {
            guard let index = items[head...].firstIndex(where: { $0?.id == id }), let waiter = items[index] else {
                return nil
            }
            items[index] = nil
            count -= 1
            return waiter
        }

        private mutating func compact() {
            if head > 64, head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
        }
    }

    private struct State {
        var available: Int
        var queues = [Queue](repeating: Queue(), count: DownloadPriority.allCases.count)
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
                    state.queues[priority.rawValue].append(
                        Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                for priority in DownloadPriority.allCases {
                    if let waiter = state.queues[priority.rawValue].remove(id: id) { return waiter }
                }
                state.cancelledBeforeWaiting.insert(id)
                return nil
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// Requests waiting for a slot.
    var waitingCount: Int { state.withLock { $0.queues.reduce(0) { $0 + $1.count } } }

    /// Returns a slot: the best waiter gets it, or it becomes available.
    func release() {
        let next = state.withLock { state -> Waiter? in
            for priority in DownloadPriority.allCases.reversed() {
                if let waiter = state.queues[priority.rawValue].popFirst() { return waiter }
            }
            state.available += 1
            return nil
        }
        next?.continuation.resume(returning: true)
    }
}
