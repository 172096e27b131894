import Foundation

/// A column asset lists can be sorted by.
package enum StoreSortKey: Sendable, Hashable, CaseIterable {
    case creationDate, modificationDate, key, size, pixelCount, uploadState
    /// When the asset was added to the bucket (``AssetRecord/addedKey``: those not listed yet last).
    case addedDate
    /// A video's length (0 for other assets).
    case duration

    var sqlExpression: String {
        switch self {
        case .creationDate: "creationDate"
        case .modificationDate: "modificationDate"
        case .key: "key"
        case .size: "size"
        case .pixelCount: "(pixelWidth * pixelHeight)"
        case .uploadState: "uploadState"
        case .addedDate: AssetRecord.addedKeySQL
        case .duration: "duration"
        }
    }

    /// The record's value for this key.
    package func value(of record: AssetRecord) -> SortValue {
        switch self {
        case .creationDate: .real(record.creationDate.timeIntervalSinceReferenceDate)
        case .modificationDate: .real(record.modificationDate.timeIntervalSinceReferenceDate)
        case .key: .text(record.key)
        case .size: .integer(record.size)
        case .pixelCount: .integer(record.pixelCount)
        case .uploadState: .integer(Int64(record.uploadState.rawValue))
        case .addedDate: .real(record.addedKey)
        case .duration: .real(record.duration)
        }
    }
}

/// One sort criterion.
package struct StoreSort: Sendable, Hashable {
    package var key: StoreSortKey
    package var ascending: Bool

    package init(_ key: StoreSortKey, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}

/// A sort key value, ordered the way SQLite orders the column (text compares UTF-8 bytes, like `BINARY`).
package enum SortValue: Sendable, Hashable, Comparable {
    case real(Double)
    case integer(Int64)
    case text(String)

    package static func < (lhs: SortValue, rhs: SortValue) -> Bool {
        switch (lhs, rhs) {
        case (.real(let a), .real(let b)): a < b
        case (.integer(let a), .integer(let b)): a < b
        case (.text(let a), .text(let b)): a.utf8.lexicographicallyPrecedes(b.utf8)
        case (.integer, _): true
        case (.real, .text): true
        default: false
        }
    }
}

/// The query the store runs for a fetch: filter, order, limit.
///
/// The order is the sort criteria followed by the identifier, in the direction of the last criterion (ascending
/// when there is none), so it is total and stable.
package struct StoreQuery: Sendable, Hashable {
    package var predicate: StorePredicate
    package var sort: [StoreSort]
    package var limit: Int?

    package init(predicate: StorePredicate = .all, sort: [StoreSort] = [], limit: Int? = nil) {
        self.predicate = predicate
        self.sort = sort
        self.limit = limit
    }

    /// Direction of the identifier tie-break.
    package var idAscending: Bool { sort.last?.ascending ?? true }

    var orderSQL: String {
        let terms = sort.map { "\($0.key.sqlExpression) \($0.ascending ? "ASC" : "DESC")" }
        return (terms + ["id \(idAscending ? "ASC" : "DESC")"]).joined(separator: ", ")
    }
}
