import Foundation
import GRDB

/// Mapping between ``AssetRecord`` and the `asset` table, by column position (fast path for bulk reads/writes).
extension AssetRecord {
    /// The stored columns, in the order used by ``init(row:)`` and ``columnValues``.
    static let columnNames = [
        "id", "key", "size", "etag", "lastModified", "contentType", "creationDate", "modificationDate", "mediaType",
        "pixelWidth", "pixelHeight", "orientation", "isFavorite", "isHidden", "thumbnailKey", "thumbnailSize",
        "thumbnailETag", "thumbnailPresent", "availability", "partialRanges", "partialETag", "localFilePath",
        "verifiedSize", "verifiedETag", "isPinned", "lastAccessDate",
    ]
    static let selectColumns = columnNames.joined(separator: ", ")

    /// Decodes a row selected with ``selectColumns``.
    init(row: Row) throws {
        let rangesText: String? = row[19]
        guard let ranges = ByteRangeSet(serialized: rangesText ?? "") else {
            throw AssetStoreError.corrupt(path: "asset \(row[0] as Int64)", reason: "unreadable partial ranges")
        }
        let mediaRaw: Int = row[8]
        let availabilityRaw: Int = row[18]
        guard let media = MediaType(rawValue: mediaRaw),
            let availability = StoredAvailability(rawValue: availabilityRaw)
        else {
            throw AssetStoreError.corrupt(path: "asset \(row[0] as Int64)", reason: "unknown enum value")
        }
        let lastAccess: Double? = row[25]
        self.init(
            id: row[0], key: row[1], size: row[2], etag: row[3],
            lastModified: Date(timeIntervalSinceReferenceDate: row[4]), contentType: row[5],
            creationDate: Date(timeIntervalSinceReferenceDate: row[6]),
            modificationDate: Date(timeIntervalSinceReferenceDate: row[7]), mediaType: media, pixelWidth: row[9],
            pixelHeight: row[10], orientation: row[11], isFavorite: row[12], isHidden: row[13], thumbnailKey: row[14],
            thumbnailSize: row[15], thumbnailETag: row[16], thumbnailPresent: row[17], availability: availability,
            partialRanges: ranges, partialETag: row[20], localFilePath: row[21], verifiedSize: row[22],
            verifiedETag: row[23], isPinned: row[24],
            lastAccessDate: lastAccess.map { Date(timeIntervalSinceReferenceDate: $0) })
    }

    static let selectByIDSQL = "SELECT \(selectColumns) FROM asset WHERE id = ?"
    static let selectByKeySQL = "SELECT \(selectColumns) FROM asset WHERE key = ?"

    static let insertSQL =
        "INSERT INTO asset (\(columnNames.dropFirst().joined(separator: ", "))) VALUES ("
        + Array(repeating: "?", count: columnNames.count - 1).joined(separator: ", ") + ")"

    static let updateSQL =
        "UPDATE asset SET " + columnNames.dropFirst().map { "\($0) = ?" }.joined(separator: ", ") + " WHERE id = ?"
}
