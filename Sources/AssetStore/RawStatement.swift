import Essentials
import Foundation
import GRDB

#if canImport(GRDBSQLite)
    import GRDBSQLite
#else
    import SQLite3
#endif

/// Direct `sqlite3_*` access to one of GRDB's cached prepared statements, for the per-row hot paths (lookups,
/// inserts and updates of a 100,000-row listing sync), where GRDB's row and argument boxing dominates.
///
/// Each use binds, steps and resets the statement within one call on one connection (the writer's, or a reader's
/// inside one read), so GRDB never sees it mid-iteration.
struct RawStatement {
    let handle: OpaquePointer
    let db: Database

    init(_ db: Database, sql: String) throws {
        self.init(db, handle: try db.cachedStatement(sql: sql).sqliteStatement)
    }

    /// Wraps a handle obtained earlier from GRDB's cache on the same connection (still owned by that cache),
    /// reset, and with no bindings unless `clearingBindings` is false (for a caller that binds every parameter).
    init(_ db: Database, handle: OpaquePointer, clearingBindings: Bool = true) {
        self.db = db
        self.handle = handle
        sqlite3_reset(handle)
        if clearingBindings { sqlite3_clear_bindings(handle) }
    }

    /// Wraps a statement whose parameters the caller has just bound through GRDB (kept, not cleared).
    init(_ db: Database, boundHandle handle: OpaquePointer) {
        self.db = db
        self.handle = handle
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    func bind(_ index: Int32, _ value: Int) { sqlite3_bind_int64(handle, index, Int64(value)) }
    func bind(_ index: Int32, _ value: Bool) { sqlite3_bind_int64(handle, index, value ? 1 : 0) }
    func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(handle, index, value) }
    func bind(_ index: Int32, _ value: Int64?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }
    func bind(_ index: Int32, _ value: Double?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }
    func bind(_ index: Int32, _ value: String?) {
        guard let value else {
            sqlite3_bind_null(handle, index)
            return
        }
        var text = value
        text.withUTF8 { buffer in
            _ = sqlite3_bind_text(
                handle, index, UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self),
                Int32(buffer.count), Self.transient)
        }
    }

    /// Steps once: `true` when a row is available. Throws the SQLite error (the statement is reset).
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
            sqlite3_reset(handle)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
        }
    }

    /// Runs a statement that returns no row, then resets it.
    func execute() throws {
        defer { sqlite3_reset(handle) }
        _ = try step()
    }

    func reset() { sqlite3_reset(handle) }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
    func bool(_ column: Int32) -> Bool { sqlite3_column_int64(handle, column) != 0 }
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }
    func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }
    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }
    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
}

extension AssetRecord {
    /// Decodes the current row of a statement selecting ``selectColumns``.
    init(raw row: RawStatement) throws {
        let id = row.int64(0)
        guard let ranges = ByteRangeSet(serialized: row.optionalText(19) ?? "") else {
            throw AssetStoreError.corrupt(path: "asset \(id)", reason: "unreadable partial ranges")
        }
        guard let media = MediaType(rawValue: row.int(8)), let availability = StoredAvailability(rawValue: row.int(18)),
            let upload = StoredUploadState(rawValue: row.int(29))
        else {
            throw AssetStoreError.corrupt(path: "asset \(id)", reason: "unknown enum value")
        }
        self.init(
            id: id, key: row.text(1), size: row.int64(2), etag: row.text(3),
            lastModified: Date(timeIntervalSinceReferenceDate: row.double(4)), contentType: row.optionalText(5),
            creationDate: Date(timeIntervalSinceReferenceDate: row.double(6)),
            modificationDate: Date(timeIntervalSinceReferenceDate: row.double(7)), mediaType: media,
            pixelWidth: row.int(9), pixelHeight: row.int(10), orientation: row.int(11), isFavorite: row.bool(12),
            isHidden: row.bool(13), thumbnailKey: row.optionalText(14), thumbnailSize: row.optionalInt64(15),
            thumbnailETag: row.optionalText(16), thumbnailPresent: row.bool(17), availability: availability,
            partialRanges: ranges, partialETag: row.optionalText(20), localFilePath: row.optionalText(21),
            verifiedSize: row.optionalInt64(22), verifiedETag: row.optionalText(23), isPinned: row.bool(24),
            lastAccessDate: row.optionalDouble(25).map { Date(timeIntervalSinceReferenceDate: $0) })
        title = row.optionalText(26)
        keywords = Self.keywords(decoding: row.optionalText(27))
        trashedDate = row.optionalDouble(28).map { Date(timeIntervalSinceReferenceDate: $0) }
        uploadState = upload
        uploadError = row.optionalText(30)
        contentSHA256 = row.optionalText(31)
        sidecarETag = row.optionalText(32)
        metadataStamps = row.optionalText(33)
        metadataDirty = row.bool(34)
        location = Self.location(
            latitude: row.optionalDouble(35), longitude: row.optionalDouble(36), altitude: row.optionalDouble(37))
        metadataFill = MetadataFill(rawValue: row.int(38)) ?? .complete
        editRevision = row.optionalText(39)
        editAvailability = StoredAvailability(rawValue: row.int(40)) ?? .cloudOnly
        duration = row.double(41)
        videoCodec = row.optionalText(42)
        frameRate = row.double(43)
    }

