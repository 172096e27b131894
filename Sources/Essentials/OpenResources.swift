import Foundation

/// A ledger of what the package's code holds open now — engine threads, catalog watchers, libraries, servers — and
/// who opened each: the test suite's leak check. A test runs with its own name in ``owner``; everything it opens
/// in that task (or in tasks and threads that take the name along) is filed under that name; when the test ends,
/// the check waits until those entries are closed, and fails the test with their kinds when they are not.
///
/// Opening and closing cost one lock each (a dictionary entry); nothing here runs on a hot path (one entry per
/// library, engine, watcher or server). Thread-safe.
package enum OpenResources {
    /// Who is opening things in this task (a test's name while it runs); `nil` outside a test.
    @TaskLocal package static var owner: String?

    /// What closes one entry of the ledger, returned by ``opened(_:owner:)`` and handed to ``closed(_:)`` once.
    package struct Token: Sendable, Hashable {
        let id: UInt64
    }

    /// One open resource: what it is and who opened it.
    package struct Record: Sendable, CustomStringConvertible {
        /// What it is ("HTTP engine thread", "catalog watcher", …).
        package var kind: String
        /// The ``owner`` when it was opened.
        package var owner: String?
        package var description: String { owner.map { "\(kind) (opened by \($0))" } ?? kind }
    }

    private struct State {
        var next: UInt64 = 0
        var open: [UInt64: Record] = [:]
        /// Who waits for an owner's entries to close.
        var waiters: [String: [UUID: CheckedContinuation<Void, Never>]] = [:]
    }

    private static let state = LockedBox(State())

    /// Files an open resource under `owner` (by default the task's ``owner``).
    package static func opened(_ kind: String, owner: String? = OpenResources.owner) -> Token {
        state.withLock { state in
            state.next += 1
            state.open[state.next] = Record(kind: kind, owner: owner)
            return Token(id: state.next)
        }
    }

    /// Marks `entry` closed (a second call does nothing).
    package static func closed(_ entry: Token) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard let record = state.open.removeValue(forKey: entry.id), let owner = record.owner else { return [] }
            guard !state.open.values.contains(where: { $0.owner == owner }) else { return [] }
            return Array((state.waiters.removeValue(forKey: owner) ?? [:]).values)
        }
        for waiter in ready { waiter.resume() }
    }

    /// What is open now, filed under `owner` (every entry when `owner` is nil).
    package static func open(ownedBy owner: String? = nil) -> [Record] {
        state.withLock { state in
            state.open.sorted { $0.key < $1.key }.map(\.value).filter { owner == nil || $0.owner == owner }
        }
    }

    /// Waits until nothing filed under `owner` is open, or `limit` has passed (a guard against a hang: closing
    /// takes a thread's last pass or a server's last close, milliseconds on an idle machine).
    /// - Returns: What is still open under `owner` (empty when everything closed in time).
    package static func waitUntilClosed(ownedBy owner: String, limit: Duration) async -> [Record] {
        let key = UUID()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let now = state.withLock { state -> Bool in
                            guard !Task.isCancelled, state.open.values.contains(where: { $0.owner == owner }) else {
                                return true
                            }
                            state.waiters[owner, default: [:]][key] = continuation
                            return false
                        }
                        if now { continuation.resume() }
                    }
                } onCancel: {
                    state.withLock { $0.waiters[owner]?.removeValue(forKey: key) }?.resume()
                }
            }
            group.addTask {
                do { try await Task.sleep(for: limit) } catch {
                    // Cancelled: everything closed first, the usual end.
                }
            }
            await group.next()
            group.cancelAll()
        }
        return open(ownedBy: owner)
    }
}
