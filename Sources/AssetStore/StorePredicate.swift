package import Foundation
import GRDB

/// A filter over asset records, compiled to SQL with bound arguments and also evaluable in memory.
///
/// Both forms agree: `matches(record)` is `true` exactly for the rows the compiled SQL selects.
package indirect enum StorePredicate: Sendable, Hashable {
    /// Every record.
    case all
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
    case isFavorite(Bool)
    case isHidden(Bool)
    /// Records in the trash (`true`) or not (`false`).
    case isTrashed(Bool)
    /// Records whose upload state is in the set.
    case uploadState(Set<StoredUploadState>)
    /// Records whose key starts with the prefix (byte-wise, case-sensitive).
    case keyPrefix(String)
    /// Records with one of these identifiers.
    case ids(Set<Int64>)
    /// All sub-predicates hold (`and([])` is `all`).
    case and([StorePredicate])
    /// At least one sub-predicate holds (`or([])` matches nothing).
    case or([StorePredicate])
    case not(StorePredicate)

    /// Evaluates the predicate on one record.
    package func matches(_ record: AssetRecord) -> Bool {
        switch self {
        case .all: true
        case .mediaType(let set): set.contains(record.mediaType)
        case .creationDate(let range): range.contains(record.creationDate)
        case .modificationDate(let range): range.contains(record.modificationDate)
        case .availability(let set): set.contains(record.availability)
        case .currentAvailability(let set): set.contains(record.currentAvailability)
        case .isFavorite(let value): record.isFavorite == value
        case .isHidden(let value): record.isHidden == value
        case .isTrashed(let value): record.isTrashed == value
        case .uploadState(let set): set.contains(record.uploadState)
        case .keyPrefix(let prefix): record.key.utf8.starts(with: prefix.utf8)
        case .ids(let ids): record.id.map(ids.contains) ?? false
        case .and(let list): list.allSatisfy { $0.matches(record) }
        case .or(let list): list.contains { $0.matches(record) }
        case .not(let inner): !inner.matches(record)
        }
    }

    /// The SQL boolean expression and its arguments (values are always bound, never interpolated).
    func sql(into arguments: inout StatementArguments) -> String {
        switch self {
        case .all: return "1"
        case .mediaType(let set): return Self.inList("mediaType", set.map(\.rawValue).sorted(), &arguments)
        case .creationDate(let range): return Self.between("creationDate", range, &arguments)
        case .modificationDate(let range): return Self.between("modificationDate", range, &arguments)
        case .availability(let set):
            let list = Self.inList("availability", set.map(\.rawValue).sorted(), &arguments)
            // Without cloud-only assets, say so literally: the partial index of local assets then applies.
            return set.contains(.cloudOnly) ? list : "(availability != 0 AND \(list))"
        case .currentAvailability(let set):
            // Unedited rows by their stored state (the local-assets index applies), edited ones through theirs.
            let original = StorePredicate.availability(set).sql(into: &arguments)
            let edited = Self.inList(
                "editAvailability", set.map(\.rawValue).sorted(),
                &arguments)
            return "((editRevision IS NULL AND \(original)) OR (editRevision IS NOT NULL AND \(edited)))"
        // Booleans are written as literals (not values from outside) so partial indexes on them apply.
        case .isFavorite(let value): return value ? "isFavorite = 1" : "isFavorite = 0"
        case .isHidden(let value): return value ? "isHidden = 1" : "isHidden = 0"
        case .isTrashed(let value): return value ? "trashedDate IS NOT NULL" : "trashedDate IS NULL"
        case .uploadState(let set): return Self.inList("uploadState", set.map(\.rawValue).sorted(), &arguments)
        case .keyPrefix(let prefix):
            guard !prefix.isEmpty else { return "1" }
            arguments += [Self.globEscaped(prefix) + "*"]
            return "key GLOB ?"
        case .ids(let ids):
            if ids.count <= 256 { return Self.inList("id", ids.sorted(), &arguments) }
            arguments += ["[" + ids.map(String.init).joined(separator: ",") + "]"]
            return "id IN (SELECT value FROM json_each(?))"
        case .and(let list):
            guard !list.isEmpty else { return "1" }
            return "(" + list.map { $0.sql(into: &arguments) }.joined(separator: " AND ") + ")"
        case .or(let list):
            guard !list.isEmpty else { return "0" }
            return "(" + list.map { $0.sql(into: &arguments) }.joined(separator: " OR ") + ")"
        case .not(let inner):
            return "NOT (" + inner.sql(into: &arguments) + ")"
        }
    }

    private static func inList<V: DatabaseValueConvertible>(
        _ column: String, _ values: [V], _ arguments: inout StatementArguments
    ) -> String {
        guard !values.isEmpty else { return "0" }
        arguments += StatementArguments(values)
        return "\(column) IN (" + Array(repeating: "?", count: values.count).joined(separator: ",") + ")"
    }

    private static func between(_ column: String, _ range: Range<Date>, _ arguments: inout StatementArguments)
        -> String
    {
        arguments += [range.lowerBound.timeIntervalSinceReferenceDate, range.upperBound.timeIntervalSinceReferenceDate]
        return "(\(column) >= ? AND \(column) < ?)"
    }

    /// Escapes GLOB metacharacters so the prefix is matched literally.
    private static func globEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "*": out += "[*]"
            case "?": out += "[?]"
            case "[": out += "[[]"
            default: out.append(character)
            }
        }
        return out
    }
}
