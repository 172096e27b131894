import AssetStore
import Foundation

/// One computation of ``ChangeDetailsEngine`` in one order.
struct ChangeDetailsComputation<Order: KeyOrder> {
    let engine: ChangeDetailsEngine
    let order: Order
    var before: SortedIdentifiers { engine.before }
    var query: StoreQuery { engine.query }
    var count: Int { engine.before.count }

    typealias Key = Order.Key

    struct Candidate {
        var key: Key
        var id: Int64
        /// Before index when the object was already in the result (its sort key changed), else -1.
        var beforeIndex: Int
        var afterIndex = -1
    }

    /// Kept objects (in the result before and after, not re-placed) that are consecutive in both lists.
    struct KeptStretch {
        var before: Int
        var after: Int
        var count: Int
    }

    @inline(__always)
    func precedes(_ a: Candidate, _ b: Candidate) -> Bool { order.precedes(a.key, a.id, b.key, b.id) }

    /// Puts `elements` in the query's order: by radix when the order has an image and there are enough of them
    /// to gain from it, by comparisons otherwise (both sorts are stable: the same order either way).
    func sortInOrder<Element>(
        _ elements: inout [Element], key: (Element) -> Key, id: (Element) -> Int64
    ) {
        let order = self.order
        if elements.count >= 2048, let first = elements.first, order.radixImage(key(first), id(first)) != nil {
            radixSort(&elements) { order.radixImage(key($0), id($0))! }
        } else {
            elements.sort { order.precedes(key($0), id($0), key($1), id($1)) }
        }
    }

    // MARK: Searching the before list

    /// The first index in `range` not preceding (`key`, `id`). With `galloping`, the answer is expected near
    /// `range.lowerBound`.
    func lowerBound(_ key: Key, _ id: Int64, in range: Range<Int>, galloping: Bool = false) -> Int {
        guard !range.isEmpty else { return range.lowerBound }
        let first = before.run(containing: range.lowerBound)
        if galloping || before.runs.count == 1 {
            // Within the first run first: most answers are there.
            let end = Swift.min(before.runEnds[first], range.upperBound)
            let offset = before.runs[first].start - before.runStart(first)
            let found =
                order.lowerBound(
                    before.runs[first].chunk, key, id, in: (range.lowerBound + offset)..<(end + offset),
                    galloping: galloping) - offset
            if found < end || end == range.upperBound { return found }
            return lowerBound(key, id, in: end..<range.upperBound)
        }
        // The first run whose last element does not precede the target (the last run of the range otherwise).
        var low = first
        var high = before.run(containing: range.upperBound - 1)
        while low < high {
            let mid = (low + high) / 2
            let run = before.runs[mid]
            if order.precedes(order.key(run.chunk, run.end - 1), run.chunk.ids[run.end - 1], key, id) {
                low = mid + 1
            } else {
                high = mid
            }
        }
        let start = Swift.max(before.runStart(low), range.lowerBound)
        let end = Swift.min(before.runEnds[low], range.upperBound)
        let offset = before.runs[low].start - before.runStart(low)
        return order.lowerBound(
            before.runs[low].chunk, key, id, in: (start + offset)..<(end + offset), galloping: false) - offset
    }

    /// An object to find in the before list: its before key and identifier.
    struct Target {
        var key: Key
        var id: Int64
    }

    /// The before indexes of `targets` (as ``locate(_:horizon:)``), sorting them in the order first: they are then
    /// found in one forward sweep of galloping searches. The result is in the sorted order of `targets`.
    func locate(_ targets: inout [Target], horizon: (key: Key, id: Int64)?) -> [Int?] {
        sortInOrder(&targets, key: { $0.key }, id: { $0.id })
        var result: [Int?] = []
        result.reserveCapacity(targets.count)
        var cursor = 0
        for target in targets {
            let index = lowerBound(target.key, target.id, in: cursor..<count, galloping: true)
            cursor = index
            if index < count && before.id(at: index) == target.id {
                result.append(index)
            } else {
                result.append(locate(target.id, horizon: horizon))  // not where its record says
            }
        }
        return result
    }

