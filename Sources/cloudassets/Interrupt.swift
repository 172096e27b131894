import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body`, cancelling it on Ctrl-C (SIGINT) or SIGTERM: downloads stop, their `.part` files stay for
/// resume, and the command exits with status 130 after printing `error: interrupted: ` and `kept` (what the
/// command keeps for next time).
func withInterrupt<T: Sendable>(
    kept: String = "partial downloads are kept and resume on the next get",
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let task = Task { try await body() }
    let sources = [SIGINT, SIGTERM].map { sig -> any DispatchSourceSignal in
        let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        source.setEventHandler { task.cancel() }
        source.resume()
        return source
    }
    defer {
        for s in sources { s.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
    do {
        return try await task.value
    } catch {
        if task.isCancelled {
            Terminal.shared.endLive()
            Terminal.shared.err("error: interrupted: " + kept)
            throw ExitStatus.interrupted.exitCode
        }
        throw error
    }
}
