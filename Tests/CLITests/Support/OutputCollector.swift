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
        var endWaiters: [CheckedContinuation<Void, Never>] = []
        var byteWaiters: [(count: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let state = Mutex(State())

    /// Everything received so far, as bytes.
    var data: Data { state.withLock { $0.data } }

    /// Everything received so far, decoded as UTF-8.
    var text: String { state.withLock { Self.decode($0.data) } }

    /// Complete lines received so far (a trailing line without its newline is left out until the pipe closes).
    var lines: [String] {
        let (text, closed) = state.withLock { (Self.decode($0.data), $0.closed) }
        var parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if !closed || parts.last == "" { parts.removeLast() }
        return parts
    }

    func append(_ chunk: Data) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.data.append(chunk)
            var ready: [CheckedContinuation<Bool, Never>] = []
            let received = state.data.count
            state.byteWaiters.removeAll { waiter in
                guard received >= waiter.count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            guard !state.waiters.isEmpty else { return ready }
            let text = Self.decode(state.data)
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
        let (pending, ending, text) = state.withLock { state in
            state.closed = true
            defer {
                state.waiters.removeAll()
                state.endWaiters.removeAll()
                state.byteWaiters.removeAll()
            }
            return (
                (state.waiters, state.byteWaiters), state.endWaiters,
                state.waiters.isEmpty ? "" : Self.decode(state.data)
            )
        }
        for waiter in pending.0 { waiter.continuation.resume(returning: waiter.predicate(text)) }
        for waiter in pending.1 { waiter.continuation.resume(returning: false) }
        for continuation in ending { continuation.resume() }
    }

    /// Waits until `predicate` holds for the whole output so far; false when the pipe closed first.
    func wait(until predicate: @escaping @Sendable (String) -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            let answer = state.withLock { state -> Bool? in
                let text = Self.decode(state.data)
                if predicate(text) { return true }
                if state.closed { return false }
                state.waiters.append(Waiter(predicate: predicate, continuation: continuation))
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Waits until at least `count` bytes arrived (binary output: nothing is decoded); false when the pipe
    /// closed first.
    func wait(forBytes count: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            let answer = state.withLock { state -> Bool? in
                if state.data.count >= count { return true }
                if state.closed { return false }
                state.byteWaiters.append((count, continuation))
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// UTF-8 decoding through a buffer pointer: decoding `Data` as a generic collection is orders of
    /// magnitude slower. Still, repairing invalid UTF-8 costs seconds for megabytes of binary output, so
    /// nothing decodes unless a test asks for text.
    static func decode(_ data: Data) -> String {
        data.withUnsafeBytes { String(decoding: $0.bindMemory(to: UInt8.self), as: UTF8.self) }
    }

    /// Waits until the pipe is closed (without decoding the output: binary output can be megabytes).
    func waitForEnd() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let closed = state.withLock { state -> Bool in
                if state.closed { return true }
                state.endWaiters.append(continuation)
                return false
            }
            if closed { continuation.resume() }
        }
    }
}
