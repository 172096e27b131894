import Foundation
import GRDB

/// Identifiers in query order with their sort key values, as a fetch result keeps them.
public struct SortedIdentifiers: Sendable {
    /// The identifiers, in query order.
    public var ids: ContiguousArray<Int64>
    /// One column per sort criterion: `keys[c][i]` is the value of criterion `c` for `ids[i]`.
    public var keys: [ContiguousArray<SortValue>]

    public init(ids: ContiguousArray<Int64> = [], keys: [ContiguousArray<SortValue>] = []) {
        self.ids = ids
        self.keys = keys
    }
}

/// Reads. Each call runs on a reader connection and sees the last committed state; none waits for a writer.
extension AssetStore {
    /// The identifiers matching `query`, in its order.
    public func fetchIDs(_ query: StoreQuery) throws -> [Int64] {
        var arguments = StatementArguments()
        let sql = Self.selectSQL(columns: "id", query, &arguments)
        return try read { db in try Int64.fetchAll(db, sql: sql, arguments: arguments) }
    }

    /// The identifiers matching `query` with their sort key values (what a fetch result needs for change details).
    public func fetchSorted(_ query: StoreQuery) throws -> SortedIdentifiers {
        var arguments = StatementArguments()
        let columns = (["id"] + query.sort.map(\.key.sqlExpression)).joined(separator: ", ")
        let sql = Self.selectSQL(columns: columns, query, &arguments)
        return try read { db in
            if query.sort.isEmpty {
                return SortedIdentifiers(ids: ContiguousArray(try Int64.fetchAll(db, sql: sql, arguments: arguments)))
            }
            var result = SortedIdentifiers(keys: Array(repeating: [], count: query.sort.count))
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() {
                result.ids.append(row[0])
                for (column, sort) in query.sort.enumerated() {
                    result.keys[column].append(Self.sortValue(sort.key, row, column + 1))
                }
            }
            return result
        }
    }

    private static func sortValue(_ key: StoreSortKey, _ row: Row, _ index: Int) -> SortValue {
        switch key {
        case .creationDate, .modificationDate: .real(row[index])
        case .key: .text(row[index])
        case .size, .pixelCount: .integer(row[index])
        }
    }

    static func selectSQL(columns: String, _ query: StoreQuery, _ arguments: inout StatementArguments) -> String {
        var sql = "SELECT \(columns) FROM asset"
        if query.predicate != .all { sql += " WHERE " + query.predicate.sql(into: &arguments) }
        sql += " ORDER BY " + query.orderSQL
        if let limit = query.limit {
            sql += " LIMIT ?"
            arguments += [max(0, limit)]
        }
        return sql
    }

    /// The records with these identifiers, in the order given; identifiers with no row are skipped.
    public func records(ids: some Collection<Int64>) throws -> [AssetRecord] {
        guard !ids.isEmpty else { return [] }
        let found: [Int64: AssetRecord] = try read { db in
            var byID: [Int64: AssetRecord] = [:]
            byID.reserveCapacity(ids.count)
            let all = Array(ids)
            for start in stride(from: 0, to: all.count, by: 500) {
                let batch = all[start..<min(start + 500, all.count)]
                let sql =
                    "SELECT \(AssetRecord.selectColumns) FROM asset WHERE id IN ("
                    + Array(repeating: "?", count: batch.count).joined(separator: ",") + ")"
                let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(Array(batch)))
                while let row = try rows.next() {
                    let record = try AssetRecord(row: row)
                    byID[record.id!] = record
                }
            }
            return byID
        }
        return ids.compactMap { found[$0] }
    }

    /// The record with this identifier, or `nil`.
    public func record(id: Int64) throws -> AssetRecord? {
        try records(ids: [id]).first
    }

    /// The record with this bucket key, or `nil`.
    public func record(key: String) throws -> AssetRecord? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(AssetRecord.selectColumns) FROM asset WHERE key = ?", arguments: [key]
            ).map(AssetRecord.init(row:))
        }
    }

    /// The number of assets.
    public var count: Int {
        get throws { try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM asset") ?? 0 } }
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try pool.read(body)
        } catch let error as DatabaseError {
            throw Self.translate(error, path: databaseURL.path)
        }
    }
}
