import Foundation
import GRDB

/// The values of one sort criterion for every identifier of a fetch, stored unboxed for cheap copies.
package enum SortColumn: Sendable {
    case real(ContiguousArray<Double>)
    case integer(ContiguousArray<Int64>)
    case text(ContiguousArray<String>)

    /// An empty column of the kind `key` produces.
    package init(for key: StoreSortKey) {
        switch key {
        case .creationDate, .modificationDate, .addedDate, .duration: self = .real([])
        case .key: self = .text([])
        case .size, .pixelCount, .uploadState: self = .integer([])
        }
    }

    package var count: Int {
        switch self {
        case .real(let values): values.count
        case .integer(let values): values.count
        case .text(let values): values.count
        }
    }

    package subscript(index: Int) -> SortValue {
        switch self {
        case .real(let values): .real(values[index])
        case .integer(let values): .integer(values[index])
        case .text(let values): .text(values[index])
        }
    }

    /// Appends a value of the column's kind (a value of another kind is a programming error).
    package mutating func append(_ value: SortValue) {
        // Each case moves the array out of `self` first so the append happens in place (no copy).
        switch value {
        case .real(let new):
            guard case .real(var values) = self else { preconditionFailure("sort value kind mismatch") }
            self = .integer([])
            values.append(new)
            self = .real(values)
        case .integer(let new):
            guard case .integer(var values) = self else { preconditionFailure("sort value kind mismatch") }
            self = .real([])
            values.append(new)
            self = .integer(values)
        case .text(let new):
            guard case .text(var values) = self else { preconditionFailure("sort value kind mismatch") }
            self = .real([])
            values.append(new)
            self = .text(values)
        }
    }

    /// Appends `other[range]` (same kind).
    package mutating func append(contentsOf other: SortColumn, _ range: Range<Int>) {
        switch other {
        case .real(let source):
            guard case .real(var values) = self else { preconditionFailure("sort column kind mismatch") }
            self = .integer([])
            values.append(contentsOf: source[range])
            self = .real(values)
        case .integer(let source):
            guard case .integer(var values) = self else { preconditionFailure("sort column kind mismatch") }
            self = .real([])
            values.append(contentsOf: source[range])
            self = .integer(values)
        case .text(let source):
            guard case .text(var values) = self else { preconditionFailure("sort column kind mismatch") }
            self = .real([])
            values.append(contentsOf: source[range])
            self = .text(values)
        }
    }

    package mutating func reserveCapacity(_ count: Int) {
        switch self {
        case .real(var values):
            self = .integer([])
            values.reserveCapacity(count)
            self = .real(values)
        case .integer(var values):
            self = .real([])
            values.reserveCapacity(count)
            self = .integer(values)
        case .text(var values):
            self = .real([])
            values.reserveCapacity(count)
            self = .text(values)
        }
    }
}

/// Reads. Each call runs on a reader connection and sees the last committed state; none waits for a writer.
extension AssetStore {
    /// The identifiers matching `query`, in its order.
    package func fetchIDs(_ query: StoreQuery) throws -> [Int64] {
        var arguments = StatementArguments()
        let sql = Self.selectSQL(columns: "id", query, &arguments)
        return try read { db in try Int64.fetchAll(db, sql: sql, arguments: arguments) }
    }

    /// The identifiers matching `query` with their sort key values (what a fetch result needs for change details).
    package func fetchSorted(_ query: StoreQuery) throws -> SortedIdentifiers {
        try fetchSortedWithToken(query).sorted
    }

    /// ``fetchSorted(_:)`` with the token of the last commit the identifiers reflect, both read in one
    /// transaction: a change with a later token is not in them, one with this token or earlier is.
    package func fetchSortedWithToken(_ query: StoreQuery) throws -> (sorted: SortedIdentifiers, token: ChangeToken) {
        var arguments = StatementArguments()
        let columns = (["id"] + query.sort.map(\.key.sqlExpression)).joined(separator: ", ")
        let sql = Self.selectSQL(columns: columns, query, &arguments)
        return try read { db in
            let token = try Int64.fetchOne(db, sql: "SELECT value FROM store_meta WHERE name = 'lastToken'") ?? 0
            return (try Self.sorted(db, sql: sql, arguments: arguments, query: query), ChangeToken(rawValue: token))
        }
    }

