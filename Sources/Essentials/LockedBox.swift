package import Foundation

/// A value behind a lock, shared by reference between threads and tasks: the one lock box of this package (the
/// shape of NIO's `NIOLockedValueBox`). Values go in and come out as `sending`, as with the standard library's
/// `Mutex`, so the compiler checks what crosses the lock at every call site.
///
/// The lock is a `pthread_mutex_t` (through `NSLock`) rather than the standard library's `Mutex`, whose Linux
/// implementation waits on a futex the thread sanitizer cannot see: `make tsan` would report every value behind it
/// as a race.
///
/// Hold the lock briefly: never across an `await`, a network call or a callback into unknown code.
// @unchecked: `value` is read and written only inside `withLock`, under `lock`.
package final class LockedBox<Value>: @unchecked Sendable {
    @usableFromInline let lock = NSLock()
    @usableFromInline var value: Value

    /// A box holding `value`.
    package init(_ value: sending Value) { self.value = value }

    /// Runs `body` with the value, under the lock, and returns what it returns. Inlinable, so that every module
    /// gets it specialised for its value type (hot paths take it per received chunk).
    @inlinable @discardableResult
    package func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
