import Essentials
import Foundation

/// Hands out a fixed number of slots to waiting downloads, highest priority first, then first come.
///
/// A slot is asked for with a ticket (``makeTicket()``) and granted through a callback, so that a download can
/// start on whatever thread frees the slot, without a task waiting for it; ``acquire(priority:)`` is the
/// `async` form of the same.
final class TransferScheduler: Sendable {
    /// Identifies one request for a slot.
    struct Ticket: Hashable, Sendable {
        fileprivate let rawValue: UInt64
    }

    private struct Waiter {
        let ticket: Ticket
        let grant: @Sendable (Bool) -> Void
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

        mutating func remove(_ ticket: Ticket) -> Waiter? {
            guard let index = items[head...].firstIndex(where: { $0?.ticket == ticket }), let waiter = items[index]
            else { return nil }
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
        /// Tickets made and not yet asked with (only these can be withdrawn early).
        var unrequested: Set<Ticket> = []
        /// Tickets withdrawn before they were asked with (their request is refused when it comes).
        var withdrawnEarly: Set<Ticket> = []
        var nextTicket: UInt64 = 0
    }
    private let state: LockedBox<State>

    init(slots: Int) { state = LockedBox(State(available: slots)) }

    /// A new ticket for ``request(_:priority:grant:)``.
    func makeTicket() -> Ticket {
        state.withLock { state in
            state.nextTicket += 1
            let ticket = Ticket(rawValue: state.nextTicket)
            state.unrequested.insert(ticket)
            return ticket
        }
    }

    /// Asks for a slot. Returns true when one was free: it is the caller's at once, and `grant` is never
    /// called. Otherwise `grant(true)` is called once a slot is this request's, on the thread that gives one
    /// back (``release()``), or `grant(false)` when the ticket is withdrawn (``withdraw(_:)``) first — on this
    /// thread before this returns if it was withdrawn before it was asked. Never under a lock.
    func request(_ ticket: Ticket, priority: DownloadPriority, grant: @escaping @Sendable (Bool) -> Void) -> Bool {
        let immediate = state.withLock { state -> Bool? in
            state.unrequested.remove(ticket)
            if state.withdrawnEarly.remove(ticket) != nil { return false }
            if state.available > 0 {
                state.available -= 1
                return true
            }
            state.queues[priority.rawValue].append(Waiter(ticket: ticket, grant: grant))
            return nil
        }
        if immediate == false { grant(false) }
        return immediate == true
    }

    /// Withdraws a request that has no slot yet (its `grant(false)` runs here); a ticket not yet requested is
    /// refused when it is. Does nothing once the slot was granted.
    func withdraw(_ ticket: Ticket) {
        let waiter = state.withLock { state -> Waiter? in
            if state.unrequested.remove(ticket) != nil {
                state.withdrawnEarly.insert(ticket)
                return nil
            }
            for priority in DownloadPriority.allCases {
                if let waiter = state.queues[priority.rawValue].remove(ticket) { return waiter }
            }
            return nil
        }
        waiter?.grant(false)
    }

    /// Waits for a slot. Returns false (without a slot) if the task is cancelled while waiting.
    func acquire(priority: DownloadPriority) async -> Bool {
        let ticket = makeTicket()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                if request(ticket, priority: priority, grant: { continuation.resume(returning: $0) }) {
                    continuation.resume(returning: true)
                }
            }
        } onCancel: {
            withdraw(ticket)
        }
    }

    /// Requests waiting for a slot.
    var waitingCount: Int { state.withLock { $0.queues.reduce(0) { $0 + $1.count } } }

    /// Tickets the scheduler still remembers outside its queues (made and not asked with, or withdrawn before
    /// they were): zero once every request has been made (tests: nothing accumulates).
    var rememberedTicketCount: Int { state.withLock { $0.unrequested.count + $0.withdrawnEarly.count } }

    /// Returns a slot: the best waiter gets it (its grant runs on this thread), or it becomes available.
    func release() {
        let next = state.withLock { state -> Waiter? in
            for priority in DownloadPriority.allCases.reversed() {
                if let waiter = state.queues[priority.rawValue].popFirst() { return waiter }
            }
            state.available += 1
            return nil
        }
        next?.grant(true)
    }
}
