import Dispatch
import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Catches SIGINT and SIGTERM from the moment it is installed: a signal that arrives before anyone waits (a Ctrl-C
/// right after the server printed its port) is kept for ``wait()`` instead of killing the process.
final class TerminationSignal: Sendable {
    private let state = LockedBox<(received: String?, waiter: CheckedContinuation<String, Never>?)>((nil, nil))

    private init() {}

    /// Starts catching SIGINT and SIGTERM now. Call it before announcing anything a user may interrupt.
    static func install() -> TerminationSignal {
        let catcher = TerminationSignal()
        let queue = DispatchQueue(label: "fake-s3.signals")
        var sources: [any DispatchSourceSignal] = []
        for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { catcher.deliver(name) }
            source.resume()
            sources.append(source)
        }
        // The sources live as long as the process (one retain each, never released).
        for source in sources { _ = Unmanaged.passRetained(source as AnyObject) }
        return catcher
    }

    /// Suspends until the first SIGINT or SIGTERM since ``install()`` (returns at once if it came already); returns
    /// the signal's name.
    func wait() async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let received = state.withLock { state -> String? in
                if let received = state.received { return received }
                state.waiter = continuation
                return nil
            }
            if let received { continuation.resume(returning: received) }
        }
    }

    private func deliver(_ name: String) {
        let waiter = state.withLock { state -> CheckedContinuation<String, Never>? in
            guard state.received == nil else { return nil }
            state.received = name
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: name)
    }
}
