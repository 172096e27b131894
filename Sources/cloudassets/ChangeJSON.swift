import CloudAssets
import Foundation

/// `watch` output: one JSON object per change.
enum ChangeJSON {
    static func line(for change: LibraryChange) -> String {
        struct Line: Encodable {
            var token: Int64
            var inserted: [String]
            var changed: [String]
            var contentChanged: [String]
            var removed: [String]
        }
        let line = Line(
            token: change.token.rawValue, inserted: ordered(change.insertedIdentifiers),
            changed: ordered(change.updatedIdentifiers), contentChanged: ordered(change.contentChangedIdentifiers),
            removed: ordered(change.deletedIdentifiers))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // try?: encoding these string and number values cannot fail
        return (try? String(decoding: encoder.encode(line), as: UTF8.self)) ?? "{}"
    }

    /// Local identifiers in the order they were given out (shorter first, then by character: the decimal
    /// order of today's identifiers), so that a line reads the same on every run.
    private static func ordered(_ identifiers: Set<String>) -> [String] {
        identifiers.sorted { ($0.utf8.count, $0) < ($1.utf8.count, $1) }
    }
}
