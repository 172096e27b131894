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
            token: change.token.rawValue, inserted: change.insertedIdentifiers.sorted().map(String.init),
            changed: change.updatedIdentifiers.sorted().map(String.init),
            contentChanged: change.contentChangedIdentifiers.sorted().map(String.init),
            removed: change.deletedIdentifiers.sorted().map(String.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? String(decoding: encoder.encode(line), as: UTF8.self)) ?? "{}"
    }
}
