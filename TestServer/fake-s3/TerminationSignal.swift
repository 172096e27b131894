import Dispatch
import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Waits for SIGINT or SIGTERM.
enum TerminationSignal {
    /// Suspends until the process receives SIGINT or SIGTERM; returns the signal's name.
    static func wait() async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let queue = DispatchQueue(label: "fake-s3.signals")
            let once = Once()
            var sources: [any DispatchSourceSignal] = []
            for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler {
                    if once.claim() { continuation.resume(returning: name) }
                }
                source.resume()
                sources.append(source)
            }
            Keeper.keep(sources)
        }
    }

    /// Keeps the signal sources alive for the life of the process (one retain each, never released).
    private enum Keeper {
        static func keep(_ sources: [any DispatchSourceSignal]) {
            for source in sources { _ = Unmanaged.passRetained(source as AnyObject) }
        }
    }

    /// True for the first caller of ``claim()`` only.
    private final class Once: Sendable {
        private let claimed = LockedBox(false)
        func claim() -> Bool {
            claimed.withLock { claimed in
                defer { claimed = true }
                return !claimed
            }
        }
    }
}
