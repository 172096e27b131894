import AssetStore
import Foundation

/// One moved object: its index in the intermediate list (before, minus removals, plus insertions), its index in
/// the before list, and its index in the after list.
struct ComputedMove: Sendable, Hashable {
    var from: Int
    var beforeIndex: Int
    var to: Int
}

/// What a change did to one fetch result, as indexes (see ``FetchResultChangeDetails`` for the conventions).
struct ComputedDetails: Sendable {
    var after: SortedIdentifiers
    /// Before indexes, ascending.
    var removed: [Int] = []
    /// After indexes, ascending.
    var inserted: [Int] = []
    /// After indexes, ascending.
    var changed: [Int] = []
    /// Ascending by `from` (and by before index).
    var moves: [ComputedMove] = []

    var isEmpty: Bool { removed.isEmpty && inserted.isEmpty && changed.isEmpty && moves.isEmpty }
    var size: Int { removed.count + inserted.count + changed.count + moves.count }

    /// The index sets of ``removed``, ``inserted`` and ``changed``; large ones are built two at a time.
    func indexSets() -> (removed: IndexSet, inserted: IndexSet, changed: IndexSet) {
        guard size >= ChangeDetailsEngine.concurrencyThreshold else {
            return (IndexSet(removed), IndexSet(inserted), IndexSet(changed))
        }
        let details = SideBox(self)
        let sets = SideBox((removed: IndexSet(), inserted: IndexSet(), changed: IndexSet()))
        let changedSet = SideBox(IndexSet())
        DispatchQueue.concurrentPerform(iterations: 2) { side in
            if side == 0 {
                sets.value.removed = IndexSet(details.value.removed)
            } else {
                let inserted = IndexSet(details.value.inserted)
                changedSet.value = IndexSet(details.value.changed)
                sets.value.inserted = inserted
            }
        }
        return (sets.value.removed, sets.value.inserted, changedSet.value)
    }
}

/// Derives a fetch result's after state from its before state and one change set, without re-running the query
/// (except to fill a limited result from beyond its former end) and without a generic diff.
///
/// Cost, for c changed ids and k placements on n objects held in r runs: O((c + k) log n) searches, O(c + k + r)
/// for the after list, which shares the before list's storage (see ``SortedIdentifiers``) — or O(n) copying when
/// that would leave it in more than ``maximumRuns`` runs — and O(m log m) for the minimal moves over the m kept
/// stretches and re-placed objects. A one-column numeric order (a date, a size) compares unboxed values.
struct ChangeDetailsEngine {
    /// The most runs an after list may be left in; past it, the after list is copied into one chunk.
    static let maximumRuns = 256
    /// The number of changed objects from which independent parts of the work run on two threads.
    static let concurrencyThreshold = 8192

    let before: SortedIdentifiers
    let query: StoreQuery
    /// Records after the change, keyed by inserted and updated ids only (an id without one: gone).
    let afterRecords: [Int64: AssetRecord]
    /// Records before the change, keyed by updated and deleted ids only (empty for changes read from the history).
    let beforeRecords: [Int64: AssetRecord]
    let inserted: Set<Int64>
    let updated: Set<Int64>
    let deleted: Set<Int64>
    /// `true` for a change read back from the history: no before-records, and an inserted id may already be in the
    /// result when it was fetched later.
    let isHistorical: Bool
    /// Finds an identifier without sort information (history changes, stale snapshots).
    let slowIndex: (Int64) -> Int?
    /// Reads up to `limit` matching records strictly after a position, skipping identifiers (limited results).
    let fill: (SortPosition?, Set<Int64>, Int) throws -> [AssetRecord]

    init(
        before: SortedIdentifiers, query: StoreQuery, afterRecords: [Int64: AssetRecord],
        beforeRecords: [Int64: AssetRecord], inserted: Set<Int64>, updated: Set<Int64>, deleted: Set<Int64>,
        isHistorical: Bool, slowIndex: @escaping (Int64) -> Int?,
        fill: @escaping (SortPosition?, Set<Int64>, Int) throws -> [AssetRecord]
    ) {
        self.before = before
        self.query = query
        self.afterRecords = afterRecords
        self.beforeRecords = beforeRecords
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.isHistorical = isHistorical
        self.slowIndex = slowIndex
        self.fill = fill
    }

    func compute() throws -> ComputedDetails {
        let idAscending = query.idAscending
        if query.sort.count == 1 {
            let sort = query.sort[0]
            switch SortColumn(for: sort.key) {
            case .real:
                let order = NumericOrder<Double>(sortKey: sort.key, ascending: sort.ascending, idAscending: idAscending)
                return try ChangeDetailsComputation(engine: self, order: order).compute()
            case .integer:
                let order = NumericOrder<Int64>(sortKey: sort.key, ascending: sort.ascending, idAscending: idAscending)
                return try ChangeDetailsComputation(engine: self, order: order).compute()
            case .text:
                break
            }
        }
        return try ChangeDetailsComputation(engine: self, order: GeneralOrder(query: query)).compute()
    }
}
