import Foundation
import GRDB

/// The outcome of ``StoreTransaction/upsert(_:)``.
package enum UpsertResult: Sendable, Hashable {
    /// No row had the key; a row was inserted with this identifier.
    case inserted(Int64)
    /// The row with this identifier had different remote fields and was updated; `before` is its previous state
    /// (when the original's ETag or size changed, its local original data was dropped — delete the files it named).
    case updated(Int64, before: AssetRecord)
    /// The row already held these remote fields: nothing was written and no change is recorded.
    case unchanged(Int64)

    /// The identifier of the row concerned.
    package var id: Int64 {
        switch self {
        case .inserted(let id), .updated(let id, _), .unchanged(let id): id
        }
    }
}

/// The handle a write closure receives: reads and writes inside one SQLite transaction, recording what changed.
///
/// Valid only during the ``AssetStore/write(_:)`` call that created it; do not keep or share it. Every write
/// validates the record's invariants (``AssetRecord/validate()``); a thrown error rolls the whole transaction back.
package final class StoreTransaction {
    let db: Database
    /// Rows inserted by this transaction.
    private var insertedHere = Set<Int64>()
    /// First state seen of every touched row that existed before the transaction.
    private var originals: [Int64: AssetRecord] = [:]
    /// Latest state of every touched row that still exists.
    private var latest: [Int64: AssetRecord] = [:]
    /// Touched rows deleted since.
    private var deletedHere = Set<Int64>()
    /// Collections created, changed or deleted, or whose members changed (``StoreChangeSet/collections``).
    var collectionsTouched = Set<String>()
    /// Per album (row identifier), what happened to its members (``StoreChangeSet/memberDeltas``).
    var memberDeltas: [Int64: MemberDelta] = [:]

    /// The statements of the per-row paths, looked up once per transaction: GRDB's statement cache hashes the
    /// SQL text on every lookup, which shows in a 100,000-row upsert.
    private enum Kind: Int, CaseIterable {
        case selectByID, selectByKey, insert, update, delete

        var sql: String {
            switch self {
            case .selectByID: AssetRecord.selectByIDSQL
            case .selectByKey: AssetRecord.selectByKeySQL
            case .insert: AssetRecord.insertSQL
            case .update: AssetRecord.updateSQL
            case .delete: "DELETE FROM asset WHERE id = ?"
            }
        }
    }
    private var statements = [OpaquePointer?](repeating: nil, count: Kind.allCases.count)
    /// Metadata updates by the columns they set (see ``metadataStatement(_:)``).
    private var metadataStatements: [UInt16: OpaquePointer] = [:]

    /// Every key with its identifier, loaded once a transaction upserts many rows compared with the table's
    /// size (kept in step with this transaction's inserts, key changes and deletions).
    private var keyIndex: [String: Int64]?
    private var upsertCount = 0
    private var keyIndexDeclined = false
    /// Upserts in one transaction after which loading every key may cost less than looking each one up.
    package static let keyIndexThreshold = 512

    init(db: Database) { self.db = db }

    /// Loads every key when this transaction upserts (or will upsert) `expected` rows and the table holds at
    /// most four times as many: a bulk first sync gains, while a page of a sync over a big catalog (1,000 rows
    /// against 100,000) keeps its per-row lookups instead of reading every key for each page.
    private func loadKeyIndexIfWorthIt(expected: Int) throws {
        guard keyIndex == nil, !keyIndexDeclined, expected >= Self.keyIndexThreshold else { return }
        // Identifiers are never reused, so the largest one bounds the number of rows (one B-tree step).
        let largestID = try Int64.fetchOne(db, sql: "SELECT max(id) FROM asset") ?? 0
        if largestID <= Int64(expected) * 4 {
            keyIndex = try allKeys()
        } else {
            keyIndexDeclined = true
        }
    }

    /// The prepared statement of `kind`, reset and with no bindings.
    /// `UPDATE asset SET` the ``AssetRecord/metadataColumns`` whose bits are set in `columns` `WHERE id = ?`,
    /// prepared once per transaction for each set of columns.
    private func metadataStatement(_ columns: UInt16) throws -> RawStatement {
        if let handle = metadataStatements[columns] { return RawStatement(db, handle: handle) }
        let chosen = AssetRecord.metadataColumns.indices.filter { columns & (1 << $0) != 0 }.map {
            AssetRecord.metadataColumns[$0]
        }
        let statement = try RawStatement(db, sql: AssetRecord.updateSQL(columns: chosen))
        metadataStatements[columns] = statement.handle
        return statement
    }

    private func statement(_ kind: Kind, clearingBindings: Bool = true) throws -> RawStatement {
        if let handle = statements[kind.rawValue] {
            return RawStatement(db, handle: handle, clearingBindings: clearingBindings)
        }
        let statement = try RawStatement(db, sql: kind.sql)
        statements[kind.rawValue] = statement.handle
        return statement
    }

    /// Prepares for writing about `count` rows in this transaction (e.g. one listing page), so that recording
    /// them does not repeatedly grow and rehash the transaction's bookkeeping. Optional; only affects speed.
    /// - Parameter upserting: Whether the rows go through ``upsert(_:)``, which may then load every key once;
    ///   `false` for rows inserted with ``insertIfNew(_:)``, which looks no key up.
    package func reserveCapacity(_ count: Int, upserting: Bool = true) {
        latest.reserveCapacity(latest.count + count)
        insertedHere.reserveCapacity(insertedHere.count + count)
        // try?: an optimisation: without the index, look-ups go to SQLite
        if upserting { try? loadKeyIndexIfWorthIt(expected: count) }
        if let known = keyIndex?.count { keyIndex?.reserveCapacity(known + count) }
    }

    // MARK: Reads

    /// The row with this identifier, as this transaction sees it.
    package func record(_ id: Int64) throws -> AssetRecord? {
        if let touched = latest[id] { return touched }
        if deletedHere.contains(id) { return nil }
        let statement = try statement(.selectByID)
        statement.bind(1, id)
        defer { statement.reset() }
        return try statement.step() ? AssetRecord(raw: statement) : nil
    }

    /// The row with this bucket key, as this transaction sees it.
    package func record(key: String) throws -> AssetRecord? {
        let statement = try statement(.selectByKey)
        statement.bind(1, key)
        defer { statement.reset() }
        return try statement.step() ? AssetRecord(raw: statement) : nil
    }

    /// Every key in the store with its identifier (for finding rows a listing no longer contains).
    package func allKeys() throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT key, id FROM asset")
        while let row = try rows.next() { result[row[0]] = row[1] }
        return result
    }

    // MARK: Writes

    /// Inserts a new row and returns its identifier (any `id` in `record` is ignored; identifiers are never reused).
    /// - Throws: ``AssetStoreError/invariantViolation(_:)``, ``AssetStoreError/duplicateKey(_:)``.
    @discardableResult
    package func insert(_ record: AssetRecord) throws -> Int64 {
        try insertRow(record)
    }

    /// Inserts `row` (taken, not copied: the transaction keeps it as the row's latest state).
    private func insertRow(_ row: consuming AssetRecord) throws -> Int64 {
        try row.validate()
        // Every parameter is bound below: the statement's previous bindings need no clearing.
        let statement = try statement(.insert, clearingBindings: false)
        row.bindColumns(to: statement)
        do {
            try statement.execute()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw AssetStoreError.duplicateKey(row.key)
        }
        let id = db.lastInsertedRowID
        row.id = id
        keyIndex?[row.key] = id
        insertedHere.insert(id)
        latest[id] = consume row
        return id
    }

    /// Changes the row with identifier `id` through `body` and writes it when something changed.
    /// - Returns: the row as written.
    /// - Throws: ``AssetStoreError/notFound(_:)``, ``AssetStoreError/invariantViolation(_:)`` (also when `body`
    ///   changes the identifier), ``AssetStoreError/duplicateKey(_:)``, or what `body` throws.
    @discardableResult
    package func update(_ id: Int64, _ body: (inout AssetRecord) throws -> Void) throws -> AssetRecord {
        guard let before = try record(id) else { throw AssetStoreError.notFound(id) }
        var after = before
        try body(&after)
        guard after.id == id else { throw AssetStoreError.invariantViolation("\(before.key): identifier changed") }
        if after == before { return after }
        try write(after, replacing: before)
        return after
    }

    /// Inserts a listing row, or updates the row with the same key when its remote fields differ.
    ///
    /// Remote fields (taken from `listing`): size, etag, lastModified, contentType, creationDate,
    /// modificationDate, mediaType, pixelWidth, pixelHeight, orientation, location, metadataFill,
    /// thumbnailKey/Size/ETag, and the content
    /// hash when the listing knows it. Local state (the shared properties and their merge state, thumbnail
    /// presence, availability and its data, upload state, pin, last access) is kept — except that a
    /// changed ETag or size drops the local original (availability falls to `thumbnail` or `cloudOnly`, partial
    /// ranges and verified-file fields are cleared), and a changed thumbnail key or ETag clears `thumbnailPresent`.
    /// A listing whose key has no row is inserted with no local state (cloud only, no thumbnail, not pinned), even
    /// when `listing` carries some: it may be a record read before a concurrent deletion of its row.
    /// An unchanged row is not written and records no change. When a transaction upserts many rows compared with
    /// the table's size (from its ``keyIndexThreshold``th upsert, or after ``reserveCapacity(_:)``), every key is
    /// held in memory so that a new row costs no lookup query.
    package func upsert(_ listing: AssetRecord) throws -> UpsertResult {
        upsertCount += 1
        if upsertCount == Self.keyIndexThreshold { try loadKeyIndexIfWorthIt(expected: upsertCount) }
        let existingRecord: AssetRecord?
        if let keyIndex {
            // Bulk path: the key index answers "is it new?" without a query per row.
            existingRecord = try keyIndex[listing.key].flatMap { try record($0) }
        } else {
            existingRecord = try record(key: listing.key)
        }
        guard let existing = existingRecord else {
            return .inserted(try insert(Self.newRow(listing)))
        }
        return try upsert(listing, over: existing)
    }

    /// ``upsert(_:)`` of a listing whose row the caller has just read (`existing`, read in this transaction and
    /// with the same key): the row takes what the listing says, without reading it again.
    package func upsert(_ listing: AssetRecord, over existing: AssetRecord) throws -> UpsertResult {
        guard let id = existing.id, existing.key == listing.key else {
            throw AssetStoreError.invariantViolation("upsert over a row of another key")
        }
        var merged = existing
        merged.size = listing.size
        merged.etag = listing.etag
        merged.lastModified = listing.lastModified
        merged.takeObjectMetadata(from: listing)
        merged.thumbnailKey = listing.thumbnailKey
        merged.thumbnailSize = listing.thumbnailSize
        merged.thumbnailETag = listing.thumbnailETag
        if let hash = listing.contentSHA256 {
            merged.contentSHA256 = hash
        } else if merged.contentDiffers(from: existing) {
            merged.contentSHA256 = nil
        }
        if merged == existing { return .unchanged(id) }
        if existing.thumbnailKey != merged.thumbnailKey || existing.thumbnailETag != merged.thumbnailETag {
            merged.thumbnailPresent = false
        }
        if merged.contentDiffers(from: existing) {
            merged.dropLocalOriginal()
        } else if merged.availability == .thumbnail && !merged.thumbnailPresent {
            merged.availability = .cloudOnly
        }
        try write(merged, replacing: existing)
        return .updated(id, before: existing)
    }

    /// What a read of an object's metadata found (`read`: its content type, dates, media type, pixel size,
    /// orientation, place, content hash, and what is still to read), over the row `existing` read in this
    /// transaction for the same version (key, ETag and size): ``upsert(_:over:)`` of a listing that changes only
    /// those fields, writing only their columns — the key, the dates listed and every index on other columns are left
    /// as they are. The rest of `read` is not looked at. A content hash is set, never cleared.
    package func fillMetadata(_ read: AssetRecord, over existing: AssetRecord) throws -> UpsertResult {
        guard let id = existing.id, existing.key == read.key, existing.etag == read.etag, existing.size == read.size
        else { throw AssetStoreError.invariantViolation("metadata of another version over \(existing.key)") }
        var merged = existing
        merged.takeObjectMetadata(from: read)
        if let hash = read.contentSHA256 { merged.contentSHA256 = hash }
        // Only the columns that differ are set: SQLite rewrites every index on a column an UPDATE sets.
        let columns = AssetRecord.metadataColumns
        var changed: UInt16 = 0
        for (offset, column) in columns.enumerated() where !merged.sameValue(inMetadataColumn: column, as: existing) {
            changed |= 1 << offset
        }
        if changed == 0 { return .unchanged(id) }
        try merged.validate()
        let statement = try metadataStatement(changed)
        var parameter: Int32 = 0
        for (offset, column) in columns.enumerated() where changed & (1 << offset) != 0 {
            parameter += 1
            merged.bind(column: column, to: statement, at: parameter)
        }
        statement.bind(parameter + 1, id)
        try statement.execute()
        touch(id, before: existing, after: merged)
        return .updated(id, before: existing)
    }

    /// Inserts a listed row without looking its key up first — for rows that are almost always new (a bootstrap
    /// into an empty catalog): `nil`, with nothing written, when the key already has a row (then ``upsert(_:)``).
    package func insertIfNew(_ listing: AssetRecord) throws -> Int64? {
        do {
            return try insertRow(Self.newRow(listing))
        } catch AssetStoreError.duplicateKey {
            return nil
        }
    }

    /// A new row takes only what a listing says: local state in `listing` (a caller may pass a record it read
    /// earlier, whose row was deleted since) names files that belong to no row of this key.
    private static func newRow(_ listing: AssetRecord) -> AssetRecord {
        var fresh = listing
        fresh.thumbnailPresent = false
        fresh.dropLocalOriginal()
        fresh.isPinned = false
        fresh.lastAccessDate = nil
        fresh.uploadState = .uploaded
        fresh.uploadError = nil
        fresh.resetSharedMetadata()
        fresh.editRevision = nil
        fresh.editAvailability = .cloudOnly
        return fresh
    }

    /// Deletes the row with identifier `id`. Returns `false` when there was none.
    @discardableResult
    package func delete(_ id: Int64) throws -> Bool {
        guard let before = try record(id) else { return false }
        let statement = try statement(.delete)
        statement.bind(1, id)
        try statement.execute()
        if before.editRevision != nil {
            try db.execute(sql: "DELETE FROM edit_revision WHERE assetID = ?", arguments: [id])
        }
        try removeFromEveryCollection(id)
        touch(id, before: before, after: nil)
        return true
    }

    private func write(_ after: AssetRecord, replacing before: AssetRecord) throws {
        try after.validate()
        guard let id = after.id else { throw AssetStoreError.invariantViolation("\(after.key): no identifier") }
        let statement = try statement(.update)
        after.bindColumns(to: statement)
        statement.bind(Int32(AssetRecord.columnNames.count), id)
        do {
            try statement.execute()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw AssetStoreError.duplicateKey(after.key)
        }
        touch(id, before: before, after: after)
    }

    /// Records a change of an existing row (an update, or a deletion when `after` is nil); an insertion is
    /// recorded by ``insertRow(_:)``.
    private func touch(_ id: Int64, before: AssetRecord, after: AssetRecord?) {
        if keyIndex != nil, before.key != after?.key {
            keyIndex?.removeValue(forKey: before.key)
            if let after { keyIndex?[after.key] = id }
        }
        if !insertedHere.contains(id) && originals.index(forKey: id) == nil { originals[id] = before }
        if let after {
            latest[id] = after
        } else {
            latest.removeValue(forKey: id)
            deletedHere.insert(id)
        }
    }

    // MARK: Change set

    /// Collapses the touched rows into a change set (token filled in by the store).
    func changeSet(token: ChangeToken) -> StoreChangeSet {
        var set = StoreChangeSet(token: token)
        set.collections = collectionsTouched
        set.memberDeltas = memberDeltas
        if originals.isEmpty && deletedHere.isEmpty {
            // Only insertions (a first sync): the latest states are exactly the after-records.
            set.inserted = insertedHere
            set.after = latest
            return set
        }
        for id in insertedHere {
            if let after = latest[id] {
                set.inserted.insert(id)
                set.after[id] = after
            }
        }
        for (id, before) in originals {
            if let after = latest[id] {
                guard after != before else { continue }
                set.updated.insert(id)
                set.before[id] = before
                set.after[id] = after
                if after.contentDiffers(from: before) { set.contentChanged.insert(id) }
                if after.key != before.key { set.rekeyed.insert(id) }
            } else {
                set.deleted.insert(id)
                set.before[id] = before
            }
        }
        return set
    }
}
