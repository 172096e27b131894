import AssetStore
import Foundation

/// How the computation reads, compares and stores the sort keys of one query's order.
protocol KeyOrder: Sendable {
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
protocol ColumnKey: Comparable {
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
struct NumericOrder<Value: ColumnKey>: KeyOrder {
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
        case .addedDate: Value.unboxed(.real(record.addedKey))
        case .duration: Value.unboxed(.real(record.duration))
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
struct GeneralOrder: KeyOrder {
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
