import Foundation
import GRDB

/// A position in a query's order: the sort key values and the identifier of one row.
package struct SortPosition: Sendable, Hashable {
    package var values: [SortValue]
    package var id: Int64

    package init(values: [SortValue], id: Int64) {
        self.values = values
        self.id = id
    }
}

extension StoreQuery {
    /// Compares two positions in this query's order (`<` means "comes first").
    package func precedes(_ lhs: SortPosition, _ rhs: SortPosition) -> Bool {
        for (index, criterion) in sort.enumerated() where lhs.values[index] != rhs.values[index] {
            return (lhs.values[index] < rhs.values[index]) == criterion.ascending
        }
        return idAscending ? lhs.id < rhs.id : lhs.id > rhs.id
    }

    /// The position of `record` in this query's order.
    package func position(of record: AssetRecord) -> SortPosition {
        SortPosition(values: sort.map { $0.key.value(of: record) }, id: record.id ?? 0)
    }

    /// SQL selecting rows strictly after `position` in this order.
    func keysetSQL(after position: SortPosition, _ arguments: inout StatementArguments) -> String {
        // k1 > v1 OR (k1 = v1 AND (k2 > v2 OR (k2 = v2 AND id > vid))), with < for descending criteria.
        var sql = "id \(idAscending ? ">" : "<") ?"
        var values: [(any DatabaseValueConvertible)?] = [position.id]
        for (index, criterion) in sort.enumerated().reversed() {
            let value = position.values[index].databaseValue
            let expression = criterion.key.sqlExpression
            sql = "(\(expression) \(criterion.ascending ? ">" : "<") ? OR (\(expression) = ? AND \(sql)))"
            values = [value, value] + values
        }
        arguments += StatementArguments(values)
        return sql
    }
}

extension SortValue {
    var databaseValue: DatabaseValue {
        switch self {
        case .real(let value): value.databaseValue
        case .integer(let value): value.databaseValue
        case .text(let value): value.databaseValue
        }
    }
}

extension AssetStore {
    /// The first `limit` rows matching `query` that come strictly after `position` in its order, skipping
    /// `excluding`, with their records.
    package func fetchRecords(_ query: StoreQuery, after position: SortPosition?, excluding: Set<Int64>, limit: Int)
        throws -> [AssetRecord]
    {
        guard limit > 0 else { return [] }
        var arguments = StatementArguments()
        var conditions = [query.predicate.sql(into: &arguments)]
        if let position { conditions.append(query.keysetSQL(after: position, &arguments)) }
        if !excluding.isEmpty { conditions.append("NOT (" + StorePredicate.ids(excluding).sql(into: &arguments) + ")") }
        let sql =
            "SELECT \(AssetRecord.selectColumns) FROM asset WHERE " + conditions.joined(separator: " AND ")
            + " ORDER BY " + query.orderSQL + " LIMIT ?"
        arguments += [limit]
        return try read { db in try Self.records(db, sql: sql, arguments: arguments, capacity: limit) }
    }
}