    /// Binds every column except `id` to parameters 1…40 (``insertSQL`` / ``updateSQL`` order).
    func bindColumns(to statement: RawStatement) {
        for column in 1..<Self.columnNames.count { bind(column: column, to: statement, at: Int32(column)) }
    }

    /// Binds one column (its position in ``columnNames``) to parameter `index`: the one place a field becomes its
    /// column's value.
    func bind(column: Int, to statement: RawStatement, at index: Int32) {
        switch column {
        case 1: statement.bind(index, key)
        case 2: statement.bind(index, size)
        case 3: statement.bind(index, etag)
        case 4: statement.bind(index, lastModified.timeIntervalSinceReferenceDate)
        case 5: statement.bind(index, contentType)
        case 6: statement.bind(index, creationDate.timeIntervalSinceReferenceDate)
        case 7: statement.bind(index, modificationDate.timeIntervalSinceReferenceDate)
        case 8: statement.bind(index, mediaType.rawValue)
        case 9: statement.bind(index, pixelWidth)
        case 10: statement.bind(index, pixelHeight)
        case 11: statement.bind(index, orientation)
        case 12: statement.bind(index, isFavorite)
        case 13: statement.bind(index, isHidden)
        case 14: statement.bind(index, thumbnailKey)
        case 15: statement.bind(index, thumbnailSize)
        case 16: statement.bind(index, thumbnailETag)
        case 17: statement.bind(index, thumbnailPresent)
        case 18: statement.bind(index, availability.rawValue)
        case 19: statement.bind(index, partialRanges.isEmpty ? nil : partialRanges.serialized)
        case 20: statement.bind(index, partialETag)
        case 21: statement.bind(index, localFilePath)
        case 22: statement.bind(index, verifiedSize)
        case 23: statement.bind(index, verifiedETag)
        case 24: statement.bind(index, isPinned)
        case 25: statement.bind(index, lastAccessDate?.timeIntervalSinceReferenceDate)
        case 26: statement.bind(index, title)
        case 27: statement.bind(index, Self.encode(keywords: keywords))
        case 28: statement.bind(index, trashedDate?.timeIntervalSinceReferenceDate)
        case 29: statement.bind(index, uploadState.rawValue)
        case 30: statement.bind(index, uploadError)
        case 31: statement.bind(index, contentSHA256)
        case 32: statement.bind(index, sidecarETag)
        case 33: statement.bind(index, metadataStamps)
        case 34: statement.bind(index, metadataDirty)
        case 35: statement.bind(index, location?.latitude)
        case 36: statement.bind(index, location?.longitude)
        case 37: statement.bind(index, location?.altitude)
        case 38: statement.bind(index, metadataFill.rawValue)
        case 39: statement.bind(index, editRevision)
        case 40: statement.bind(index, editAvailability.rawValue)
        case 41: statement.bind(index, duration)
        case 42: statement.bind(index, videoCodec)
        case 43: statement.bind(index, frameRate)
        default: preconditionFailure("asset column \(column)")
        }
    }

    /// Whether `other` holds this record's value in one of ``metadataColumns`` (its position in ``columnNames``):
    /// a metadata fill sets only the columns that differ, since SQLite rewrites the entries of every index on a
    /// column an `UPDATE` sets, whether its value changed or not.
    func sameValue(inMetadataColumn column: Int, as other: AssetRecord) -> Bool {
        switch column {
        case 5: contentType == other.contentType
        case 6: creationDate == other.creationDate
        case 7: modificationDate == other.modificationDate
        case 8: mediaType == other.mediaType
        case 9: pixelWidth == other.pixelWidth
        case 10: pixelHeight == other.pixelHeight
        case 11: orientation == other.orientation
        case 31: contentSHA256 == other.contentSHA256
        case 35: location?.latitude == other.location?.latitude
        case 36: location?.longitude == other.location?.longitude
        case 37: location?.altitude == other.location?.altitude
        case 38: metadataFill == other.metadataFill
        case 41: duration == other.duration
        case 42: videoCodec == other.videoCodec
        case 43: frameRate == other.frameRate
        default: preconditionFailure("not a metadata column: \(column)")
        }
    }
}
