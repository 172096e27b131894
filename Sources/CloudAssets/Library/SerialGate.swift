import Essentials

/// Runs async bodies one at a time, in call order.
final class SerialGate: Sendable {
    private let state = LockedBox<(busy: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Whether a body is running.
    var isBusy: Bool { state.withLock { $0.busy } }

    func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { s -> Bool in
                if s.busy {
                    s.waiters.append(continuation)
                    return false
                }
                s.busy = true
                return true
            }
            if acquired { continuation.resume() }
        }
        defer {
            let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
                if s.waiters.isEmpty {
                    s.busy = false
                    return nil
                }
                return s.waiters.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}
