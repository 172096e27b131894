/// A counting semaphore for tasks: at most ``width`` bodies run at once; the others wait, suspended (no thread is
/// held), and start in arrival order. For bounding work that runs elsewhere (a decode queue, a test's servers)
/// without blocking a thread of the cooperative pool, as a `DispatchSemaphore.wait()` would.
package actor AsyncSlots {
    /// How many bodies may run at once.
    package let width: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Slots for `width` bodies at once (at least one).
    package init(width: Int) { self.width = max(1, width) }

    /// Runs `body` once a slot is free, and frees the slot when it returns or throws. A waiting task that is
    /// cancelled still waits for its slot (the body sees the cancellation).
    package func withSlot<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        if running < width {
            running += 1
            return
        }
        // The slot is handed over by `release()`: `running` stays as it is.
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
