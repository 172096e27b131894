import Foundation

/// A minimal lock-protected value (Synchronization.Mutex needs a newer deployment target on Apple platforms).
package final class Mutex<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    package init(_ value: Value) { self.value = value }

    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
