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

// MARK: Orders

/// How the computation reads, compares and stores the sort keys of one query's order.
private protocol KeyOrder: Sendable {
    /// One object's sort values.
    associatedtype Key: Equatable & Sendable
    /// Keys gathered for a new chunk.
    associatedtype Keys

    /// The record's key; inlined where a record is read from a collection, it copies no whole record.
    func key(of record: AssetRecord) -> Key
    func key(_ chunk: SortedChunk, _ offset: Int) -> Key
    /// Whether (`key`, `id`) comes before (`otherKey`, `otherID`).
    func precedes(_ key: Key, _ id: Int64, _ otherKey: Key, _ otherID: Int64) -> Bool
    /// An image of (`key`, `id`) whose unsigned order, high word first, is ``precedes(_:_:_:_:)``'s — for a
    /// radix sort; nil when this order has none.
    func radixImage(_ key: Key, _ id: Int64) -> (high: UInt64, low: UInt64)?
    /// The first chunk position in `positions` not preceding (`key`, `id`); with `galloping`, probes 1, 2, 4, …
    /// positions ahead first (the answer is expected near the start, and memory is touched close to it only).
    func lowerBound(_ chunk: SortedChunk, _ key: Key, _ id: Int64, in positions: Range<Int>, galloping: Bool) -> Int
    func sortValues(_ key: Key) -> [SortValue]
    func makeKeys(capacity: Int) -> Keys
    func append(_ key: Key, to keys: inout Keys)
    func append(_ chunk: SortedChunk, _ positions: Range<Int>, to keys: inout Keys)
    func truncate(_ keys: inout Keys, to count: Int)
    func columns(_ keys: Keys) -> [SortColumn]
}

/// A sort value type that one-column orders compare unboxed.
private protocol ColumnKey: Comparable {
    /// The value as an unsigned integer in the same order (equal values, equal bits).
    var orderedBits: UInt64 { get }
    /// The column's values when it holds this type.
    static func values(_ column: SortColumn) -> ContiguousArray<Self>
    static func unboxed(_ value: SortValue) -> Self
    var boxed: SortValue { get }
    static func column(_ values: ContiguousArray<Self>) -> SortColumn
}

extension Double: ColumnKey {
    var orderedBits: UInt64 { CloudAssets.orderedBits(self) }
    static func values(_ column: SortColumn) -> ContiguousArray<Double> {
        guard case .real(let values) = column else { preconditionFailure("sort column kind mismatch") }
        return values
    }
    static func unboxed(_ value: SortValue) -> Double {
        guard case .real(let value) = value else { preconditionFailure("sort value kind mismatch") }
        return value
    }
    var boxed: SortValue { .real(self) }
    static func column(_ values: ContiguousArray<Double>) -> SortColumn { .real(values) }
}

extension Int64: ColumnKey {
    var orderedBits: UInt64 { CloudAssets.orderedBits(self) }
    static func values(_ column: SortColumn) -> ContiguousArray<Int64> {
        guard case .integer(let values) = column else { preconditionFailure("sort column kind mismatch") }
        return values
    }
    static func unboxed(_ value: SortValue) -> Int64 {
        guard case .integer(let value) = value else { preconditionFailure("sort value kind mismatch") }
        return value
    }
    var boxed: SortValue { .integer(self) }
    static func column(_ values: ContiguousArray<Int64>) -> SortColumn { .integer(values) }
}

/// One numeric sort criterion (then the identifier): keys compared unboxed, columns copied as raw arrays.
private struct NumericOrder<Value: ColumnKey>: KeyOrder {
    let sortKey: StoreSortKey
    let ascending: Bool
    let idAscending: Bool

