package import Foundation
import GRDB

/// A filter over asset records, compiled to SQL with bound arguments and also evaluable in memory.
///
/// Both forms agree: `matches(record)` is `true` exactly for the rows the compiled SQL selects. Its leaves define
/// their meaning once, as SQL and as an in-memory test side by side (``FieldTest``, and ``keyPrefix(_:)`` below);
/// `and`, `or` and `not` combine them the same way in both forms (no leaf's SQL is ever NULL).
package indirect enum StorePredicate: Sendable, Hashable {
    /// Every record.
    case all
    /// A test on one scalar field (see the constructors below).
    case field(FieldTest)
    /// Records whose key starts with the prefix (byte-wise, case-sensitive).
    case keyPrefix(String)
    /// Records whose key is directly in this folder of keys: it starts with the folder (which ends with `/`) and
    /// has no `/` after it.
    case keyFolder(String)
    /// All sub-predicates hold (`and([])` is `all`).
    case and([StorePredicate])
    /// At least one sub-predicate holds (`or([])` matches nothing).
    case or([StorePredicate])
    /// The sub-predicate does not hold.
    case not(StorePredicate)

    /// Records whose media type is in the set.
    package static func mediaType(_ set: Set<MediaType>) -> StorePredicate { .field(.mediaType(set)) }
    /// Records created in the half-open interval.
    package static func creationDate(_ range: Range<Date>) -> StorePredicate { .field(.creationDate(range)) }
    /// Records modified in the half-open interval.
    package static func modificationDate(_ range: Range<Date>) -> StorePredicate { .field(.modificationDate(range)) }
    /// Records whose original's availability is in the set.
    package static func availability(_ set: Set<StoredAvailability>) -> StorePredicate { .field(.availability(set)) }
    /// Records whose current version's availability (``AssetRecord/currentAvailability``) is in the set.
    package static func currentAvailability(_ set: Set<StoredAvailability>) -> StorePredicate {
        .field(.currentAvailability(set))
    }
    /// Records marked favorite (`true`) or not (`false`).
    package static func isFavorite(_ value: Bool) -> StorePredicate { .field(.isFavorite(value)) }
    /// Records hidden (`true`) or not (`false`).
    package static func isHidden(_ value: Bool) -> StorePredicate { .field(.isHidden(value)) }
    /// Records in the trash (`true`) or not (`false`).
    package static func isTrashed(_ value: Bool) -> StorePredicate { .field(.isTrashed(value)) }
    /// Records with a content edit (`true`) or without one (`false`).
    package static func hasAdjustments(_ value: Bool) -> StorePredicate { .field(.hasAdjustments(value)) }
    /// Records whose upload state is in the set.
    package static func uploadState(_ set: Set<StoredUploadState>) -> StorePredicate { .field(.uploadState(set)) }
    /// Records with one of these identifiers.
    package static func ids(_ ids: Set<Int64>) -> StorePredicate { .field(.ids(ids)) }

    /// Evaluates the predicate on one record.
    package func matches(_ record: AssetRecord) -> Bool { matches(TestedFields(record), key: record.key) }

    /// Evaluates the predicate on the fields of one record (or of a value made from one) and its key.
    package func matches(_ fields: TestedFields, key: String) -> Bool {
        switch self {
        case .all: true
        case .field(let test): test.holds(for: fields)
        case .keyPrefix(let prefix): Self.key(key, hasPrefix: prefix)
        case .keyFolder(let folder): Self.key(key, isDirectlyIn: folder)
        case .and(let list): list.allSatisfy { $0.matches(fields, key: key) }
        case .or(let list): list.contains { $0.matches(fields, key: key) }
        case .not(let inner): !inner.matches(fields, key: key)
        }
    }

    /// The SQL boolean expression and its arguments (values are always bound, never interpolated).
    func sql(into arguments: inout StatementArguments) -> String {
        switch self {
        case .all: return "1"
        case .field(let test): return test.sql(into: &arguments)
        case .keyPrefix(let prefix): return Self.keyPrefixSQL(prefix, &arguments)
        case .keyFolder(let folder): return Self.keyFolderSQL(folder, &arguments)
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

    // MARK: The key-prefix leaf, in both forms

    /// The key-prefix test in memory: the key's UTF-8 bytes start with the prefix's.
    private static func key(_ key: String, hasPrefix prefix: String) -> Bool { key.utf8.starts(with: prefix.utf8) }

    /// The key-prefix test in SQL: `GLOB` (case-sensitive, unlike `LIKE`) on the prefix with its metacharacters
    /// escaped; the empty prefix is every key.
    private static func keyPrefixSQL(_ prefix: String, _ arguments: inout StatementArguments) -> String {
        guard !prefix.isEmpty else { return "1" }
        arguments += [globEscaped(prefix) + "*"]
        return "key GLOB ?"
    }

    // MARK: The key-folder leaf, in both forms

    /// In memory: the key's UTF-8 bytes start with the folder's and hold no `/` after them.
    private static func key(_ key: String, isDirectlyIn folder: String) -> Bool {
        let bytes = key.utf8
        guard bytes.starts(with: folder.utf8) else { return false }
        return !bytes.dropFirst(folder.utf8.count).contains(UInt8(ascii: "/"))
    }

    /// In SQL: `GLOB 'folder*'` (the key index narrows it to the folder's range) and not `GLOB 'folder*/*'`.
    private static func keyFolderSQL(_ folder: String, _ arguments: inout StatementArguments) -> String {
        let escaped = globEscaped(folder)
        arguments += [escaped + "*", escaped + "*/*"]
        return "(key GLOB ? AND NOT key GLOB ?)"
    }

    /// The folder of keys a key is directly in: everything up to its last `/` (with it); `nil` for a key without
    /// one. The same as SQL's `rtrim(key, replace(key, '/', ''))`, which the schema's migration uses.
    package static func keyFolder(of key: String) -> String? {
        guard let slash = key.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        return String(decoding: key.utf8[...slash], as: UTF8.self)
    }

    /// Escapes GLOB metacharacters so the prefix is matched literally. SQLite reads the pattern by code point, so
    /// it is escaped by Unicode scalar: a `?` followed by a combining mark is one `Character`, but still a wildcard.
    static func globEscaped(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "*": out += "[*]".unicodeScalars
            case "?": out += "[?]".unicodeScalars
            case "[": out += "[[]".unicodeScalars
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
