import Foundation
import Images
import S3Transfer

/// A sync's read of a new image's first bytes when its HEAD carries no fields of ours: one ranged GET gives the
/// image's own headers (EXIF capture date, pixel size, orientation, GPS), so an image another tool wrote gets its
/// real capture date without downloading the original.
enum ImageHeaderRead {
    /// Headers that do not fit in this many leading bytes are not read (the image keeps the listing's facts).
    static let byteLimit = 1 << 20

    /// Whether the key names a format whose headers the `Images` parser reads (JPEG, PNG, HEIF).
    static func mayHaveHeaders(key: String) -> Bool {
        switch key.split(separator: ".").last.map({ $0.lowercased() }) ?? "" {
        case "jpg", "jpeg", "png", "heic", "heif": true
        default: false
        }
    }

    /// What a header read found: the image's metadata, and its embedded EXIF thumbnail when the bytes read
    /// hold all of it.
    struct Found: Sendable {
        var metadata: ImageMetadata
        var embeddedThumbnail: [UInt8]?
    }

    /// Reads the first `firstBytes` of an object whose HEAD carried no fields of ours (and once more, up to
    /// ``byteLimit``, when its headers run past them), if it is still the version HEADed. A file that is not an
    /// image, or whose headers do not parse, gives `nil`, never an error.
    /// - Throws: The ranged GET's `S3Error`, as the HEAD's would.
    static func read(
        _ object: S3ObjectSummary, head: S3ObjectHead, client: S3Client, bucket: String, firstBytes: Int
    ) async throws(S3Error) -> Found? {
        let first = min(head.size, Int64(max(1, firstBytes)))
        let fileLength = Int(clamping: head.size)
        var bytes = [UInt8](
            try await client.getObject(bucket: bucket, key: object.key, range: 0..<first, ifMatch: head.etag).0)
        var parsed = try? ImageMetadata.parse(head: bytes, fileLength: fileLength)
        if case .needMore(let count)? = parsed, count > bytes.count, count <= byteLimit, Int64(count) <= head.size {
            // The headers run on (a long EXIF block before the frame header): the rest of them.
            let (more, _) = try await client.getObject(
                bucket: bucket, key: object.key, range: Int64(bytes.count)..<Int64(count), ifMatch: head.etag)
            bytes += more
            parsed = try? ImageMetadata.parse(head: bytes, fileLength: fileLength)
        }
        guard case .parsed(let image)? = parsed else { return nil }
        let thumbnail = image.embeddedThumbnail.flatMap { $0.upperBound <= bytes.count ? Array(bytes[$0]) : nil }
        return Found(metadata: image, embeddedThumbnail: thumbnail)
    }
}
