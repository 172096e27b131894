import AssetStore
import Foundation

@testable import CloudAssets

/// Every asset's identity and state, to prove a failed operation lost nothing.
struct CatalogSnapshot: Equatable, CustomStringConvertible {
    struct Row: Equatable {
        var id: Int64
        var key: String
        var etag: String
        var size: Int64
        var availability: AssetAvailability
        var ranges: [Range<Int64>]
    }

    var rows: [Row]

    init(_ library: AssetLibrary) throws {
        rows = try library.fetchAssets(FetchOptions(includeHiddenAssets: true)).map {
            Row(
                id: $0.rowID, key: $0.key, etag: $0.etag, size: $0.size, availability: $0.availability,
                ranges: $0.partialRanges)
        }.sorted { $0.id < $1.id }
    }

    var description: String { rows.map { "\($0.id) \($0.key) \($0.availability)" }.joined(separator: ", ") }
}