    /// The before index of `id`, using its before-record's sort position (O(log n)) when known.
    func locate(_ id: Int64, horizon: (key: Key, id: Int64)?) -> Int? {
        guard let record = engine.beforeRecords[id] else { return engine.slowIndex(id) }
        let key = order.key(of: record)
        let index = lowerBound(key, id, in: 0..<count)
        if index < count && before.id(at: index) == id { return index }
        // Not where its record says: absent, unless the snapshot is older than this change.
        guard query.predicate.matches(record) else { return nil }
        if let horizon, order.precedes(horizon.key, horizon.id, key, id) { return nil }
        return engine.slowIndex(id)
    }

    // MARK: Building the after list

    /// The after list under construction: runs sharing the before list's chunks, or one new flat chunk.
    struct AfterList {
        let order: Order
        let flat: Bool
        var list: SortedIdentifiers
        var ids = ContiguousArray<Int64>()
        var keys: Order.Keys

        init(order: Order, columnKinds: [SortColumn], flat: Bool, capacity: Int) {
            self.order = order
            self.flat = flat
            list = SortedIdentifiers(columnKinds: columnKinds)
            keys = order.makeKeys(capacity: flat ? capacity : 0)
            if flat { ids.reserveCapacity(capacity) }
        }

        var count: Int { flat ? ids.count : list.count }

        mutating func append(_ source: SortedIdentifiers, _ range: Range<Int>) {
            if flat {
                source.forEachRun(in: range) { chunk, positions, _ in append(chunk, positions) }
            } else {
                list.append(contentsOf: source, range)
            }
        }

        mutating func append(_ chunk: SortedChunk, _ positions: Range<Int>) {
            if flat {
                ids.append(contentsOf: chunk.ids[positions])
                order.append(chunk, positions, to: &keys)
            } else {
                list.append(chunk, positions)
            }
        }

        /// Appends one object: `chunk` position `position`, whose identifier and key are given.
        mutating func append(_ id: Int64, _ key: Order.Key, at position: Int, of chunk: SortedChunk) {
            if flat {
                ids.append(id)
                order.append(key, to: &keys)
            } else {
                list.append(chunk, position..<(position + 1))
            }
        }

        mutating func truncate(to limit: Int) {
            guard count > limit else { return }
            if flat {
                ids.removeSubrange(limit...)
                order.truncate(&keys, to: limit)
            } else {
                list.truncate(to: limit)
            }
        }

        func finished() -> SortedIdentifiers { flat ? SortedIdentifiers(ids: ids, keys: order.columns(keys)) : list }
    }

    /// A chunk holding the candidates, in order.
    func chunk(_ candidates: some Collection<Candidate>) -> SortedChunk {
        var ids = ContiguousArray<Int64>()
        ids.reserveCapacity(candidates.count)
        var keys = order.makeKeys(capacity: candidates.count)
        for candidate in candidates {
            ids.append(candidate.id)
            order.append(candidate.key, to: &keys)
        }
        return SortedChunk(ids: ids, keys: order.columns(keys))
    }

    // MARK: Placing the changed objects

    /// Where changed objects go: before indexes leaving their place, updated objects staying, objects to place.
    struct Placement {
        var skipped: [Int] = []
        var changedInPlace: [Int] = []
        var candidates: [Candidate] = []

        /// Places an object given its key after the change (`nil`: it no longer matches, or is gone) and its
        /// before index (`nil`: it was not in the result).
        mutating func place(_ id: Int64, _ key: Key?, at index: Int?, in before: SortedIdentifiers, _ order: Order) {
            guard let key else {
                if let index { skipped.append(index) }
                return
            }
            if let index {
                let (chunk, offset) = before.location(of: index)
                if order.key(chunk, offset) == key {
                    changedInPlace.append(index)
                } else {
                    skipped.append(index)
                    candidates.append(Candidate(key: key, id: id, beforeIndex: index))
                }
            } else {
                candidates.append(Candidate(key: key, id: id, beforeIndex: -1))
            }
        }
    }