    /// As `sortKey.value(of: record)`, reading the one field inline.
    @inline(__always)
    func key(of record: AssetRecord) -> Value {
        switch sortKey {
        case .creationDate: Value.unboxed(.real(record.creationDate.timeIntervalSinceReferenceDate))
        case .modificationDate: Value.unboxed(.real(record.modificationDate.timeIntervalSinceReferenceDate))
        case .size: Value.unboxed(.integer(record.size))
        case .pixelCount: Value.unboxed(.integer(Int64(record.pixelWidth) * Int64(record.pixelHeight)))
        case .uploadState: Value.unboxed(.integer(Int64(record.uploadState.rawValue)))
        case .key: Value.unboxed(sortKey.value(of: record))
        }
    }

    @inline(__always)
    func key(_ chunk: SortedChunk, _ offset: Int) -> Value { Value.values(chunk.keys[0])[offset] }

    @inline(__always)
    func precedes(_ key: Value, _ id: Int64, _ otherKey: Value, _ otherID: Int64) -> Bool {
        key != otherKey ? (key < otherKey) == ascending : (idAscending ? id < otherID : id > otherID)
    }

    @inline(__always)
    func radixImage(_ key: Value, _ id: Int64) -> (high: UInt64, low: UInt64)? {
        let keyBits = key.orderedBits
        let idBits = id.orderedBits
        return (ascending ? keyBits : ~keyBits, idAscending ? idBits : ~idBits)
    }

    func lowerBound(_ chunk: SortedChunk, _ key: Value, _ id: Int64, in positions: Range<Int>, galloping: Bool)
        -> Int
    {
        Value.values(chunk.keys[0]).withUnsafeBufferPointer { keys in
            chunk.ids.withUnsafeBufferPointer { ids in
                var low = positions.lowerBound
                var high = positions.upperBound
                if galloping {
                    var probe = low
                    var step = 1
                    while probe < high, precedes(keys[probe], ids[probe], key, id) {
                        low = probe + 1
                        probe = low + step
                        step <<= 1
                    }
                    high = Swift.min(probe, high)
                }
                while low < high {
                    let mid = (low + high) / 2
                    if precedes(keys[mid], ids[mid], key, id) { low = mid + 1 } else { high = mid }
                }
                return low
            }
        }
    }

    func sortValues(_ key: Value) -> [SortValue] { [key.boxed] }
    func makeKeys(capacity: Int) -> ContiguousArray<Value> {
        var keys = ContiguousArray<Value>()
        keys.reserveCapacity(capacity)
        return keys
    }
    func append(_ key: Value, to keys: inout ContiguousArray<Value>) { keys.append(key) }
    func append(_ chunk: SortedChunk, _ positions: Range<Int>, to keys: inout ContiguousArray<Value>) {
        keys.append(contentsOf: Value.values(chunk.keys[0])[positions])
    }
    func truncate(_ keys: inout ContiguousArray<Value>, to count: Int) { keys.removeSubrange(count...) }
    func columns(_ keys: ContiguousArray<Value>) -> [SortColumn] { [Value.column(keys)] }
}

/// Any order: each criterion in turn, then the identifier.
private struct GeneralOrder: KeyOrder {
    let query: StoreQuery

    func key(of record: AssetRecord) -> [SortValue] { query.sort.map { $0.key.value(of: record) } }
    func key(_ chunk: SortedChunk, _ offset: Int) -> [SortValue] { chunk.keys.map { $0[offset] } }

    func precedes(_ key: [SortValue], _ id: Int64, _ otherKey: [SortValue], _ otherID: Int64) -> Bool {
        for (index, criterion) in query.sort.enumerated() where key[index] != otherKey[index] {
            return (key[index] < otherKey[index]) == criterion.ascending
        }
        return query.idAscending ? id < otherID : id > otherID
    }

    func radixImage(_ key: [SortValue], _ id: Int64) -> (high: UInt64, low: UInt64)? { nil }

    /// Whether chunk position `offset` comes before (`key`, `id`), without gathering its values.
    private func element(_ chunk: SortedChunk, _ offset: Int, precedes key: [SortValue], _ id: Int64) -> Bool {
        for (column, criterion) in query.sort.enumerated() {
            let value = chunk.keys[column][offset]
            if value != key[column] { return (value < key[column]) == criterion.ascending }
        }
        return query.idAscending ? chunk.ids[offset] < id : chunk.ids[offset] > id
    }

