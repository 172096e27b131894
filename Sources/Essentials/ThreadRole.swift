import Foundation

/// The role of a thread that owns some state ("the HTTP engine thread"), so that code documented as confined to
/// that thread checks it: ``assertCurrent(file:line:)`` stops a debug build that calls it on any other thread, and
/// costs nothing in a release build (as NIO's `NIOLoopBound` checks its event loop).
package struct ThreadRole: Sendable, Hashable {
    /// What the role is called, for messages.
    package let name: String

    /// A role named `name`.
    package init(_ name: String) { self.name = name }

    private static let key = "Essentials.ThreadRole"

    /// Gives the calling thread this role for the rest of its life. Call it first thing on the thread.
    package func adopt() { Thread.current.threadDictionary[Self.key] = name }

    /// Whether the calling thread has this role.
    @usableFromInline
    package var isCurrent: Bool { Thread.current.threadDictionary[Self.key] as? String == name }

    /// In debug builds, stops the program when the calling thread does not have this role; nothing in release
    /// builds.
    @inlinable
    package func assertCurrent(file: StaticString = #fileID, line: UInt = #line) {
        assert(isCurrent, "must run on the \(name) thread", file: file, line: line)
    }
}