    /// The before indexes of the deleted objects, and of the updated ones (not inserted) by identifier, with
    /// their count. Their before keys are read in one pass over the before-records (in storage order: far fewer
    /// cache misses than a lookup per identifier); objects without one are found by identifier.
    func locateDeletedAndUpdated(horizon: (key: Key, id: Int64)?)
        -> (skipped: [Int], updatedIndex: [Int64: Int], updatedCount: Int)
    {
        var deletedTargets: [Target] = []
        var updatedTargets: [Target] = []
        deletedTargets.reserveCapacity(engine.deleted.count)
        for (id, record) in engine.beforeRecords {
            // Keyed by updated and deleted ids only: the updated set (usually the smaller) tells them apart.
            if !engine.updated.contains(id) {
                deletedTargets.append(Target(key: order.key(of: record), id: id))
            } else if !engine.inserted.contains(id) {
                updatedTargets.append(Target(key: order.key(of: record), id: id))
            }
        }
        var skipped: [Int] = []
        skipped.reserveCapacity(engine.deleted.count + engine.updated.count)
        for case let index? in locate(&deletedTargets, horizon: horizon) { skipped.append(index) }
        if deletedTargets.count < engine.deleted.count {
            for id in engine.deleted where engine.beforeRecords[id] == nil {
                if let index = engine.slowIndex(id) { skipped.append(index) }
            }
        }
        var updatedIndex: [Int64: Int] = [:]
        updatedIndex.reserveCapacity(updatedTargets.count)
        let located = locate(&updatedTargets, horizon: horizon)  // sorts the targets
        for (target, index) in zip(updatedTargets, located) {
            if let index { updatedIndex[target.id] = index }
        }
        var updatedCount = updatedTargets.count
        if updatedCount < engine.updated.count {
            for id in engine.updated where !engine.inserted.contains(id) && engine.beforeRecords[id] == nil {
                updatedCount += 1
                if let index = engine.slowIndex(id) { updatedIndex[id] = index }
            }
        }
        return (skipped, updatedIndex, updatedCount)
    }

    /// Reads the after-records in one pass: places the inserted objects (candidates sorted in the query's order)
    /// and gathers each updated object's key after the change (`nil`: no longer matching).
    func placeInserted(horizon: (key: Key, id: Int64)?)
        -> (placement: Placement, pendingUpdated: [(id: Int64, key: Key?)])
    {
        var placement = Placement()
        var pendingUpdated: [(id: Int64, key: Key?)] = []
        placement.candidates.reserveCapacity(engine.inserted.count)
        pendingUpdated.reserveCapacity(engine.updated.count)
        var placedInserted = 0
        let tests = FieldTest.conjunction(query.predicate)
        for (id, record) in engine.afterRecords {
            // Keyed by inserted and updated ids only: the updated set (usually the smaller) tells them apart.
            let isInserted = !engine.updated.contains(id) || engine.inserted.contains(id)
            // The key and the fields tested are read out first: the record is then not held (nor copied).
            let key = order.key(of: record)
            let matches: Bool
            if let tests {
                let fields = TestedFields(record)
                matches = tests.allSatisfy { $0.holds(for: fields) }
            } else {
                // Looked up again: the loop's `record` is then only read field by field, never copied whole.
                matches = engine.afterRecords[id].map(query.predicate.matches) ?? false
            }
            if isInserted {
                placedInserted += 1
                let index = engine.isHistorical ? locate(id, horizon: horizon) : nil
                placement.place(id, matches ? key : nil, at: index, in: before, order)
            } else {
                pendingUpdated.append((id, matches ? key : nil))
            }
        }
        if placedInserted < engine.inserted.count {
            for id in engine.inserted where engine.afterRecords[id] == nil {
                let index = engine.isHistorical ? locate(id, horizon: horizon) : nil
                placement.place(id, nil, at: index, in: before, order)
            }
        }
        sortInOrder(&placement.candidates, key: { $0.key }, id: { $0.id })
        return (placement, pendingUpdated)
    }

    /// Two lists sorted in the query's order, merged.
    func merged(_ first: [Candidate], _ second: [Candidate]) -> [Candidate] {
        guard !first.isEmpty, !second.isEmpty else { return first.isEmpty ? second : first }
        var result: [Candidate] = []
        result.reserveCapacity(first.count + second.count)
        var i = 0
        var j = 0
        while i < first.count && j < second.count {
            if precedes(second[j], first[i]) {
                result.append(second[j])
                j += 1
            } else {
                result.append(first[i])
                i += 1
            }
        }
        result += first[i...]
        result += second[j...]
        return result
    }
}
