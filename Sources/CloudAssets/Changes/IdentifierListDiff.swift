import Foundation

/// The change details between two lists of distinct identifiers, in ``FetchResultChangeDetails``' convention:
/// removed indexes in `before`, inserted and changed indexes in `after`, and the fewest moves (the kept objects
/// that stay form a longest order-preserving subsequence). O((n + m) log n). For results whose order is not a
/// sort of the assets' own properties (an album's order), where membership and order come from two fetches.
struct IdentifierListDiff {
    var removed = IndexSet()
    var inserted = IndexSet()
    var changed = IndexSet()
    /// Ascending by `from` (and by `beforeIndex`).
    var moves: [(from: Int, to: Int, beforeIndex: Int)] = []

    var isEmpty: Bool { removed.isEmpty && inserted.isEmpty && changed.isEmpty && moves.isEmpty }
    /// The number of objects the details name.
    var size: Int { removed.count + inserted.count + changed.count + moves.count }

    init(before: some RandomAccessCollection<Int64>, after: some RandomAccessCollection<Int64>, changed: Set<Int64>) {
        let before = Array(before)
        let after = Array(after)
        var beforeIndex = [Int64: Int](minimumCapacity: before.count)
        for (index, id) in before.enumerated() { beforeIndex[id] = index }
        let afterSet = Set(after)
        // Each kept object's rank among the kept ones in the before order.
        var keptRank = [Int64: Int32](minimumCapacity: min(before.count, after.count))
        for (index, id) in before.enumerated() {
            if afterSet.contains(id) {
                keptRank[id] = Int32(keptRank.count)
            } else {
                removed.insert(index)
            }
        }
        var ranks: [Int32] = []
        var keptAfterIndexes: [Int] = []
        ranks.reserveCapacity(keptRank.count)
        for (index, id) in after.enumerated() {
            if let rank = keptRank[id] {
                ranks.append(rank)
                keptAfterIndexes.append(index)
                if changed.contains(id) { self.changed.insert(index) }
            } else {
                inserted.insert(index)
            }
        }
        let stays = heaviestIncreasingChain(ranks, weight: { _ in 1 })
        // The intermediate list M: the kept objects in the before order, with the inserted ones at their after
        // indexes — so a kept object of rank r sits at r plus the insertions before it in M.
        let insertedIndexes = Array(inserted)
        func indexInM(rank: Int) -> Int {
            // The number of insertions at M-positions before this object: the largest k with
            // insertedIndexes[k - 1] <= rank + k - 1 (inserted objects fill their indexes lowest first).
            var low = 0
            var high = insertedIndexes.count
            while low < high {
                let middle = (low + high) / 2
                if insertedIndexes[middle] <= rank + middle { low = middle + 1 } else { high = middle }
            }
            return rank + low
        }
        for (element, stay) in stays.enumerated() where !stay {
            let rank = Int(ranks[element])
            let id = after[keptAfterIndexes[element]]
            moves.append((from: indexInM(rank: rank), to: keptAfterIndexes[element], beforeIndex: beforeIndex[id]!))
        }
        moves.sort { $0.from < $1.from }
    }
}
