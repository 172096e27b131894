import Essentials

/// One listing page of a ``RangedListing`` and the key interval it accounts for: every key of the bucket in
/// `(after, through]` under the prefix is in `objects`, and no other.
package struct ListedInterval: Sendable {
    /// The interval's lower end (exclusive); `nil` for the start of the listed range.
    package var after: String?
    /// The interval's upper end (inclusive); `nil` for the end of the listed range.
    package var through: String?
    /// The objects in the interval, in key order.
    package var objects: [S3ObjectSummary]
}

/// Lists a key range of a bucket with several requests in flight, splitting the key space as it goes (as the
/// fastest S3 listers do): a listing request can only continue where the previous page ended, so one sequence of
/// pages is one request at a time, however many connections there are.
///
/// The range starts as one segment. A worker with nothing to list splits the widest segment still being listed:
/// the part after the key space's midpoint between that segment's last listed key and its end becomes a segment of
/// its own, listed from `start-after` the midpoint (``KeySpace``). A split that lands where there are no keys costs
/// one request that comes back empty; the splits then close in on where the keys are.
///
/// Every page is handed to `body` with the interval it covers; the intervals tile the range exactly, so a
/// caller can reconcile each on its own, in any order. `body` runs on up to `width` tasks at once.
package struct RangedListing: Sendable {
    /// One listing request: the page after `continuationToken`, or else from `startAfter`.
    typealias PageSource =
        @Sendable (_ continuationToken: String?, _ startAfter: String?) async throws -> ListObjectsPage

    let prefix: String
    let width: Int
    let listPage: PageSource

    /// - Parameters:
    ///   - client: The client.
    ///   - bucket: The bucket.
    ///   - prefix: Only keys that start with this.
    ///   - width: The most listing requests (and `body` calls) at once; at least 1.
    package init(client: S3Client, bucket: String, prefix: String, width: Int) {
        self.init(prefix: prefix, width: width) { token, startAfter in
            try await client.listObjectsV2(
                bucket: bucket, prefix: prefix, continuationToken: token, startAfter: startAfter)
        }
    }

    /// A listing whose requests `listPage` answers (tests list a key set in memory).
    init(prefix: String, width: Int, listPage: @escaping PageSource) {
        self.prefix = prefix
        self.width = max(1, width)
        self.listPage = listPage
    }

    /// Lists the keys in `(after, through]` and hands each page to `body`.
    ///
    /// The first error (of a request or of `body`) stops every worker and is thrown; intervals `body` finished
    /// before stay finished. Cancelling the calling task stops the listing with `CancellationError`.
    /// - Parameters:
    ///   - after: Keys after this one (exclusive); `nil` from the first key.
    ///   - through: Keys up to this one (inclusive); `nil` to the last key under the prefix.
    ///   - body: Called with every page; calls overlap (up to `width`).
    ///   - progress: Called after `body` returns, with a key such that every interval up to it has been through
    ///     `body` (never called with the end of the range). Calls may overlap and arrive out of order; each key is
    ///     true when it is made.
    package func run(
        after: String?, through: String?, body: @escaping @Sendable (ListedInterval) async throws -> Void,
        progress: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws {
        let plan = LockedBox(ListingPlan(after: after, through: through))
        let signal = WakeUps()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<width {
                group.addTask {
                    do {
                        while let id = try await claim(plan, signal) {
                            try await listSegment(id, plan: plan, signal: signal, body: body, progress: progress)
                        }
                    } catch {
                        plan.withLock { $0.failed = true }
                        signal.wakeAll()
                        throw error
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// The next segment for a worker (its id: a segment's index moves when another is split in front of it): an
    /// unstarted one, else the upper half of the widest one being listed; waits while there is neither and some
    /// segment is still being listed; `nil` when all are done.
    private func claim(_ plan: LockedBox<ListingPlan>, _ signal: WakeUps) async throws -> Int? {
        while true {
            try Task.checkCancellation()
            let ticket = signal.ticket()
            let decision = plan.withLock { plan -> ClaimDecision in
                if plan.failed || plan.segments.allSatisfy(\.done) { return .finished }
                if let index = plan.segments.firstIndex(where: { !$0.started }) {
                    plan.segments[index].started = true
                    return .segment(plan.segments[index].id)
                }
                if let id = plan.split(prefix: prefix) { return .segment(id) }
                return .wait
            }
            switch decision {
            case .finished: return nil
            case .segment(let id): return id
            case .wait: await signal.wait(after: ticket)
            }
        }
    }

    private func listSegment(
        _ id: Int, plan: LockedBox<ListingPlan>, signal: WakeUps,
        body: @Sendable (ListedInterval) async throws -> Void, progress: @Sendable (String) -> Void
    ) async throws {
        var lower = plan.withLock { $0.segments[$0.index(of: id)].after }
        let startAfter = lower
        var token: String?
        var seen = Set<String>()
        while true {
            try Task.checkCancellation()
            let page = try await listPage(token, token == nil ? startAfter : nil)
            if page.isTruncated, page.objects.isEmpty {
                throw S3Error.malformedResponse("the listing is truncated but the page is empty")
            }
            // Where the segment ends now (a split may have moved it while the request was out), and whether this
            // page reaches it; a segment that continues shows its position, for others to split from.
            let (objects, upper, last) = plan.withLock { plan -> ([S3ObjectSummary], String?, Bool) in
                let i = plan.index(of: id)
                let end = plan.segments[i].through
                var objects = page.objects
                var last = !page.isTruncated
                if let end, let cut = objects.firstIndex(where: { end.utf8.lexicographicallyPrecedes($0.key.utf8) }) {
                    objects.removeSubrange(cut...)
                    last = true
                }
                if last || objects.isEmpty {
                    plan.segments[i].exhausted = true
                    return (objects, end, true)
                }
                plan.segments[i].position = objects.last?.key
                plan.segments[i].pages += 1
                return (objects, objects.last?.key, false)
            }
            if !last { signal.wakeAll() }
            try await body(ListedInterval(after: lower, through: upper, objects: objects))
            let frontier = plan.withLock { plan -> String? in
                let i = plan.index(of: id)
                plan.segments[i].reconciled = upper
                if last { plan.segments[i].done = true }
                return plan.advanceFrontier()
            }
            if let frontier { progress(frontier) }
            if last {
                signal.wakeAll()
                return
            }
            guard let next = page.nextContinuationToken else {
                throw S3Error.malformedResponse("the listing is truncated but carries no continuation token")
            }
            guard seen.insert(next).inserted else {
                throw S3Error.malformedResponse("the listing repeated continuation token \(next)")
            }
            token = next
            lower = upper
        }
    }
}

private enum ClaimDecision: Sendable {
    /// The id of the segment to list.
    case segment(Int)
    case wait
    case finished
}

/// The segments of a ranged listing, in key order; they tile the listed range.
private struct ListingPlan: Sendable {
    struct Segment: Sendable {
        let id: Int
        /// Lower end, exclusive (`nil`: the range's start).
        var after: String?
        /// Upper end, inclusive (`nil`: the range's end). Lowered when the segment is split.
        var through: String?
        /// The last key listed, while more follow.
        var position: String?
        /// Pages listed so far.
        var pages = 0
        /// Listed and handed over up to here (inclusive).
        var reconciled: String?
        var started = false
        /// The last page has arrived: no more splits.
        var exhausted = false
        /// Every page has been through the body.
        var done = false
    }

    var segments: [Segment]
    var failed = false
    /// The range's end, for the frontier.
    let end: String?
    var nextID = 1
    var frontier: String?

    init(after: String?, through: String?) {
        segments = [Segment(id: 0, after: after, through: through)]
        end = through
        frontier = nil
    }

    func index(of id: Int) -> Int { segments.firstIndex { $0.id == id }! }

    /// Splits the widest segment being listed at the midpoint between its position and its end; the upper part is
    /// a new, started segment. Returns its id, or `nil` when no segment can be split.
    mutating func split(prefix: String) -> Int? {
        var best: (index: Int, width: Double)?
        // A segment is split once it has shown more than two pages: a small listing never sends a request that
        // finds nothing.
        for (i, segment) in segments.enumerated() where segment.started && !segment.exhausted && segment.pages >= 2 {
            guard let position = segment.position else { continue }
            let width = KeySpace.width(from: position, to: segment.through, prefix: prefix)
            if width > (best?.width ?? 0) { best = (i, width) }
        }
        guard let best, let position = segments[best.index].position,
            let middle = KeySpace.midpoint(position, segments[best.index].through, prefix: prefix)
        else { return nil }
        let upper = Segment(id: nextID, after: middle, through: segments[best.index].through, started: true)
        nextID += 1
        segments[best.index].through = middle
        segments.insert(upper, at: best.index + 1)
        return upper.id
    }

    /// Every key up to the returned one has been through the body; `nil` when that point has not moved or is
    /// the range's end (the caller is then about to finish).
    mutating func advanceFrontier() -> String? {
        var point: String?
        for segment in segments {
            if segment.done {
                point = segment.through
                if point == nil { return nil }  // the range's end
            } else {
                point = segment.reconciled ?? segment.after
                break
            }
        }
        guard let point, point != frontier else { return nil }
        if let frontier, !frontier.utf8.lexicographicallyPrecedes(point.utf8) { return nil }
        frontier = point
        return point
    }
}

/// Wakes tasks waiting for the plan to change. A waiter takes a ticket before it looks at the plan, so a change
/// made between its look and its wait still wakes it.
private final class WakeUps: Sendable {
    private struct State {
        var generation = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = LockedBox(State())

    func ticket() -> Int { state.withLock { $0.generation } }

    func wakeAll() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation += 1
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the plan has changed since `ticket`, or the task is cancelled.
    func wait(after ticket: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.generation != ticket { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            wakeAll()
        }
    }
}