    private static func sorted(
        _ db: Database, sql: String, arguments: StatementArguments, query: StoreQuery
    ) throws -> SortedIdentifiers {
        do {
            if query.sort.isEmpty {
                return SortedIdentifiers(ids: ContiguousArray(try Int64.fetchAll(db, sql: sql, arguments: arguments)))
            }
            // Typed local arrays, wrapped into columns at the end (appends stay in place). The rows are read
            // straight from SQLite: a million rows through GRDB's row cursor cost three times as long.
            var ids = ContiguousArray<Int64>()
            let kinds = query.sort.map { SortColumn(for: $0.key) }
            var reals = Array(repeating: ContiguousArray<Double>(), count: kinds.count)
            var integers = Array(repeating: ContiguousArray<Int64>(), count: kinds.count)
            var texts = Array(repeating: ContiguousArray<String>(), count: kinds.count)
            let statement = try db.makeStatement(sql: sql)
            try statement.setArguments(arguments)
            let raw = RawStatement(db, boundHandle: statement.sqliteStatement)
            defer { raw.reset() }
            if kinds.count == 1, case .real = kinds[0] {
                // The usual sort (by date): one column of reals, without the per-column switch.
                while try raw.step() {
                    ids.append(raw.int64(0))
                    reals[0].append(raw.double(1))
                }
            } else {
                while try raw.step() {
                    ids.append(raw.int64(0))
                    for (column, kind) in kinds.enumerated() {
                        let index = Int32(column + 1)
                        switch kind {
                        case .real: reals[column].append(raw.double(index))
                        case .integer: integers[column].append(raw.int64(index))
                        case .text: texts[column].append(raw.text(index))
                        }
                    }
                }
            }
            let columns = kinds.enumerated().map { column, kind -> SortColumn in
                switch kind {
                case .real: .real(reals[column])
                case .integer: .integer(integers[column])
                case .text: .text(texts[column])
                }
            }
            return SortedIdentifiers(ids: ids, keys: columns)
        }
    }

