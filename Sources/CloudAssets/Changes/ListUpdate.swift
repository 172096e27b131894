/// The steps a list UI applies for one ``FetchResultChangeDetails``, in the order Apple's sample code uses.
///
/// 1. In **one batch update**: delete the rows at ``deletes`` (indexes in the *before* list, highest first), insert
///    rows at ``inserts`` (indexes in the *after* list, lowest first), and move rows per ``moves`` (`from` is an index
///    in the *before* list, `to` an index in the *after* list — the convention of `UICollectionView` /
///    `UITableView` batch updates, already converted from PhotoKit's move convention).
/// 2. **After** the batch: reload the rows at ``reloads`` (indexes in the *after* list; rows inserted or moved in
///    the batch are not listed: they already show their new content).
///
/// When ``reloadsAll`` is `true` (the change was too large to describe incrementally), skip the steps and reload the
/// whole list from ``FetchResultChangeDetails/fetchResultAfterChanges``.
public struct ListUpdate: Sendable, Hashable {
    /// A row move inside the batch.
    public struct Move: Sendable, Hashable {
        /// The row's index before the batch.
        public let from: Int
        /// The row's index after the batch.
        public let to: Int
    }

    /// `true` when the UI should reload everything instead of applying the steps.
    public let reloadsAll: Bool
    /// Rows to delete, before-indexes, descending.
    public let deletes: [Int]
    /// Rows to insert, after-indexes, ascending.
    public let inserts: [Int]
    /// Rows to move, before-index to after-index, ascending by `from`.
    public let moves: [Move]
    /// Rows to reload after the batch, after-indexes, ascending.
    public let reloads: [Int]

    /// Builds the steps for `details`.
    public init(_ details: FetchResultChangeDetails) {
        guard details.hasIncrementalChanges else {
            reloadsAll = true
            deletes = []
            inserts = []
            moves = []
            reloads = []
            return
        }
        reloadsAll = false
        deletes = (details.removedIndexes ?? []).reversed()
        inserts = Array(details.insertedIndexes ?? [])
        moves = details.moves.map { Move(from: $0.beforeIndex, to: $0.toIndex) }
        let movedTo = Set(details.moves.map(\.toIndex))
        let inserted = details.insertedIndexes ?? []
        reloads = (details.changedIndexes ?? []).filter { !movedTo.contains($0) && !inserted.contains($0) }
    }

    /// Applies the steps to a plain array the way a batch-updating list view does: deleted rows go, inserted rows
    /// come from `makeRow(afterIndex)`, moved rows land at their `to` index, the other rows keep their relative order
    /// in the remaining positions; then reloaded rows are replaced by `makeRow(afterIndex)`.
    ///
    /// When ``reloadsAll`` is `true`, `rows` becomes `makeRow` for every index of the after list (`afterCount`).
    public func apply<Row>(to rows: inout [Row], afterCount: Int, makeRow: (Int) -> Row) {
        if reloadsAll {
            rows = (0..<afterCount).map(makeRow)
            return
        }
        var result = [Row?](repeating: nil, count: afterCount)
        for index in inserts { result[index] = makeRow(index) }
        for move in moves { result[move.to] = rows[move.from] }
        let deleted = Set(deletes)
        let movedFrom = Set(moves.map(\.from))
        var slot = 0
        for (index, row) in rows.enumerated() where !deleted.contains(index) && !movedFrom.contains(index) {
            while result[slot] != nil { slot += 1 }
            result[slot] = row
        }
        rows = result.map { $0! }
        for index in reloads { rows[index] = makeRow(index) }
    }
}
