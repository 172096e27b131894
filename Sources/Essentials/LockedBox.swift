import Synchronization

/// A value behind a lock, shared by reference between threads and tasks: the one lock box of this package (the
/// shape of NIO's `NIOLockedValueBox`, built on the standard library's `Mutex`, so the compiler checks what crosses
/// it — values go in and come out as `sending`, and no `@unchecked` is needed).
///
/// Hold the lock briefly: never across an `await`, a network call or a callback into unknown code.
package final class LockedBox<Value>: Sendable {
    private let mutex: Mutex<Value>

    /// A box holding `value`.
    package init(_ value: sending Value) { mutex = Mutex(value) }

    /// Runs `body` with the value, under the lock, and returns what it returns.
    @discardableResult
    package func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        try mutex.withLock(body)
    }
}
