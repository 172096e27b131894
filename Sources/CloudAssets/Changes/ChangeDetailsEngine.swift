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
}

/// Derives a fetch result's after state from its before state and one change set, without re-running the query
/// (except to fill a limited result from beyond its former end) and without a generic diff.
///
/// Cost: O(n) array copies plus O((c + k) log n) for the c changed ids and k placements, and a longest increasing
/// subsequence over the kept ids that is O(n) when few moved.
struct ChangeDetailsEngine {
    let before: SortedIdentifiers
    let query: StoreQuery
    /// Records after the change, for inserted and updated ids (`nil` value: gone).
    let afterRecords: [Int64: AssetRecord]
    /// Records before the change, for updated and deleted ids (empty for changes read from the history).
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

    /// The before result's only sort column when the query has one of a numeric kind (see ``SingleColumn``).
    private let singleColumn: SingleColumn?
    /// The direction of the first sort criterion and of the identifier tie-break, read once.
    private let firstAscending: Bool
    private let idAscending: Bool

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
        firstAscending = query.sort.first?.ascending ?? true
        idAscending = query.idAscending
        switch (query.sort.count, before.keys.first) {
        case (1, .real(let values)?): singleColumn = .real(values)
        case (1, .integer(let values)?): singleColumn = .integer(values)
        default: singleColumn = nil
        }
    }

    private var count: Int { before.ids.count }

    // MARK: Ordering helpers

    /// `true` when the element at `index` of `list` comes before `position`.
    @inline(__always)
    private func element(_ list: SortedIdentifiers, _ index: Int, precedes position: SortPosition) -> Bool {
        for (column, criterion) in query.sort.enumerated() {
            let value = list.keys[column][index]
            let other = position.values[column]
            if value != other { return (value < other) == criterion.ascending }
        }
        return query.idAscending ? list.ids[index] < position.id : list.ids[index] > position.id
    }

    /// The common one-column orders (a date, a size) compare raw values from the before columns: no enum
    /// wrapping or array access per comparison, which dominates binary searches over 100,000 objects.
    private enum SingleColumn {
        case real(ContiguousArray<Double>)
        case integer(ContiguousArray<Int64>)
    }

    /// Whether (`key`, `id`) comes before (`otherKey`, `otherID`) in a one-column order: the key, then the
    /// identifier as the query breaks ties.
    @inline(__always)
    private func precedes<Key: Comparable>(_ key: Key, _ id: Int64, _ otherKey: Key, _ otherID: Int64) -> Bool {
        key != otherKey ? (key < otherKey) == firstAscending : (idAscending ? id < otherID : id > otherID)
    }

    /// `lowerBound` over one typed column: the first index in `range` not preceding (`key`, `id`).
    private func lowerBound<Key: Comparable>(
        _ keys: ContiguousArray<Key>, _ key: Key, _ id: Int64, in range: Range<Int>
    ) -> Int {
        keys.withUnsafeBufferPointer { keys in
            before.ids.withUnsafeBufferPointer { ids in
                var low = range.lowerBound
                var high = range.upperBound
                while low < high {
                    let mid = (low + high) / 2
                    if precedes(keys[mid], ids[mid], key, id) { low = mid + 1 } else { high = mid }
                }
                return low
            }
        }
    }

    /// `lowerBound` from `start` when the answer is usually near it (positions visited in ascending order):
    /// probes 1, 2, 4, … elements ahead, then searches the last gap — memory is touched close to the cursor only.
    private func gallopingLowerBound<Key: Comparable>(
        _ keys: ContiguousArray<Key>, _ key: Key, _ id: Int64, from start: Int, to end: Int
    ) -> Int {
        var low = start
        var high = start
        var step = 1
        while high < end, precedes(keys[high], before.ids[high], key, id) {
            low = high + 1
            high = low + step
            step <<= 1
        }
        return lowerBound(keys, key, id, in: low..<min(high, end))
    }

    private func gallopingLowerBound(_ position: SortPosition, from start: Int, to end: Int) -> Int {
        switch (singleColumn, position.values.first) {
        case (.real(let keys)?, .real(let key)?):
            return gallopingLowerBound(keys, key, position.id, from: start, to: end)
        case (.integer(let keys)?, .integer(let key)?):
            return gallopingLowerBound(keys, key, position.id, from: start, to: end)
        default: return lowerBound(position, in: start..<end)
        }
    }

    /// The before indexes of many identifiers (as ``locate(_:horizon:)``, in the same order). With one numeric
    /// sort column, the before values are sorted first and found in one forward sweep of galloping searches.
    private func locateMany(_ ids: [Int64], horizon: SortPosition?) -> [Int?] {
        let sortKey = query.sort.first?.key
        switch singleColumn {
        case .real(let keys)?:
            return locateSorted(ids, keys, horizon: horizon) { record in
                (sortKey == .creationDate ? record.creationDate : record.modificationDate)
                    .timeIntervalSinceReferenceDate
            }
        case .integer(let keys)?:
            return locateSorted(ids, keys, horizon: horizon) { record in
                sortKey == .size ? record.size : record.pixelCount
            }
        case nil:
            return ids.map { locate($0, horizon: horizon) }
        }
    }

    private func locateSorted<Key: Comparable>(
        _ ids: [Int64], _ keys: ContiguousArray<Key>, horizon: SortPosition?, value: (AssetRecord) -> Key
    ) -> [Int?] {
        var result = [Int?](repeating: nil, count: ids.count)
        var targets: [(key: Key, id: Int64, slot: Int)] = []
        targets.reserveCapacity(ids.count)
        for (slot, id) in ids.enumerated() {
            if let record = beforeRecords[id] {
                targets.append((value(record), id, slot))
            } else {
                result[slot] = slowIndex(id)
            }
        }
        targets.sort { precedes($0.key, $0.id, $1.key, $1.id) }
        var cursor = 0
        for target in targets {
            let index = gallopingLowerBound(keys, target.key, target.id, from: cursor, to: count)
            cursor = index
            if index < count && before.ids[index] == target.id {
                result[target.slot] = index
            } else {
                result[target.slot] = locate(target.id, horizon: horizon)  // not where its record says
            }
        }
        return result
    }

    private func lowerBound(_ position: SortPosition, in range: Range<Int>) -> Int {
        switch (singleColumn, position.values.first) {
        case (.real(let keys)?, .real(let key)?): return lowerBound(keys, key, position.id, in: range)
        case (.integer(let keys)?, .integer(let key)?): return lowerBound(keys, key, position.id, in: range)
        default: break
        }
        var low = range.lowerBound
        var high = range.upperBound
        while low < high {
            let mid = (low + high) / 2
            if element(before, mid, precedes: position) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private func position(at index: Int) -> SortPosition {
        SortPosition(values: before.keys.map { $0[index] }, id: before.ids[index])
    }

    /// The before index of `id`, using its before-record's sort position (O(log n)) when known.
    private func locate(_ id: Int64, horizon: SortPosition?) -> Int? {
        guard let record = beforeRecords[id] else { return slowIndex(id) }
        let target = query.position(of: record)
        let index = lowerBound(target, in: 0..<count)
        if index < count && before.ids[index] == id { return index }
        // Not where its record says: absent, unless the snapshot is older than this change.
        guard query.predicate.matches(record) else { return nil }
        if let horizon, query.precedes(horizon, target) { return nil }
        return slowIndex(id)
    }

    // MARK: Computation

    private struct Candidate {
        var position: SortPosition
        /// Before index when the object was already in the result (its sort key changed).
        var beforeIndex: Int?
        var afterIndex = -1
    }

    func compute() throws -> ComputedDetails {
        let limit = query.limit
        // The result may have been cut by the limit: beyond its last element, the store knows more.
        let horizon: SortPosition? = (limit != nil && count >= limit! && count > 0) ? position(at: count - 1) : nil

        var skipped: [Int] = []  // before indexes leaving their place (removed or re-placed)
        var removedSet = Set<Int>()
        var changedIDs: [Int64: Int] = [:]  // id → before index, for updated ids kept
        var candidates: [Candidate] = []

        let deletedIDs = Array(deleted)
        for case let index? in locateMany(deletedIDs, horizon: horizon) {
            skipped.append(index)
            removedSet.insert(index)
        }
        // Updated objects (already in the result, unless they now match) and inserted ones. An id can be in
        // both sets only in a history entry; it is handled once, as inserted.
        let updatedIDs = updated.filter { !inserted.contains($0) }
        let locatedUpdated = Dictionary(
            uniqueKeysWithValues: zip(updatedIDs, locateMany(Array(updatedIDs), horizon: horizon)))
        func place(_ id: Int64, wasInserted: Bool) {
            let index = wasInserted ? (isHistorical ? locate(id, horizon: horizon) : nil) : locatedUpdated[id] ?? nil
            guard let record = afterRecords[id], query.predicate.matches(record) else {
                if let index {
                    skipped.append(index)
                    removedSet.insert(index)
                }
                return
            }
            let newPosition = query.position(of: record)
            if let index {
                changedIDs[id] = index
                if !hasSortValues(newPosition, at: index) {
                    skipped.append(index)
                    candidates.append(Candidate(position: newPosition, beforeIndex: index))
                }
            } else {
                candidates.append(Candidate(position: newPosition, beforeIndex: nil))
            }
        }
        candidates.reserveCapacity(inserted.count + updated.count)
        for id in updatedIDs { place(id, wasInserted: false) }
        for id in inserted { place(id, wasInserted: true) }
        skipped.sort()
        sortInQueryOrder(&candidates)

        // Candidates past the horizon are not known to belong; they compete with the store's rows there.
        var beyond: [Candidate] = []
        if let horizon, let firstBeyond = candidates.firstIndex(where: { query.precedes(horizon, $0.position) }) {
            beyond = Array(candidates[firstBeyond...])
            candidates.removeSubrange(firstBeyond...)
        }

        // Merge the kept elements (in before order) with the placed candidates.
        var after = SortedIdentifiers(ids: [], keys: query.sort.map { SortColumn(for: $0.key) })
        let capacity = count - skipped.count + candidates.count
        after.ids.reserveCapacity(capacity)
        for column in after.keys.indices { after.keys[column].reserveCapacity(capacity) }
        var afterIndexOfBefore = ContiguousArray<Int32>(repeating: -1, count: count)

        func appendKept(_ range: Range<Int>) {
            guard !range.isEmpty else { return }
            let start = after.ids.count
            after.ids.append(contentsOf: before.ids[range])
            for column in after.keys.indices { after.keys[column].append(contentsOf: before.keys[column], range) }
            afterIndexOfBefore.withUnsafeMutableBufferPointer { buffer in
                var afterIndex = Int32(start)
                for beforeIndex in range {
                    buffer[beforeIndex] = afterIndex
                    afterIndex += 1
                }
            }
        }
        func appendCandidate(_ index: Int) {
            candidates[index].afterIndex = after.ids.count
            after.ids.append(candidates[index].position.id)
            for column in after.keys.indices { after.keys[column].append(candidates[index].position.values[column]) }
        }

        var next = 0
        var segmentStart = 0
        for boundary in skipped + [count] {
            var cursor = segmentStart
            while next < candidates.count {
                let insertion = gallopingLowerBound(candidates[next].position, from: cursor, to: boundary)
                if insertion == boundary { break }
                appendKept(cursor..<insertion)
                cursor = insertion
                appendCandidate(next)
                next += 1
            }
            appendKept(cursor..<boundary)
            segmentStart = boundary + 1
        }
        while next < candidates.count {
            appendCandidate(next)
            next += 1
        }

        // Limit: cut the tail, or fill from beyond the old end.
        if let limit {
            if after.ids.count > limit {
                truncate(&after, to: limit)
                var index = count - 1
                while index >= 0 {
                    let afterIndex = afterIndexOfBefore[index]
                    if afterIndex >= Int32(limit) {
                        afterIndexOfBefore[index] = -1
                        removedSet.insert(index)
                    } else if afterIndex >= 0 {
                        break
                    }
                    index -= 1
                }
                for index in candidates.indices where candidates[index].afterIndex >= limit {
                    candidates[index].afterIndex = -1
                }
            }
            if let horizon, after.ids.count < limit {
                let needed = limit - after.ids.count
                let affected = inserted.union(updated).union(deleted)
                let stored = try fill(horizon, affected, needed).map { Candidate(position: query.position(of: $0)) }
                var merged = (stored + beyond).sorted { query.precedes($0.position, $1.position) }
                if merged.count > needed { merged.removeSubrange(needed...) }
                for candidate in merged {
                    candidates.append(candidate)
                    appendCandidate(candidates.count - 1)
                }
            }
            // Objects of the before result that went past the end and were not taken back are removed.
            let placed = Set(candidates.lazy.filter { $0.afterIndex >= 0 }.map(\.position.id))
            for candidate in beyond where !placed.contains(candidate.position.id) {
                if let index = candidate.beforeIndex { removedSet.insert(index) }
            }
        }

        var details = ComputedDetails(after: after)
        for candidate in candidates where candidate.afterIndex >= 0 {
            if let index = candidate.beforeIndex {
                afterIndexOfBefore[index] = Int32(candidate.afterIndex)
            } else {
                details.inserted.append(candidate.afterIndex)
            }
        }
        for candidate in candidates where candidate.afterIndex < 0 {
            if let index = candidate.beforeIndex { removedSet.insert(index) }
        }
        details.inserted.sort()
        details.removed = removedSet.sorted()
        for (_, index) in changedIDs where afterIndexOfBefore[index] >= 0 {
            details.changed.append(Int(afterIndexOfBefore[index]))
        }
        details.changed.sort()
        details.moves = moves(
            afterIndexOfBefore, replaced: candidates.compactMap { $0.afterIndex >= 0 ? $0.beforeIndex : nil },
            inserted: details.inserted)
        return details
    }

    /// Whether the before element at `index` has exactly the sort values of `position`.
    private func hasSortValues(_ position: SortPosition, at index: Int) -> Bool {
        switch (singleColumn, position.values.first) {
        case (.real(let keys)?, .real(let key)?): return keys[index] == key
        case (.integer(let keys)?, .integer(let key)?): return keys[index] == key
        default: return position.values.indices.allSatisfy { position.values[$0] == before.keys[$0][index] }
        }
    }

    /// Sorts candidates in the query's order; one-column orders compare unwrapped values.
    private func sortInQueryOrder(_ candidates: inout [Candidate]) {
        guard query.sort.count == 1, candidates.count > 1 else {
            candidates.sort { query.precedes($0.position, $1.position) }
            return
        }
        func sorted<Key: Comparable>(by key: (SortValue) -> Key?) -> [Candidate]? {
            var decorated: [(key: Key, id: Int64, index: Int)] = []
            decorated.reserveCapacity(candidates.count)
            for (index, candidate) in candidates.enumerated() {
                guard let value = key(candidate.position.values[0]) else { return nil }
                decorated.append((value, candidate.position.id, index))
            }
            decorated.sort { precedes($0.key, $0.id, $1.key, $1.id) }
            return decorated.map { candidates[$0.index] }
        }
        let result: [Candidate]?
        switch candidates[0].position.values[0] {
        case .real:
            result = sorted { value -> Double? in
                if case .real(let v) = value { return v }
                return nil
            }
        case .integer:
            result = sorted { value -> Int64? in
                if case .integer(let v) = value { return v }
                return nil
            }
        case .text:
            result = nil
        }
        if let result {
            candidates = result
        } else {
            candidates.sort { query.precedes($0.position, $1.position) }
        }
    }

    private func truncate(_ list: inout SortedIdentifiers, to limit: Int) {
        list.ids.removeSubrange(limit...)
        for column in list.keys.indices {
            var kept = SortColumn(for: query.sort[column].key)
            kept.append(contentsOf: list.keys[column], 0..<limit)
            list.keys[column] = kept
        }
    }

    /// Minimal moves: every kept object outside a longest increasing subsequence of after indexes (in before
    /// order) moves. `from` is its index in the intermediate list, where kept objects fill, in before order, the
    /// indexes not taken by insertions.
    ///
    /// Only the window disturbed by re-placed objects is searched: before it (and after it), kept objects are in
    /// order and below (above) every other value, so they belong to every longest increasing subsequence.
    private func moves(_ afterIndexOfBefore: ContiguousArray<Int32>, replaced: [Int], inserted: [Int])
        -> [ComputedMove]
    {
        guard let window = disorderWindow(afterIndexOfBefore, replaced: replaced) else { return [] }
        let stays = longestIncreasingSubsequence(afterIndexOfBefore, in: window)
        var result: [ComputedMove] = []
        var rank = 0  // common objects before the current one, in before order
        afterIndexOfBefore.withUnsafeBufferPointer { values in
            for index in 0..<window.lowerBound where values[index] >= 0 { rank += 1 }
        }
        var insertedBelow = 0
        for beforeIndex in window where afterIndexOfBefore[beforeIndex] >= 0 {
            defer { rank += 1 }
            if stays[beforeIndex - window.lowerBound] { continue }
            while insertedBelow < inserted.count && inserted[insertedBelow] <= rank + insertedBelow {
                insertedBelow += 1
            }
            result.append(
                ComputedMove(
                    from: rank + insertedBelow, beforeIndex: beforeIndex, to: Int(afterIndexOfBefore[beforeIndex])))
        }
        return result
    }

    /// The before-index range outside which kept objects cannot move: from the first re-placed object (or the first
    /// kept object after which a re-placed one lands) to the last. `nil` when nothing was re-placed.
    private func disorderWindow(_ values: ContiguousArray<Int32>, replaced: [Int]) -> Range<Int>? {
        let placed = replaced.filter { values[$0] >= 0 }
        guard !placed.isEmpty else { return nil }
        var low = placed.min()!
        var high = placed.max()!
        for index in placed {
            let target = values[index]
            // Kept objects are in increasing order of after index: the first one above `target` / last one below.
            var cursor = low
            while cursor > 0 && (values[cursor - 1] < 0 || values[cursor - 1] > target) { cursor -= 1 }
            low = cursor
            cursor = high
            while cursor < values.count - 1 && (values[cursor + 1] < 0 || values[cursor + 1] < target) { cursor += 1 }
            high = cursor
        }
        return low..<(high + 1)
    }
}