    /// SQLite's plan for `fetchSorted(query)`, one line per step (`EXPLAIN QUERY PLAN`): which index it scans.
    package func queryPlan(_ query: StoreQuery) throws -> [String] {
        var arguments = StatementArguments()
        let columns = (["id"] + query.sort.map(\.key.sqlExpression)).joined(separator: ", ")
        let sql = "EXPLAIN QUERY PLAN " + Self.selectSQL(columns: columns, query, &arguments)
        return try read { db in try Row.fetchAll(db, sql: sql, arguments: arguments).map { $0["detail"] } }
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
    package func records(ids: some Collection<Int64>) throws -> [AssetRecord] {
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
                try Self.forEachRecord(db, sql: sql, arguments: StatementArguments(Array(batch))) { record in
                    byID[record.id!] = record
                    return true
                }
            }
            return byID
        }
        return ids.compactMap { found[$0] }
    }

    /// The record with this identifier, or `nil`.
    package func record(id: Int64) throws -> AssetRecord? {
        try readOne(AssetRecord.selectByIDSQL) { $0.bind(1, id) }
    }

    /// The record with this bucket key, or `nil`.
    package func record(key: String) throws -> AssetRecord? {
        try readOne(AssetRecord.selectByKeySQL) { $0.bind(1, key) }
    }

    /// The one record `sql` (a statement selecting ``AssetRecord/selectColumns``) selects with the parameters
    /// `bind` sets. One asset at a time is the common case of a request: the statement is prepared once per
    /// connection and decoded column by column, and it runs without a transaction around it (one statement reads
    /// one consistent state of the database on its own).
    private func readOne(_ sql: String, bind: (RawStatement) -> Void) throws -> AssetRecord? {
        do {
            return try pool.unsafeRead { db in
                let statement = try RawStatement(db, sql: sql)
                bind(statement)
                defer { statement.reset() }
                return try statement.step() ? AssetRecord(raw: statement) : nil
            }
        } catch let error as DatabaseError {
            throw Self.translate(error, path: databaseURL.path)
        }
    }

    /// The number of assets.
    package var count: Int {
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

/// How many assets are in each availability state (trashed ones counted apart), from one grouped scan.
package struct StoreAssetCounts: Sendable, Hashable {
    /// Assets not in the trash, by availability.
    package var byAvailability: [StoredAvailability: Int] = [:]
    /// Pinned assets not in the trash.
    package var pinned = 0
    /// Assets in the trash.
    package var trashed = 0
}

extension AssetStore {
    /// Assets by availability and pinning, trashed ones apart. Only assets with something local, pinned ones and
    /// trashed ones are visited (through their partial indexes); cloud-only ones are what the count of all rows
    /// leaves — so counting a million mostly cloud-only assets costs milliseconds, not a scan of every row.
    package func assetCounts() throws -> StoreAssetCounts {
        try read { db in
            var counts = StoreAssetCounts()
            let total = try Int.fetchOne(db, sql: SummarySQL.total) ?? 0
            var local = 0
            let rows = try Row.fetchCursor(db, sql: SummarySQL.localGroups)
            while let row = try rows.next() {
                let count: Int = row[3]
                if row[2] as Bool { continue }  // counted with the trash below
                let state = StoredAvailability(rawValue: row[0]) ?? .cloudOnly
                counts.byAvailability[state, default: 0] += count
                local += count
                if row[1] as Bool { counts.pinned += count }
            }
            counts.trashed = try Int.fetchOne(db, sql: SummarySQL.trashed) ?? 0
            counts.pinned += try Int.fetchOne(db, sql: SummarySQL.pinnedCloudOnly) ?? 0
            counts.byAvailability[.cloudOnly] = total - counts.trashed - local
            return counts
        }
    }
}

extension AssetStore {
    /// Bytes of the thumbnails the library made itself (present, with no thumbnail object in the bucket): they
    /// count against the cache like originals. Only assets with something local are visited.
    package func generatedThumbnailBytes() throws -> Int64 {
        try read { db in
            try Int64.fetchOne(db, sql: SummarySQL.generatedThumbnails) ?? 0
        }
    }

    /// How many local originals are recorded `full`, and their bytes (counted and summed in SQL: no row is
    /// decoded).
    package func fullOriginals() throws -> (count: Int, bytes: Int64) {
        try read { db in
            let row = try Row.fetchOne(db, sql: SummarySQL.fullOriginals)
            return (row?[0] ?? 0, row?[1] ?? 0)
        }
    }
}

/// The counts and sums `cloudassets status`, ``AssetStore/assetCounts()`` and the cache limit read. Each is
/// answered from an index — a partial one, where the condition says literally what the index's own condition
/// says (SQLite does not infer `availability != 0` from `availability = 3`) — never by reading every row of a
/// million-asset catalog (``AssetStore/summaryQueryPlans()`` shows the plans; tests check them).
enum SummarySQL {
    static let total = "SELECT count(*) FROM asset"
    static let localGroups =
        "SELECT availability, isPinned, trashedDate IS NOT NULL, count(*) FROM asset WHERE availability != 0 "
        + "GROUP BY 1, 2, 3"
    static let trashed = "SELECT count(*) FROM asset WHERE trashedDate IS NOT NULL"
    static let pinnedCloudOnly =
        "SELECT count(*) FROM asset WHERE isPinned = 1 AND availability = 0 AND trashedDate IS NULL"
    static let generatedThumbnails =
        "SELECT COALESCE(SUM(thumbnailSize), 0) FROM asset WHERE availability != 0 AND thumbnailPresent = 1 "
        + "AND thumbnailKey IS NULL"
    static let fullOriginals =
        "SELECT count(*), COALESCE(SUM(size), 0) FROM asset WHERE availability != 0 "
        + "AND availability = \(StoredAvailability.full.rawValue)"
    static let uploadStates = "SELECT uploadState, count(*) FROM asset WHERE uploadState != 0 GROUP BY uploadState"
    static let unsharedMetadata = "SELECT id FROM asset WHERE metadataDirty = 1 AND uploadState = 0 ORDER BY id"

    static let all = [
        total, localGroups, trashed, pinnedCloudOnly, generatedThumbnails, fullOriginals, uploadStates,
        unsharedMetadata,
    ]
}

extension AssetStore {
    /// SQLite's plan for each of the summary queries (``SummarySQL``), one line per step, by query.
    package func summaryQueryPlans() throws -> [String: [String]] {
        try read { db in
            var plans: [String: [String]] = [:]
            for sql in SummarySQL.all {
                plans[sql] = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] }
            }
            return plans
        }
    }
}
