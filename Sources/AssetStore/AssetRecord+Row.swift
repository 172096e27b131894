import Essentials
import Foundation
import GRDB

/// Mapping between ``AssetRecord`` and the `asset` table, by column position (fast path for bulk reads/writes).
extension AssetRecord {
    /// The stored columns, in the order used by ``init(row:)`` and ``columnValues``.
    static let columnNames = [
        "id", "key", "size", "etag", "lastModified", "contentType", "creationDate", "modificationDate", "mediaType",
        "pixelWidth", "pixelHeight", "orientation", "isFavorite", "isHidden", "thumbnailKey", "thumbnailSize",
        "thumbnailETag", "thumbnailPresent", "availability", "partialRanges", "partialETag", "localFilePath",
        "verifiedSize", "verifiedETag", "isPinned", "lastAccessDate", "title", "keywords", "trashedDate",
        "uploadState", "uploadError", "contentSHA256", "sidecarETag", "metadataStamps", "metadataDirty",
        "latitude", "longitude", "altitude", "imageMetadataPending", "editRevision", "editAvailability",
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
        guard let upload = StoredUploadState(rawValue: row[29]) else {
            throw AssetStoreError.corrupt(path: "asset \(row[0] as Int64)", reason: "unknown upload state")
        }
        let trashed: Double? = row[28]
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
        title = row[26]
        keywords = Self.keywords(decoding: row[27])
        trashedDate = trashed.map { Date(timeIntervalSinceReferenceDate: $0) }
        uploadState = upload
        uploadError = row[30]
        contentSHA256 = row[31]
        sidecarETag = row[32]
        metadataStamps = row[33]
        metadataDirty = row[34]
        location = Self.location(latitude: row[35], longitude: row[36], altitude: row[37])
        metadataFill = MetadataFill(rawValue: row[38]) ?? .complete
        editRevision = row[39]
        editAvailability = StoredAvailability(rawValue: row[40]) ?? .cloudOnly
    }

    /// Keywords are stored as one text, separated by newlines (a keyword never holds one; see
    /// ``normalizedKeyword(_:)``); no keyword is stored as NULL.
    static func keywords(decoding text: String?) -> [String] {
        guard let text, !text.isEmpty else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    static func location(latitude: Double?, longitude: Double?, altitude: Double?) -> AssetLocation? {
        guard let latitude, let longitude else { return nil }
        return AssetLocation(latitude: latitude, longitude: longitude, altitude: altitude)
    }

    static func encode(keywords: [String]) -> String? { keywords.isEmpty ? nil : keywords.joined(separator: "\n") }

    /// A keyword as stored: surrounding white space trimmed, line breaks turned into spaces.
    package static func normalizedKeyword(_ keyword: String) -> String {
        keyword.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
            .trimmingCharacters(in: .whitespaces)
    }

    static let selectByIDSQL = "SELECT \(selectColumns) FROM asset WHERE id = ?"
    static let selectByKeySQL = "SELECT \(selectColumns) FROM asset WHERE key = ?"

    static let insertSQL =
        "INSERT INTO asset (\(columnNames.dropFirst().joined(separator: ", "))) VALUES ("
        + Array(repeating: "?", count: columnNames.count - 1).joined(separator: ", ") + ")"

    static let updateSQL = updateSQL(columns: Array(1..<columnNames.count))

    /// The columns a read of an object's metadata (its head, its image's headers) sets: see
    /// ``StoreTransaction/fillMetadata(_:over:)``.
    static let metadataColumns = [
        "contentType", "creationDate", "modificationDate", "mediaType", "pixelWidth", "pixelHeight", "orientation",
        "contentSHA256", "latitude", "longitude", "altitude", "imageMetadataPending",
    ].map { name in columnNames.firstIndex(of: name)! }

    static let updateMetadataSQL = updateSQL(columns: metadataColumns)

    /// `UPDATE asset SET` these columns (positions in ``columnNames``, bound as parameters 1…n) `WHERE id = ?`
    /// (parameter n + 1).
    static func updateSQL(columns: [Int]) -> String {
        "UPDATE asset SET " + columns.map { "\(columnNames[$0]) = ?" }.joined(separator: ", ") + " WHERE id = ?"
    }
}
