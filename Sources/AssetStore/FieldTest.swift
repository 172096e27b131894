package import Foundation
import GRDB

/// A test on one scalar field of a record: the leaves of a ``StorePredicate`` (with its key prefix).
///
/// Each test's meaning is defined here once, in two forms side by side: ``sql(into:)``, the condition on the
/// catalog's columns, and ``holds(for:)``, the same condition on a record's ``TestedFields``. Every in-memory
/// evaluation — ``StorePredicate/matches(_:)``, the change-details engine's inline tests, `AssetPredicate.matches`
/// — runs ``holds(for:)``; every fetch runs ``sql(into:)``.
package enum FieldTest: Sendable, Hashable {
    /// Records whose media type is in the set.
    case mediaType(Set<MediaType>)
    /// Records created in the half-open interval.
    case creationDate(Range<Date>)
    /// Records modified in the half-open interval.
    case modificationDate(Range<Date>)
    /// Records whose original's availability is in the set.
    case availability(Set<StoredAvailability>)
    /// Records whose current version's availability (``AssetRecord/currentAvailability``) is in the set.
    case currentAvailability(Set<StoredAvailability>)
    /// Records marked favorite (`true`) or not (`false`).
    case isFavorite(Bool)
    /// Records hidden (`true`) or not (`false`).
    case isHidden(Bool)
    /// Records in the trash (`true`) or not (`false`).
    case isTrashed(Bool)
    /// Records whose duration (seconds; 0 for anything but a video) is in the half-open interval.
    case duration(Range<Double>)
    /// Records with a content edit (`true`: ``AssetRecord/editRevision`` is set) or without one (`false`).
    case hasAdjustments(Bool)
    /// Records whose upload state is in the set.
    case uploadState(Set<StoredUploadState>)
    /// Records with one of these identifiers (a record not inserted yet has none).
    case ids(Set<Int64>)
    /// Records added to the bucket at or after the date (``AssetRecord/addedKey``): every record not listed yet.
    case addedSince(Date)

    /// The test on a record's fields: `true` exactly for the rows ``sql(into:)`` selects.
    @inlinable
    package func holds(for fields: TestedFields) -> Bool {
        switch self {
        case .mediaType(let set): set.contains(fields.mediaType)
        case .creationDate(let range): range.contains(fields.creationDate)
        case .modificationDate(let range): range.contains(fields.modificationDate)
        case .availability(let set): set.contains(fields.availability)
        case .currentAvailability(let set): set.contains(fields.currentAvailability)
        case .isFavorite(let value): fields.isFavorite == value
        case .isHidden(let value): fields.isHidden == value
        case .isTrashed(let value): fields.isTrashed == value
        case .hasAdjustments(let value): fields.hasAdjustments == value
        case .duration(let range): range.contains(fields.duration)
        case .uploadState(let set): set.contains(fields.uploadState)
        case .ids(let ids): fields.id.map(ids.contains) ?? false
        case .addedSince(let date): fields.addedKey >= date.timeIntervalSinceReferenceDate
        }
    }

    /// The test as an SQL boolean expression on the `asset` table's columns; its values are appended to
    /// `arguments` (always bound, never interpolated), except the library's own constants — booleans and media
    /// types — which are written literally so that the partial indexes on them apply. It is never NULL, so `NOT` of
    /// it is its negation.
    func sql(into arguments: inout StatementArguments) -> String {
        switch self {
        case .mediaType(let set):
            // The enum's own small integers, written literally (as the booleans below): `asset_video`'s condition
            // is `mediaType = 2`, which a bound `mediaType IN (?)` does not imply to SQLite's planner.
            let values = set.map(\.rawValue).sorted()
            if values.count == 1 { return "mediaType = \(values[0])" }
            return values.isEmpty ? "0" : "mediaType IN (" + values.map(String.init).joined(separator: ",") + ")"
        case .creationDate(let range): return Self.between("creationDate", range, &arguments)
        case .modificationDate(let range): return Self.between("modificationDate", range, &arguments)
        case .availability(let set):
            let list = Self.inList("availability", set.map(\.rawValue).sorted(), &arguments)
            // Without cloud-only assets, say so literally: the partial index of local assets then applies.
            return set.contains(.cloudOnly) ? list : "(availability != 0 AND \(list))"
        case .currentAvailability(let set):
            // Unedited rows by their stored state (the local-assets index applies), edited ones through theirs.
            let original = FieldTest.availability(set).sql(into: &arguments)
            let edited = Self.inList("editAvailability", set.map(\.rawValue).sorted(), &arguments)
            return "((editRevision IS NULL AND \(original)) OR (editRevision IS NOT NULL AND \(edited)))"
        // Booleans are written as literals (not values from outside) so partial indexes on them apply.
        case .isFavorite(let value): return value ? "isFavorite = 1" : "isFavorite = 0"
        case .isHidden(let value): return value ? "isHidden = 1" : "isHidden = 0"
        case .isTrashed(let value): return value ? "trashedDate IS NOT NULL" : "trashedDate IS NULL"
        case .hasAdjustments(let value): return value ? "editRevision IS NOT NULL" : "editRevision IS NULL"
        case .duration(let range):
            arguments += [range.lowerBound, range.upperBound]
            return "(duration >= ? AND duration < ?)"
        case .uploadState(let set): return Self.inList("uploadState", set.map(\.rawValue).sorted(), &arguments)
        case .ids(let ids):
            if ids.count <= 256 { return Self.inList("id", ids.sorted(), &arguments) }
            arguments += ["[" + ids.map(String.init).joined(separator: ",") + "]"]
            return "id IN (SELECT value FROM json_each(?))"
        case .addedSince(let date):
            // The indexed expression itself (`asset_added`), so the index's range applies.
            arguments += [date.timeIntervalSinceReferenceDate]
            return "\(AssetRecord.addedKeySQL) >= ?"
        }
    }

    /// The tests whose conjunction is `predicate`, or `nil` when it is not such a conjunction (it has a key
    /// prefix or folder, an `or` or a `not`).
    package static func conjunction(_ predicate: StorePredicate) -> [FieldTest]? {
        switch predicate {
        case .all: return []
        case .field(let test): return [test]
        case .and(let list):
            var tests: [FieldTest] = []
            for predicate in list {
                guard let inner = conjunction(predicate) else { return nil }
                tests += inner
            }
            return tests
        case .keyPrefix, .keyFolder, .or, .not: return nil
        }
    }

    /// `column IN (…)` with the values bound; `0` (false) for no values.
    private static func inList<V: DatabaseValueConvertible>(
        _ column: String, _ values: [V], _ arguments: inout StatementArguments
    ) -> String {
        guard !values.isEmpty else { return "0" }
        arguments += StatementArguments(values)
        return "\(column) IN (" + Array(repeating: "?", count: values.count).joined(separator: ",") + ")"
    }

    /// The half-open interval on a date column (dates are stored as seconds since the reference date).
    private static func between(_ column: String, _ range: Range<Date>, _ arguments: inout StatementArguments)
        -> String
    {
        arguments += [range.lowerBound.timeIntervalSinceReferenceDate, range.upperBound.timeIntervalSinceReferenceDate]
        return "(\(column) >= ? AND \(column) < ?)"
    }
}

