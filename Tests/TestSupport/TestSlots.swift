import Essentials
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The suite's answer to "how much runs at once": a test that starts servers, child processes or a library (an
/// engine thread, a catalog watcher), or runs hundreds of property rounds, is marked ``Trait/heavy`` and runs only
/// while it holds one of a few slots; pure tests run freely beside them. A test waits for its slot *before* its time
/// limit starts (the slot is taken around the test function, outside its test cases), so the limit measures the
/// test's own work, never its wait.
///
/// The width is `CLOUDASSETS_TEST_SLOTS` when set, else 2 per processor (at least 3): a heavy test spends most of its
/// time waiting on loopback I/O, and a few of them keep two cores busy without leaving any test starved.
///
/// When the test ends — passed or failed — everything it opened (``OpenResources``: libraries, HTTP engine threads,
/// catalog watchers, servers, child processes) must be closed; the trait waits for them (closing is a thread's last
/// pass, milliseconds) and records an issue naming each one still open after ``closeLimit``.
public struct HeavyTestTrait: TestTrait, SuiteTrait, TestScoping {
    /// How long a test's resources get to close after it ends: a guard against a hang, not a measure of speed.
    public static let defaultCloseLimit: Duration = .seconds(60)

    /// How long this trait waits for a test's resources to close.
    public let closeLimit: Duration

    /// A trait that waits `closeLimit` for what a test opened to close.
    public init(closeLimit: Duration = HeavyTestTrait.defaultCloseLimit) { self.closeLimit = closeLimit }

    public var isRecursive: Bool { true }

    /// Scoped once per test function, around all its cases: outside the per-case time limit.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite || testCase != nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A heavy suite inside a heavy suite: its tests take one slot, not two.
        guard !TestSlots.isHeld else { return try await function() }
        let owner = "\(test.id)"
        let ends = LockedBox<[@Sendable () async -> Void]>([])
        try await TestSlots.shared.withSlot {
            defer { LeakCheck.installAtExit() }
            var failure: (any Error)?
            do {
                try await TestSlots.$isHeld.withValue(true) {
                    try await TestEnd.$current.withValue(ends) {
                        try await OpenResources.$owner.withValue(owner) { try await function() }
                    }
                }
            } catch {
                failure = error
            }
            // Passed or failed: what the test left for its end, last registered first.
            // Taken out of the box, so that what they hold (a fixture's client and its engine) is released with
            // them, before the check.
            await OpenResources.$owner.withValue(owner) {
                for end in ends.withLock({ ends in
                    defer { ends = [] }
                    return ends
                }).reversed() { await end() }
            }
            let leftOpen = await OpenResources.waitUntilClosed(ownedBy: owner, limit: closeLimit)
            if !leftOpen.isEmpty {
                let kinds = leftOpen.map(\.kind).joined(separator: ", ")
                Issue.record("left open \(closeLimit) after the test ended: \(kinds)")
            }
            if let failure { throw failure }
        }
    }
}

extension Trait where Self == HeavyTestTrait {
    /// Runs the test (each test of a suite) in one slot of the suite's small shared pool (``HeavyTestTrait``), and
    /// fails it when it leaves a library, engine, watcher, server or child process open.
    public static var heavy: Self { HeavyTestTrait() }
}

/// Work a heavy test leaves for its end: stopping a server, closing a library. It runs when the test function
/// returns or throws (last registered first), before the leak check. For the `defer { await … }` Swift lacks.
public enum TestEnd {
    @TaskLocal static var current: LockedBox<[@Sendable () async -> Void]>?

    /// Runs `body` when the current heavy test ends. Outside a heavy test (``Trait/heavy``) it records an issue:
    /// nothing would run it.
    public static func run(
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column,
        _ body: @escaping @Sendable () async -> Void
    ) {
        guard let current else {
            Issue.record(
                "TestEnd.run outside a heavy test: mark the suite .heavy",
                sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
            return
        }
        current.withLock { $0.append(body) }
    }
}

/// The pool of slots heavy tests share.
public enum TestSlots {
    /// The one pool every heavy test of the process shares.
    static let shared = AsyncSlots(width: defaultWidth)

    /// `CLOUDASSETS_TEST_SLOTS`, or 2 per processor this process may run on (at least 3).
    public static var defaultWidth: Int {
        if let text = ProcessInfo.processInfo.environment["CLOUDASSETS_TEST_SLOTS"], let width = Int(text), width > 0 {
            return width
        }
        return max(3, 2 * ProcessInfo.processInfo.activeProcessorCount)
    }

    /// Whether this task runs inside a slot already.
    @TaskLocal static var isHeld = false
}

/// The end-of-run check: when the test process exits, nothing the tests opened may still be open. Installed by the
/// first heavy test; prints each open resource with the test that opened it and makes the exit status 1.
enum LeakCheck {
    /// Registers the check once (a static's initialiser runs once, whichever thread gets there first).
    private static let registered: Void = {
        atexit {
            let open = OpenResources.open()
            guard !open.isEmpty else { return }
            let lines = open.map { "leak check: still open when the tests ended: \($0)" }
            FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            _exit(1)
        }
    }()

    static func installAtExit() { registered }
}
