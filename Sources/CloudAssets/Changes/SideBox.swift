import Foundation

/// A value handed to and from the two sides of `DispatchQueue.concurrentPerform`. Unchecked: the sides only read
/// the shared inputs, each writes only its own box, and `concurrentPerform` returns once both are done.
final class SideBox<Value>: @unchecked Sendable {
    var value: Value

    init(_ value: Value) { self.value = value }
}