/// The scalar fields of a record that ``FieldTest``s read, as the catalog stores them (no references: copied for
/// free). Built where a record is read from a collection, field by field: a record handed to a function is copied
/// whole (through its value witnesses), which costs more than the tests.
package struct TestedFields: Sendable {
    /// The record's identifier (`nil` before it is inserted).
    package var id: Int64?
    /// The media type.
    package var mediaType: MediaType
    /// The creation date.
    package var creationDate: Date
    /// The modification date.
    package var modificationDate: Date
    /// The original's availability.
    package var availability: StoredAvailability
    /// The availability of the version the record shows (``AssetRecord/currentAvailability``).
    package var currentAvailability: StoredAvailability
    /// Marked favorite.
    package var isFavorite: Bool
    /// Hidden.
    package var isHidden: Bool
    /// In the trash (``AssetRecord/isTrashed``).
    package var isTrashed: Bool
    /// With a content edit (``AssetRecord/editRevision`` set).
    package var hasAdjustments: Bool
    /// A video's length in seconds (0 otherwise).
    package var duration: Double
    /// Where the original stands with the bucket.
    package var uploadState: StoredUploadState
    /// When it was added to the bucket (``AssetRecord/addedKey``).
    package var addedKey: Double

    /// Fields given one by one (for a value that is not an ``AssetRecord``, such as the library's `Asset`).
    package init(
        id: Int64?, mediaType: MediaType, creationDate: Date, modificationDate: Date,
        availability: StoredAvailability, currentAvailability: StoredAvailability, isFavorite: Bool, isHidden: Bool,
        isTrashed: Bool, hasAdjustments: Bool, duration: Double, uploadState: StoredUploadState, addedKey: Double
    ) {
        self.id = id
        self.mediaType = mediaType
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.availability = availability
        self.currentAvailability = currentAvailability
        self.isFavorite = isFavorite
        self.isHidden = isHidden
        self.isTrashed = isTrashed
        self.hasAdjustments = hasAdjustments
        self.duration = duration
        self.uploadState = uploadState
        self.addedKey = addedKey
    }

    /// A record's fields, read one by one (inlined into the caller, so the record is not copied).
    @inlinable @inline(__always)
    package init(_ record: AssetRecord) {
        id = record.id
        mediaType = record.mediaType
        creationDate = record.creationDate
        modificationDate = record.modificationDate
        availability = record.availability
        currentAvailability = record.currentAvailability
        isFavorite = record.isFavorite
        isHidden = record.isHidden
        isTrashed = record.isTrashed
        hasAdjustments = record.editRevision != nil
        duration = record.duration
        uploadState = record.uploadState
        addedKey = record.addedKey
    }
}
