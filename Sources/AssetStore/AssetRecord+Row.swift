import Essentials
import Foundation
import GRDB

/// Mapping between ``AssetRecord`` and the `asset` table, by column position (fast path for bulk reads/writes).
extension AssetRecord {
    /// The stored columns, in the order used by ``init(raw:)`` and ``bindColumns(to:)``.
    static let columnNames = [
        "id", "key", "size", "etag", "lastModified", "contentType", "creationDate", "modificationDate", "mediaType",
        "pixelWidth", "pixelHeight", "orientation", "isFavorite", "isHidden", "thumbnailKey", "thumbnailSize",
        "thumbnailETag", "thumbnailPresent", "availability", "partialRanges", "partialETag", "localFilePath",
        "verifiedSize", "verifiedETag", "isPinned", "lastAccessDate", "title", "keywords", "trashedDate",
        "uploadState", "uploadError", "contentSHA256", "sidecarETag", "metadataStamps", "metadataDirty",
        "latitude", "longitude", "altitude", "imageMetadataPending", "editRevision", "editAvailability", "duration",
        "videoCodec", "frameRate",
    ]
    static let selectColumns = columnNames.joined(separator: ", ")

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
        "contentSHA256", "latitude", "longitude", "altitude", "imageMetadataPending", "duration", "videoCodec",
        "frameRate",
    ].map { name in columnNames.firstIndex(of: name)! }

    /// Takes what a read of the object says of it — the fields of ``metadataColumns`` except the content hash,
    /// which each caller merges by its own rule: the one list an upsert and a metadata fill both copy.
    mutating func takeObjectMetadata(from read: AssetRecord) {
        contentType = read.contentType
        creationDate = read.creationDate
        modificationDate = read.modificationDate
        mediaType = read.mediaType
        pixelWidth = read.pixelWidth
        pixelHeight = read.pixelHeight
        orientation = read.orientation
        location = read.location
        metadataFill = read.metadataFill
        duration = read.duration
        videoCodec = read.videoCodec
        frameRate = read.frameRate
    }

    /// `UPDATE asset SET` these columns (positions in ``columnNames``, bound as parameters 1…n) `WHERE id = ?`
    /// (parameter n + 1).
    static func updateSQL(columns: [Int]) -> String {
        "UPDATE asset SET " + columns.map { "\(columnNames[$0]) = ?" }.joined(separator: ", ") + " WHERE id = ?"
    }
}
