import Dispatch
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

    /// Keeps the signal sources alive for the life of the process.
    private enum Keeper {
        nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
        static func keep(_ s: [any DispatchSourceSignal]) { sources = s }
    }

    private final class Once: @unchecked Sendable {
        private let lock = NSLock()
        private var claimed = false
        func claim() -> Bool {
            lock.lock()
            defer { lock.unlock() }
            if claimed { return false }
            claimed = true
            return true
        }
    }
}
