import Foundation
import Synchronization

/// Accumulates what a child process writes to one of its pipes, and lets a test wait for a condition on
/// that output. A wait ends when the condition holds or when the pipe is closed (the process ended or was
/// killed by its watchdog), so it is always bounded by the process's own deadline.
final class OutputCollector: Sendable {
    private struct Waiter {
        var predicate: @Sendable (String) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var data = Data()
        var closed = false
        var waiters: [Waiter] = []
    }

    private let state = Mutex(State())

    /// Everything received so far, decoded as UTF-8.
    var text: String { state.withLock { String(decoding: $0.data, as: UTF8.self) } }

    /// Complete lines received so far (a trailing line without its newline is left out until the pipe closes).
    var lines: [String] {
        let (text, closed) = state.withLock { (String(decoding: $0.data, as: UTF8.self), $0.closed) }
        var parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if !closed || parts.last == "" { parts.removeLast() }
        return parts
    }

    func append(_ chunk: Data) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.data.append(chunk)
            let text = String(decoding: state.data, as: UTF8.self)
            var ready: [CheckedContinuation<Bool, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.predicate(text) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    func close() {
        let pending = state.withLock { state -> [Waiter] in
            state.closed = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in pending {
            waiter.continuation.resume(returning: waiter.predicate(text))
        }
    }

    /// Waits until `predicate` holds for the whole output so far; false when the pipe closed first.
    func wait(until predicate: @escaping @Sendable (String) -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            let answer = state.withLock { state -> Bool? in
                let text = String(decoding: state.data, as: UTF8.self)
                if predicate(text) { return true }
                if state.closed { return false }
                state.waiters.append(Waiter(predicate: predicate, continuation: continuation))
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Waits until the pipe is closed.
    func waitForEnd() async {
        _ = await wait(until: { _ in false })
    }
}
