import AssetStore
import Dispatch
import Essentials

/// Commits that arrive while another is being written wait and go together into the next transaction: a burst of
/// finished downloads is a few transactions (and a few changes, one per group) instead of one each.
///
/// The first caller to find no transaction under way starts the writing, which goes on (on the groups' own serial
/// queue, never on a thread of the caller's concurrency pool: a transaction may wait for the disk, and a two-core
/// machine's pool has two threads) until nothing is left; every caller waits for its group's outcome. A group whose
/// transaction fails is written again one commit at a time, so one commit's failure is never another's.
final class CommitGroups: Sendable {
    /// One commit's part of a transaction. It may run twice (alone, after its group failed); what it throws is its
    /// own outcome.
    typealias Work = @Sendable (StoreTransaction) throws -> Void

    private struct Pending {
        let work: Work
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var pending: [Pending] = []
        var writing = false
    }

    private let state = LockedBox(State())
    /// Where groups are written, one after another.
    private let writer = DispatchQueue(label: "CloudAssets.CommitGroups", qos: .userInitiated)

    /// Commits waiting for the next transaction, and whether one is being written (for tests).
    var queue: (waiting: Int, writing: Bool) { state.withLock { ($0.pending.count, $0.writing) } }

    /// Returns once the writing that is under way (if any) has ended: the writer queue has passed every group
    /// queued so far (for tests: ``queue`` reads `writing` false afterwards unless a commit came meanwhile).
    func idle() async {
        await withCheckedContinuation { continuation in writer.async { continuation.resume() } }
    }

    /// Runs `work` in a write transaction of `library`, with whatever other commits are waiting; returns once that
    /// transaction is committed (or throws why this commit was not).
    func commit(in catalog: Catalog, _ work: @escaping Work) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let leads = state.withLock { state -> Bool in
                state.pending.append(Pending(work: work, continuation: continuation))
                if state.writing { return false }
                state.writing = true
                return true
            }
            if leads { writer.async { self.drain(catalog) } }
        }
    }

    private func drain(_ catalog: Catalog) {
        while let group = takeGroup() {
            var outcomes = [Result<Void, any Error>](repeating: .success(()), count: group.count)
            do {
                try catalog.performWrite { tx in
                    for item in group { try item.work(tx) }
                }
            } catch {
                if group.count == 1 {
                    outcomes[0] = .failure(error)
                } else {
                    // Which commit failed is not known: each alone.
                    for (index, item) in group.enumerated() {
                        do {
                            try catalog.performWrite { tx in try item.work(tx) }
                        } catch {
                            outcomes[index] = .failure(error)
                        }
                    }
                }
            }
            for (item, outcome) in zip(group, outcomes) { item.continuation.resume(with: outcome) }
        }
    }

    /// What waits, or `nil` (and no transaction under way any more) when nothing does.
    private func takeGroup() -> [Pending]? {
        state.withLock { state -> [Pending]? in
            guard !state.pending.isEmpty else {
                state.writing = false
                return nil
            }
            defer { state.pending = [] }
            return state.pending
        }
    }
}
