import AssetStore
import Essentials
import Foundation
import Images
import S3Transfer
import Video

/// Turns a listing entry plus (optionally) its HEAD into a store row, reading the `x-amz-meta-*` fields of
/// the bucket layout: creation-date (ISO 8601), pixel-width, pixel-height, media-type, orientation, sha256,
/// location (`latitude,longitude[,altitude]`), and for a video duration (seconds), video-codec and frame-rate.
enum RemoteMetadata {
    static func record(
        for object: S3ObjectSummary, head: S3ObjectHead?, image: ImageMetadata? = nil, video: VideoMetadata? = nil,
        thumbnail: S3ObjectSummary?, source: AssetLibrary.MetadataSource
    ) -> AssetRecord {
        var record = record(
            for: object, metadata: head?.metadata ?? [:], contentType: head?.contentType, thumbnail: thumbnail)
        // A video whose fields do not give its length (another tool's, or one an older library uploaded): its
        // container does.
        if let head, record.mediaType == .video, head.metadata["duration"] == nil {
            if let video {
                apply(video, to: &record, ours: head.metadata["creation-date"] != nil)
            } else {
                record.metadataFill = .imageHeaders
            }
            return record
        }
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

    /// A video's container where the bucket's fields do not give its length: length, codec, frame rate and
    /// displayed size, and — for another tool's video (not `ours`) — its capture date and place when it has them.
    static func apply(_ video: VideoMetadata, to record: inout AssetRecord, ours: Bool) {
        record.duration = video.duration
        record.videoCodec = video.codec
        record.frameRate = video.frameRate
        if video.pixelWidth > 0, video.pixelHeight > 0 {
            record.pixelWidth = video.pixelWidth
            record.pixelHeight = video.pixelHeight
            record.orientation = 1
        }
        if !ours {
            if let date = video.creationDate { record.creationDate = date }
            if let place = video.location,
                let location = Optional(
                    AssetLocation(latitude: place.latitude, longitude: place.longitude, altitude: place.altitude)),
                location.isValid
            {
                record.location = location
            }
        }
        record.metadataFill = .complete
    }

    /// The `x-amz-meta-*` fields of a video's container facts (what ``record(for:metadata:contentType:thumbnail:)``
    /// reads back).
    static func videoFields(of record: AssetRecord) -> [String: String] {
        var fields = ["duration": String(record.duration)]
        if let codec = record.videoCodec { fields["video-codec"] = codec }
        if record.frameRate > 0 { fields["frame-rate"] = String(record.frameRate) }
        return fields
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
        if mediaType == .video {
            // Bounded and finite, or not taken: these come from whoever wrote the object.
            record.duration =
                meta["duration"].flatMap(Double.init).flatMap { $0.isFinite && $0 >= 0 && $0 < 1e9 ? $0 : nil } ?? 0
            record.videoCodec = meta["video-codec"].flatMap {
                $0.utf8.count <= 16 && $0.allSatisfy(\.isASCII) ? $0 : nil
            }
            record.frameRate =
                meta["frame-rate"].flatMap(Double.init).flatMap { $0.isFinite && $0 >= 0 && $0 < 10_000 ? $0 : nil }
                ?? 0
        }
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
