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
        switch KeyExtension.of(key) {
        case "jpg", "jpeg", "png", "heic", "heif": true
        default: false
        }
    }

    /// What a header read found: the image's metadata, its embedded EXIF thumbnail when it has one and the bytes
    /// read hold all of it, the whole file when the read took all of it (a small image), and how many bytes were
    /// read.
    struct Found: Sendable {
        var metadata: ImageMetadata
        var embeddedThumbnail: [UInt8]?
        var wholeFile: [UInt8]?
        var bytesRead: Int

        /// What a thumbnail can be made from without another request: the embedded thumbnail (a few KiB to
        /// decode), else the whole small image; nil when the bytes read hold neither.
        var thumbnailSource: ThumbnailBytes? {
            if let embeddedThumbnail { return .embedded(embeddedThumbnail) }
            return wholeFile.map { .wholeImage($0) }
        }
    }

    /// Bytes a thumbnail is made from.
    enum ThumbnailBytes: Sendable {
        /// An EXIF thumbnail: a bare JPEG, oriented as its original.
        case embedded([UInt8])
        /// A whole image file (its own EXIF orientation applies).
        case wholeImage([UInt8])

        var count: Int {
            switch self {
            case .embedded(let bytes), .wholeImage(let bytes): bytes.count
            }
        }
    }

    /// Reads an image's first `firstBytes` (and once more, up to ``byteLimit``, when its headers run past them),
    /// if it is still the version `etag` names. With `thumbnailSlack` above 0, an embedded thumbnail that ends past
    /// the bytes read costs one more read of at most that many bytes. A file that is not an image, or whose
    /// headers do not parse, gives `nil`, never an error.
    /// - Throws: The ranged GETs' `S3Error`.
    static func read(
        key: String, size: Int64, etag: String, client: S3Client, bucket: String, firstBytes: Int,
        thumbnailSlack: Int = 0
    ) async throws(S3Error) -> Found? {
        guard size > 0 else { return nil }
        return try await readWithHead(
            key: key, size: size, etag: etag, client: client, bucket: bucket, firstBytes: firstBytes,
            thumbnailSlack: thumbnailSlack, unlessOurs: false
        ).found
    }

    /// ``read(key:size:etag:client:bucket:firstBytes:thumbnailSlack:)`` that also returns the object's head, as
    /// the first ranged GET's response carries it (size, ETag, `x-amz-meta-*`): one request instead of a HEAD and a
    /// GET. With `unlessOurs`, an object whose head carries our fields (`creation-date`) is not parsed (`found` is
    /// nil). `size` must be above 0.
    /// - Throws: The ranged GETs' `S3Error` (``S3Error/preconditionFailed`` when the object is no longer `etag`).
    static func readWithHead(
        key: String, size: Int64, etag: String, client: S3Client, bucket: String, firstBytes: Int,
        thumbnailSlack: Int = 0, unlessOurs: Bool
    ) async throws(S3Error) -> (head: S3ObjectHead, found: Found?) {
        let first = min(size, Int64(max(1, firstBytes)))
        let fileLength = Int(clamping: size)
        let (data, head) = try await client.getObject(bucket: bucket, key: key, range: 0..<first, ifMatch: etag)
        if unlessOurs, head.metadata["creation-date"] != nil { return (head, nil) }
        var bytes = [UInt8](data)
        func readOn(to end: Int) async throws(S3Error) {
            bytes += try await client.getObject(
                bucket: bucket, key: key, range: Int64(bytes.count)..<Int64(end), ifMatch: etag
            ).0
        }
        // try?: unparsable headers: the asset keeps no image metadata
        var parsed = try? ImageMetadata.parse(head: bytes, fileLength: fileLength)
        if case .needMore(let count)? = parsed, count > bytes.count, count <= byteLimit, Int64(count) <= size {
            // The headers run on (a long EXIF block before the frame header): the rest of them.
            try await readOn(to: count)
            // try?: unparsable headers: the asset keeps no image metadata
            parsed = try? ImageMetadata.parse(head: bytes, fileLength: fileLength)
        }
        guard case .parsed(let image)? = parsed else { return (head, nil) }
        if let range = image.embeddedThumbnail, range.upperBound > bytes.count,
            range.upperBound <= bytes.count + thumbnailSlack, Int64(range.upperBound) <= size
        {
            // The thumbnail sits at the end of the EXIF block, past what the headers needed.
            try await readOn(to: range.upperBound)
        }
        let thumbnail = image.embeddedThumbnail.flatMap { $0.upperBound <= bytes.count ? Array(bytes[$0]) : nil }
        return (
            head,
            Found(
                metadata: image, embeddedThumbnail: thumbnail, wholeFile: Int64(bytes.count) == size ? bytes : nil,
                bytesRead: bytes.count)
        )
    }
}