    func lowerBound(_ chunk: SortedChunk, _ key: [SortValue], _ id: Int64, in positions: Range<Int>, galloping: Bool)
        -> Int
    {
        var low = positions.lowerBound
        var high = positions.upperBound
        while low < high {
            let mid = (low + high) / 2
            if element(chunk, mid, precedes: key, id) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    func sortValues(_ key: [SortValue]) -> [SortValue] { key }
    func makeKeys(capacity: Int) -> [SortColumn] {
        query.sort.map {
            var column = SortColumn(for: $0.key)
            column.reserveCapacity(capacity)
            return column
        }
    }
    func append(_ key: [SortValue], to keys: inout [SortColumn]) {
        for column in keys.indices { keys[column].append(key[column]) }
    }
    func append(_ chunk: SortedChunk, _ positions: Range<Int>, to keys: inout [SortColumn]) {
        for column in keys.indices { keys[column].append(contentsOf: chunk.keys[column], positions) }
    }
    func truncate(_ keys: inout [SortColumn], to count: Int) {
        for column in keys.indices {
            var kept = keys[column].emptyOfSameKind
            kept.append(contentsOf: keys[column], 0..<count)
            keys[column] = kept
        }
    }
    func columns(_ keys: [SortColumn]) -> [SortColumn] { keys }
}

// MARK: Computation

/// One computation of ``ChangeDetailsEngine`` in one order.
private struct ChangeDetailsComputation<Order: KeyOrder> {
    let engine: ChangeDetailsEngine
    let order: Order
    var before: SortedIdentifiers { engine.before }
    var query: StoreQuery { engine.query }
    var count: Int { engine.before.count }

    typealias Key = Order.Key

    private struct Candidate {
        var key: Key
        var id: Int64
        /// Before index when the object was already in the result (its sort key changed), else -1.
        var beforeIndex: Int
        var afterIndex = -1
    }

    /// Kept objects (in the result before and after, not re-placed) that are consecutive in both lists.
    private struct KeptStretch {
        var before: Int
        var after: Int
        var count: Int
    }

    @inline(__always)
    private func precedes(_ a: Candidate, _ b: Candidate) -> Bool { order.precedes(a.key, a.id, b.key, b.id) }

    /// Puts `elements` in the query's order: by radix when the order has an image and there are enough of them
    /// to gain from it, by comparisons otherwise (both sorts are stable: the same order either way).
    private func sortInOrder<Element>(
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
    private func lowerBound(_ key: Key, _ id: Int64, in range: Range<Int>, galloping: Bool = false) -> Int {
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
    private struct Target {
        var key: Key
        var id: Int64
    }

    /// The before indexes of `targets` (as ``locate(_:horizon:)``), sorting them in the order first: they are then
    /// found in one forward sweep of galloping searches. The result is in the sorted order of `targets`.
    private func locate(_ targets: inout [Target], horizon: (key: Key, id: Int64)?) -> [Int?] {
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
    private func locate(_ id: Int64, horizon: (key: Key, id: Int64)?) -> Int? {
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
    private struct AfterList {
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
    private func chunk(_ candidates: some Collection<Candidate>) -> SortedChunk {
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
    private struct Placement {
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
    private func locateDeletedAndUpdated(horizon: (key: Key, id: Int64)?)
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
    private func placeInserted(horizon: (key: Key, id: Int64)?)
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
    private func merged(_ first: [Candidate], _ second: [Candidate]) -> [Candidate] {
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

    // MARK: Computing

    func compute() throws -> ComputedDetails {
        let limit = query.limit
        // The result may have been cut by the limit: beyond its last element, the store knows more.
        var horizon: (key: Key, id: Int64)?
        if let limit, count >= limit, count > 0 {
            let (chunk, offset) = before.location(of: count - 1)
            horizon = (order.key(chunk, offset), chunk.ids[offset])
        }

        // Two independent halves, side by side when large: the before side finds the deleted and updated objects
        // in the before list, the after side reads the after-records (placing the inserted objects, which need
        // nothing from the before side). The updated objects are placed once both are done. An id can be both
        // inserted and updated only in a history entry; it is handled once, as inserted.
        let beforeSide: (skipped: [Int], updatedIndex: [Int64: Int], updatedCount: Int)
        let afterSide: Placement
        let pendingUpdated: [(id: Int64, key: Key?)]
        if engine.beforeRecords.count + engine.afterRecords.count < ChangeDetailsEngine.concurrencyThreshold {
            beforeSide = locateDeletedAndUpdated(horizon: horizon)
            (afterSide, pendingUpdated) = placeInserted(horizon: horizon)
        } else {
            let computation = SideBox(self)
            let start = SideBox(horizon)
            let beforeBox = SideBox((skipped: [Int](), updatedIndex: [Int64: Int](), updatedCount: 0))
            let afterBox = SideBox((placement: Placement(), pendingUpdated: [(id: Int64, key: Key?)]()))
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 {
                    beforeBox.value = computation.value.locateDeletedAndUpdated(horizon: start.value)
                } else {
                    afterBox.value = computation.value.placeInserted(horizon: start.value)
                }
            }
            beforeSide = beforeBox.value
            afterSide = afterBox.value.placement
            pendingUpdated = afterBox.value.pendingUpdated
        }
        var updated = Placement()
        updated.candidates.reserveCapacity(pendingUpdated.count)
        for (id, key) in pendingUpdated { updated.place(id, key, at: beforeSide.updatedIndex[id], in: before, order) }
        if pendingUpdated.count < beforeSide.updatedCount {
            for id in engine.updated where !engine.inserted.contains(id) && engine.afterRecords[id] == nil {
                updated.place(id, nil, at: beforeSide.updatedIndex[id], in: before, order)
            }
        }
        sortInOrder(&updated.candidates, key: { $0.key }, id: { $0.id })
        // Before indexes leaving their place (removed or re-placed), sorted below; updated objects kept where they
        // were; the objects to place, in the query's order.
        var skipped = beforeSide.skipped + afterSide.skipped + updated.skipped
        let changedInPlace = afterSide.changedInPlace + updated.changedInPlace
        var candidates = merged(afterSide.candidates, updated.candidates)
        var removedByLimit: [Int] = []
        skipped.sort()
        if skipped.count > 1 {  // an index leaves its place once
            var unique = 1
            for index in 1..<skipped.count where skipped[index] != skipped[unique - 1] {
                skipped[unique] = skipped[index]
                unique += 1
            }
            skipped.removeSubrange(unique...)
        }

        // Candidates past the horizon are not known to belong; they compete with the store's rows there.
        var beyond: [Candidate] = []
        if let horizon,
            let firstBeyond = candidates.firstIndex(where: { order.precedes(horizon.key, horizon.id, $0.key, $0.id) })
        {
            beyond = Array(candidates[firstBeyond...])
            candidates.removeSubrange(firstBeyond...)
        }

        // Merge the kept elements (in before order) with the placed candidates.
        let placedChunk = chunk(candidates)
        let flat = before.runs.count + skipped.count + 2 * candidates.count + 1 > ChangeDetailsEngine.maximumRuns
        var after = AfterList(
            order: order, columnKinds: query.sort.map { SortColumn(for: $0.key) }, flat: flat,
            capacity: count - skipped.count + candidates.count)
        var kept: [KeptStretch] = []

        func appendKept(_ range: Range<Int>) {
            guard !range.isEmpty else { return }
            kept.append(KeptStretch(before: range.lowerBound, after: after.count, count: range.count))
            after.append(before, range)
        }
        func appendCandidate(_ index: Int, from chunk: SortedChunk, at position: Int) {
            candidates[index].afterIndex = after.count
            after.append(candidates[index].id, candidates[index].key, at: position, of: chunk)
        }

        var next = 0
        var segmentStart = 0
        for boundary in skipped + [count] {
            var cursor = segmentStart
            while next < candidates.count {
                let insertion = lowerBound(
                    candidates[next].key, candidates[next].id, in: cursor..<boundary, galloping: true)
                if insertion == boundary { break }
                appendKept(cursor..<insertion)
                cursor = insertion
                appendCandidate(next, from: placedChunk, at: next)
                next += 1
            }
            appendKept(cursor..<boundary)
            segmentStart = boundary + 1
        }
        while next < candidates.count {
            appendCandidate(next, from: placedChunk, at: next)
            next += 1
        }

        // Limit: cut the tail, or fill from beyond the old end.
        if let limit {
            if after.count > limit {
                after.truncate(to: limit)
                while let last = kept.last, last.after + last.count > limit {
                    let remaining = Swift.max(0, limit - last.after)
                    removedByLimit.append(contentsOf: (last.before + remaining)..<(last.before + last.count))
                    if remaining > 0 {
                        kept[kept.count - 1].count = remaining
                        break
                    }
                    kept.removeLast()
                }
                for index in candidates.indices where candidates[index].afterIndex >= limit {
                    candidates[index].afterIndex = -1
                }
            }
            if let horizon, after.count < limit {
                let needed = limit - after.count
                let affected = engine.inserted.union(engine.updated).union(engine.deleted)
                let position = SortPosition(values: order.sortValues(horizon.key), id: horizon.id)
                let stored = try engine.fill(position, affected, needed).map {
                    Candidate(key: order.key(of: $0), id: $0.id ?? 0, beforeIndex: -1)
                }
                var merged = (stored + beyond).sorted(by: precedes)
                if merged.count > needed { merged.removeSubrange(needed...) }
                let filledChunk = chunk(merged)
                for (position, candidate) in merged.enumerated() {
                    candidates.append(candidate)
                    appendCandidate(candidates.count - 1, from: filledChunk, at: position)
                }
            }
            // Objects of the before result that went past the end and were not taken back are removed (they are
            // among the skipped indexes, as no placed candidate has their before index).
        }

        var details = ComputedDetails(after: after.finished())
        var replaced: [KeptStretch] = []  // re-placed objects, one each, in after order
        for candidate in candidates where candidate.afterIndex >= 0 {
            if candidate.beforeIndex >= 0 {
                replaced.append(KeptStretch(before: candidate.beforeIndex, after: candidate.afterIndex, count: 1))
                details.changed.append(candidate.afterIndex)
            } else {
                details.inserted.append(candidate.afterIndex)  // ascending: candidates are placed in order
            }
        }
        // Removed: the skipped indexes that were not placed again, and the kept ones cut by the limit.
        var replacedBefore = replaced.map(\.before)
        replacedBefore.sort()
        details.removed.reserveCapacity(skipped.count - replacedBefore.count + removedByLimit.count)
        var r = 0
        for index in skipped {
            while r < replacedBefore.count && replacedBefore[r] < index { r += 1 }
            if r < replacedBefore.count && replacedBefore[r] == index { continue }
            details.removed.append(index)
        }
        if !removedByLimit.isEmpty {
            details.removed += removedByLimit
            details.removed.sort()
        }
        for index in changedInPlace {
            if let afterIndex = afterIndex(ofKept: index, in: kept) { details.changed.append(afterIndex) }
        }
        details.changed.sort()
        details.moves = moves(kept: kept, replaced: replaced, inserted: details.inserted)
        return details
    }

    /// The after index of a kept before index, or `nil` when it is in no stretch (cut by the limit).
    private func afterIndex(ofKept index: Int, in kept: [KeptStretch]) -> Int? {
        var low = 0
        var high = kept.count
        while low < high {  // the first stretch starting after `index`
            let mid = (low + high) / 2
            if kept[mid].before <= index { low = mid + 1 } else { high = mid }
        }
        guard low > 0, index < kept[low - 1].before + kept[low - 1].count else { return nil }
        return kept[low - 1].after + index - kept[low - 1].before
    }

    /// Minimal moves: every common object (in both lists) outside a longest chain of objects whose before and
    /// after orders agree moves. `from` is its index in the intermediate list, where common objects fill, in before
    /// order, the indexes not taken by insertions.
    ///
    /// The chain is found over items rather than objects: each kept stretch is one item weighing its length (its
    /// objects are consecutive in both lists, and every other common object is before or after all of them in
    /// each list, so a longest chain takes all of a stretch or none), each re-placed object one of weight 1.
    private func moves(kept: [KeptStretch], replaced: [KeptStretch], inserted: [Int]) -> [ComputedMove] {
        guard !replaced.isEmpty else { return [] }  // kept objects keep their order
        // After ranks: kept stretches and re-placed objects are each in after order; merge them.
        var keptRank = [Int32](repeating: 0, count: kept.count)
        var replacedRank = [Int32](repeating: 0, count: replaced.count)
        var k = 0
        var r = 0
        var rank: Int32 = 0
        while k < kept.count || r < replaced.count {
            if r == replaced.count || (k < kept.count && kept[k].after < replaced[r].after) {
                keptRank[k] = rank
                k += 1
            } else {
                replacedRank[r] = rank
                r += 1
            }
            rank += 1
        }
        // Items in before order: kept stretches (already), re-placed objects sorted by before index.
        var replacedOrder = Array(replaced.indices)
        replacedOrder.sort { replaced[$0].before < replaced[$1].before }
        var items: [KeptStretch] = []
        var ranks: [Int32] = []
        items.reserveCapacity(kept.count + replaced.count)
        ranks.reserveCapacity(kept.count + replaced.count)
        k = 0
        r = 0
        while k < kept.count || r < replacedOrder.count {
            if r == replacedOrder.count || (k < kept.count && kept[k].before < replaced[replacedOrder[r]].before) {
                items.append(kept[k])
                ranks.append(keptRank[k])
                k += 1
            } else {
                items.append(replaced[replacedOrder[r]])
                ranks.append(replacedRank[replacedOrder[r]])
                r += 1
            }
        }
        let chain = heaviestIncreasingChain(ranks) { items[$0].count }

        var result: [ComputedMove] = []
        var common = 0  // common objects before the current one, in before order
        var insertedBelow = 0
        for (item, stretch) in items.enumerated() {
            if chain[item] {
                common += stretch.count
                continue
            }
            for offset in 0..<stretch.count {
                while insertedBelow < inserted.count && inserted[insertedBelow] <= common + insertedBelow {
                    insertedBelow += 1
                }
                result.append(
                    ComputedMove(
                        from: common + insertedBelow, beforeIndex: stretch.before + offset, to: stretch.after + offset))
                common += 1
            }
        }
        return result
    }
}

/// Marks a heaviest strictly increasing subsequence of `ranks` (distinct values in `0..<ranks.count`), element
/// `i` weighing `weight(i)` (> 0): `true` for its members. O(m log m) with a Fenwick tree of prefix maxima.
func heaviestIncreasingChain(_ ranks: [Int32], weight: (Int) -> Int) -> [Bool] {
    let count = ranks.count
    var member = [Bool](repeating: false, count: count)
    guard count > 0 else { return member }
    // Node i (1-based) covers ranks (i - lowbit(i), i]: the heaviest chain ending at one of them, and its end.
    var nodeWeight = [Int](repeating: 0, count: count + 1)
    var nodeEnd = [Int32](repeating: -1, count: count + 1)
    var previous = [Int32](repeating: -1, count: count)
    var top = (weight: 0, element: Int32(-1))
    nodeWeight.withUnsafeMutableBufferPointer { nodeWeight in
        nodeEnd.withUnsafeMutableBufferPointer { nodeEnd in
            for element in 0..<count {
                // The heaviest chain over ranks below this one.
                var node = Int(ranks[element])
                var best = 0
                var end: Int32 = -1
                while node > 0 {
                    if nodeWeight[node] > best {
                        best = nodeWeight[node]
                        end = nodeEnd[node]
                    }
                    node &= node - 1
                }
                previous[element] = end
                best += weight(element)
                if best > top.weight { top = (best, Int32(element)) }
                node = Int(ranks[element]) + 1
                while node <= count {
                    if best > nodeWeight[node] {
                        nodeWeight[node] = best
                        nodeEnd[node] = Int32(element)
                    }
                    node += node & -node
                }
            }
        }
    }
    var cursor = top.element
    while cursor >= 0 {
        member[Int(cursor)] = true
        cursor = previous[Int(cursor)]
    }
    return member
}

/// A predicate that is a conjunction of field tests, evaluated inline where a record is read from a collection:
/// a record handed to a function is copied whole (field by field, through its value witnesses), which costs more
/// than the rest of its handling. Each test has the meaning of the ``StorePredicate`` case of the same name.
private enum FieldTest {
    case mediaType(Set<MediaType>)
    case creationDate(Range<Date>)
    case modificationDate(Range<Date>)
    case availability(Set<StoredAvailability>)
    case currentAvailability(Set<StoredAvailability>)
    case isFavorite(Bool)
    case isHidden(Bool)
    case isTrashed(Bool)
    case uploadState(Set<StoredUploadState>)

    /// The tests whose conjunction is `predicate`, or `nil` when it is not such a conjunction.
    static func conjunction(_ predicate: StorePredicate) -> [FieldTest]? {
        switch predicate {
        case .all: return []
        case .and(let list):
            var tests: [FieldTest] = []
            for predicate in list {
                guard let inner = conjunction(predicate) else { return nil }
                tests += inner
            }
            return tests
        case .mediaType(let set): return [.mediaType(set)]
        case .creationDate(let range): return [.creationDate(range)]
        case .modificationDate(let range): return [.modificationDate(range)]
        case .availability(let set): return [.availability(set)]
        case .currentAvailability(let set): return [.currentAvailability(set)]
        case .isFavorite(let value): return [.isFavorite(value)]
        case .isHidden(let value): return [.isHidden(value)]
        case .isTrashed(let value): return [.isTrashed(value)]
        case .uploadState(let set): return [.uploadState(set)]
        case .keyPrefix, .ids, .or, .not: return nil
        }
    }

    func holds(for fields: TestedFields) -> Bool {
        switch self {
        case .mediaType(let set): set.contains(fields.mediaType)
        case .creationDate(let range): range.contains(fields.creationDate)
        case .modificationDate(let range): range.contains(fields.modificationDate)
        case .availability(let set): set.contains(fields.availability)
        case .currentAvailability(let set): set.contains(fields.currentAvailability)
        case .isFavorite(let value): fields.isFavorite == value
        case .isHidden(let value): fields.isHidden == value
        case .isTrashed(let value): fields.isTrashed == value
        case .uploadState(let set): set.contains(fields.uploadState)
        }
    }
}

/// The fields of a record that ``FieldTest``s read (no references: copied for free).
private struct TestedFields {
    var mediaType: MediaType
    var creationDate: Date
    var modificationDate: Date
    var availability: StoredAvailability
    var currentAvailability: StoredAvailability
    var isFavorite: Bool
    var isHidden: Bool
    var isTrashed: Bool
    var uploadState: StoredUploadState

    @inline(__always)
    init(_ record: AssetRecord) {
        mediaType = record.mediaType
        creationDate = record.creationDate
        modificationDate = record.modificationDate
        availability = record.availability
        currentAvailability = record.currentAvailability
        isFavorite = record.isFavorite
        isHidden = record.isHidden
        isTrashed = record.trashedDate != nil  // `AssetRecord.isTrashed`
        uploadState = record.uploadState
    }
}

/// A value handed to and from the two sides of `DispatchQueue.concurrentPerform`. Unchecked: the sides only read
/// the shared inputs, each writes only its own box, and `concurrentPerform` returns once both are done.
final class SideBox<Value>: @unchecked Sendable {
    var value: Value

    init(_ value: Value) { self.value = value }
}
