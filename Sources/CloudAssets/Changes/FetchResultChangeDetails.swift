import AssetStore
public import Foundation

/// How one change affected one fetch result (PhotoKit's `PHFetchResultChangeDetails`).
///
/// Index conventions (exactly PhotoKit's):
/// - ``removedIndexes`` are indexes in ``fetchResultBeforeChanges``;
/// - ``insertedIndexes`` and ``changedIndexes`` are indexes in ``fetchResultAfterChanges``;
/// - moves (``enumerateMoves(_:)``) are applied after removals and insertions. Let *M* be the before list with
///   the removed objects taken out (highest index first) and then the inserted objects put in at their
///   inserted indexes (lowest first). Each move's `fromIndex` is the object's index in *M* and its `toIndex` its
///   index in the after list. Applying all moves at once — each moved object at its `toIndex`, each inserted object
///   at its index, the other objects of *M* keeping their relative order in the remaining positions — yields
///   exactly ``fetchResultAfterChanges``. Moves are minimal: only objects whose order relative to the other kept
///   objects changed move (the kept objects that stay form a longest order-preserving subsequence).
///
/// For a list UI, ``ListUpdate`` turns these into the steps of one batch update.
public struct FetchResultChangeDetails: Sendable {
    /// One move, in the convention above.
    public struct Move: Sendable, Hashable {
        /// Index in the intermediate list *M* (before, minus removals, plus insertions).
        public let fromIndex: Int
        /// Index in ``FetchResultChangeDetails/fetchResultAfterChanges``.
        public let toIndex: Int
        /// Index of the same object in ``FetchResultChangeDetails/fetchResultBeforeChanges`` (what a UIKit-style
        /// batch update wants as the source of a move).
        public let beforeIndex: Int
    }

    /// The fetch result the details were asked for.
    public let fetchResultBeforeChanges: FetchResult
    /// The same fetch after the change: same options, membership and order derived from the change.
    public let fetchResultAfterChanges: FetchResult
    /// `false` when the change was too large (past the library's `maxIncrementalChangeCount`): then the index sets
    /// are `nil`, there are no moves or objects, and a UI should reload from ``fetchResultAfterChanges``.
    public let hasIncrementalChanges: Bool
    /// Indexes in the before result of the objects no longer in the result (deleted, no longer matching, or pushed
    /// out by the fetch limit).
    public let removedIndexes: IndexSet?
    /// Indexes in the after result of the objects new to the result.
    public let insertedIndexes: IndexSet?
    /// Indexes in the after result of objects in both results whose properties changed.
    public let changedIndexes: IndexSet?
    /// The moves, ascending by `fromIndex` (and by `beforeIndex`).
    public let moves: [Move]

    let beforeRecords: [Int64: AssetRecord]
    let afterRecords: [Int64: AssetRecord]

    /// `true` when at least one object moved.
    public var hasMoves: Bool { !moves.isEmpty }

    /// Calls `body(fromIndex, toIndex)` for every move, ascending by `fromIndex`, in the convention described on
    /// the type.
    public func enumerateMoves(_ body: (_ fromIndex: Int, _ toIndex: Int) -> Void) {
        for move in moves { body(move.fromIndex, move.toIndex) }
    }

    /// The removed objects as they were before the change, in before-index order.
    public var removedObjects: [Asset] {
        let before = fetchResultBeforeChanges
        return (removedIndexes ?? []).map { index in
            let id = before.sorted.id(at: index)
            return beforeRecords[id].map { Asset($0, revealsLocation: before.revealsLocation, store: before.store) }
                ?? before[index]
        }
    }

    /// The inserted objects as they are after the change, in after-index order.
    public var insertedObjects: [Asset] { afterObjects(insertedIndexes) }

    /// The changed objects as they are after the change, in after-index order.
    public var changedObjects: [Asset] { afterObjects(changedIndexes) }

    private func afterObjects(_ indexes: IndexSet?) -> [Asset] {
        let after = fetchResultAfterChanges
        return (indexes ?? []).map { index in
            let id = after.sorted.id(at: index)
            return afterRecords[id].map { Asset($0, revealsLocation: after.revealsLocation, store: after.store) }
                ?? after[index]
        }
    }
}
