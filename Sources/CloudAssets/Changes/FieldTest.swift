import AssetStore
import Foundation

/// A predicate that is a conjunction of field tests, evaluated inline where a record is read from a collection:
/// a record handed to a function is copied whole (field by field, through its value witnesses), which costs more
/// than the rest of its handling. Each test has the meaning of the ``StorePredicate`` case of the same name.
enum FieldTest {
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
struct TestedFields {
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
