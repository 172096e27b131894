import AssetStore
import Foundation
import Images
import Video

#if canImport(Glibc)
    import Glibc
#endif

/// What an import reads from a file: the same fields the bucket layout carries in `x-amz-meta-*`.
///
/// JPEG, PNG and HEIF: pixel size, EXIF orientation, the capture date (`DateTimeOriginal`, with
/// `OffsetTimeOriginal` when present, else read as UTC) and GPS location, read by the `Images` module's header
/// parser. MP4 and QuickTime videos: length, displayed size, codec, frame rate, capture date and place from the
/// container (the `Video` reader, the same a sync runs on the bucket's videos). GIF and anything else: the media
/// type from the file's signature or name, the date from the file system. A file
/// whose headers cannot be read is still imported, with what could be read.
struct ImportMetadata: Sendable, Hashable {
    var mediaType: MediaType
    var contentType: String
    var creationDate: Date
    var pixelWidth = 0
    var pixelHeight = 0
    /// EXIF orientation, 1…8.
    var orientation = 1
    /// Where it was taken (EXIF GPS, a video's ISO 6709 location), when the file says.
    var location: AssetLocation?
    /// A video's length in seconds, codec and frame rate (0, nil, 0 otherwise).
    var duration: Double = 0
    var videoCodec: String?
    var frameRate: Double = 0

    /// Headers past this many bytes are not looked for (EXIF and the frame header sit at the start).
    static let headerLimit = 512 * 1024

    /// The metadata of a file whose first bytes (up to ``headerLimit``) are `head`.
    static func read(head: [UInt8], name: String, fileStatus: stat, fileLength: Int? = nil) -> ImportMetadata {
        let modified = Date(
            timeIntervalSince1970: Double(fileStatus.st_mtim.tv_sec) + Double(fileStatus.st_mtim.tv_nsec) / 1e9)
        var result = ImportMetadata(
            mediaType: MediaType(guessingFrom: name), contentType: contentType(forName: name),
            creationDate: modified)
        if let format = ImageFormat.sniff(head) {
            result.mediaType = .image
            result.contentType = format.contentType
            // The image's own headers: what a header that does not parse leaves is the file system's date.
            if case .parsed(let image)? = try? ImageMetadata.parse(head: head, fileLength: fileLength) {
                result.apply(image)
            } else if format == .png, head.count >= 24, Array(head[12..<16]) == Array("IHDR".utf8) {
                // Chunks past the header that do not read: the header's size still stands.
                result.pixelWidth = Int(head[16..<20].reduce(0) { $0 << 8 | Int($1) })
                result.pixelHeight = Int(head[20..<24].reduce(0) { $0 << 8 | Int($1) })
            }
        } else if head.count >= 12, Array(head[4..<8]) == Array("ftyp".utf8) {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            if ["heic", "heix", "mif1", "msf1", "avif"].contains(brand) {
                result.mediaType = .image
                result.contentType = brand == "avif" ? "image/avif" : "image/heic"
            } else {
                result.mediaType = .video
                result.contentType = brand == "qt  " ? "video/quicktime" : "video/mp4"
            }
        } else if head.starts(with: Array("GIF8".utf8)) {
            result.mediaType = .image
            result.contentType = "image/gif"
        }
        return result
    }

    /// Takes what a video's container says (the displayed size: its rotation applied, orientation 1).
    mutating func apply(_ video: VideoMetadata) {
        var record = AssetRecord(
            key: "", size: 0, etag: "", lastModified: creationDate, contentType: nil, creationDate: creationDate,
            modificationDate: creationDate, mediaType: .video)
        RemoteMetadata.apply(video, to: &record, ours: false)
        duration = record.duration
        videoCodec = record.videoCodec
        frameRate = record.frameRate
        if video.pixelWidth > 0, video.pixelHeight > 0 {
            (pixelWidth, pixelHeight, orientation) = (record.pixelWidth, record.pixelHeight, 1)
        }
        creationDate = record.creationDate
        location = record.location ?? location
    }

    /// Takes the pixel size, orientation, capture date and location an image's headers carry.
    mutating func apply(_ image: ImageMetadata) {
        pixelWidth = image.pixelWidth
        pixelHeight = image.pixelHeight
        orientation = image.orientation
        if let date = image.captureDate { creationDate = date }
        location = image.location.flatMap(AssetLocation.init(gps:))
    }

    static func contentType(forName name: String) -> String {
        switch KeyExtension.of(name) {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "heic", "heif": "image/heic"
        case "gif": "image/gif"
        case "mov": "video/quicktime"
        case "mp4", "m4v": "video/mp4"
        default: "application/octet-stream"
        }
    }
}

extension ImageFormat {
    /// The `Content-Type` of an original in this format.
    var contentType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .heif: "image/heic"
        }
    }
}
