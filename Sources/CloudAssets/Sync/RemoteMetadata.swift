import AssetStore
import Essentials
import Foundation
import Images
import S3Transfer

/// Turns a listing entry plus (optionally) its HEAD into a store row, reading the `x-amz-meta-*` fields of
/// the bucket layout: creation-date (ISO 8601), pixel-width, pixel-height, media-type, orientation, sha256,
/// location (`latitude,longitude[,altitude]`).
enum RemoteMetadata {
    static func record(
        for object: S3ObjectSummary, head: S3ObjectHead?, image: ImageMetadata? = nil, thumbnail: S3ObjectSummary?,
        source: AssetLibrary.MetadataSource
    ) -> AssetRecord {
        var record = record(
            for: object, metadata: head?.metadata ?? [:], contentType: head?.contentType, thumbnail: thumbnail)
        // Another tool's image: no fields of ours; its own headers (EXIF) say when and where it was taken.
        if let head, head.metadata["creation-date"] == nil, record.mediaType == .image {
            if let image {
                apply(image, to: &record)
            } else {
                record.metadataFill = .imageHeaders
            }
        }
        return record
    }

    /// An image's own headers where the bucket has no fields of ours: pixel size, orientation, and the capture
    /// date and location when it has them (else the listing's last-modified date stays).
    static func apply(_ image: ImageMetadata, to record: inout AssetRecord) {
        record.pixelWidth = image.pixelWidth
        record.pixelHeight = image.pixelHeight
        record.orientation = image.orientation
        if let date = image.captureDate { record.creationDate = date }
        if let location = image.location.flatMap(AssetLocation.init(gps:)) { record.location = location }
        record.metadataFill = .complete
    }

    /// The row for an object of known `x-amz-meta-*` fields (from a HEAD, or a journal entry).
    static func record(
        for object: S3ObjectSummary, metadata meta: [String: String], contentType: String?,
        thumbnail: S3ObjectSummary?
    ) -> AssetRecord {
        let creation = meta["creation-date"].flatMap(HTTPDate.parseInternetDateTime) ?? object.lastModified
        let mediaType =
            meta["media-type"].flatMap(MediaType.init(metadataValue:)) ?? MediaType(guessingFrom: object.key)
        let orientation = meta["orientation"].flatMap { Int($0) }.flatMap { (1...8).contains($0) ? $0 : nil } ?? 1
        var record = AssetRecord(
            key: object.key, size: object.size, etag: object.etag, lastModified: object.lastModified,
            contentType: contentType, creationDate: creation, modificationDate: object.lastModified,
            mediaType: mediaType, pixelWidth: meta["pixel-width"].flatMap { Int($0) }.map { max(0, $0) } ?? 0,
            pixelHeight: meta["pixel-height"].flatMap { Int($0) }.map { max(0, $0) } ?? 0, orientation: orientation,
            thumbnailKey: thumbnail?.key, thumbnailSize: thumbnail?.size, thumbnailETag: thumbnail?.etag)
        // The content hash a library wrote when it uploaded the original (what deduplicates imports).
        record.location = meta["location"].flatMap(AssetLocation.init(serialized:))
        if let hash = meta["sha256"]?.lowercased(), hash.utf8.count == 64, hash.allSatisfy(\.isHexDigit) {
            record.contentSHA256 = hash
        }
        return record
    }
}

extension MediaType {
    /// The `x-amz-meta-media-type` value for this type (nil for `unknown`).
    var metadataValue: String? {
        switch self {
        case .image: "image"
        case .video: "video"
        case .audio: "audio"
        case .unknown: nil
        }
    }

    init?(metadataValue: String) {
        switch metadataValue.lowercased() {
        case "image": self = .image
        case "video": self = .video
        case "audio": self = .audio
        default: return nil
        }
    }

    init(guessingFrom key: String) {
        switch KeyExtension.of(key) {
        case "jpg", "jpeg", "png", "heic", "heif", "gif", "tif", "tiff", "webp", "dng", "raw": self = .image
        case "mov", "mp4", "m4v", "avi", "mkv": self = .video
        case "mp3", "m4a", "wav", "aac", "flac": self = .audio
        default: self = .unknown
        }
    }
}

extension AssetLocation {
    /// The catalog's location for an image's GPS fields; nil when they are out of range.
    init?(gps: GPSLocation) {
        self.init(latitude: gps.latitude, longitude: gps.longitude, altitude: gps.altitude)
        guard isValid else { return nil }
    }
}

/// A key's file-name extension, as the guesses by name read it.
enum KeyExtension {
    /// The last run of the key between dots (the whole key without one), ASCII lower-cased; "" when longer than 8
    /// bytes (no extension matched is). Worked on as bytes: this runs for every listed object.
    static func of(_ key: String) -> String {
        let bytes = key.utf8
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == UInt8(ascii: ".") {
            end = bytes.index(before: end)
        }
        var start = end
        var length = 0
        while start > bytes.startIndex, bytes[bytes.index(before: start)] != UInt8(ascii: ".") {
            start = bytes.index(before: start)
            length += 1
            if length > 8 { return "" }
        }
        return String(
            decoding: bytes[start..<end].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
