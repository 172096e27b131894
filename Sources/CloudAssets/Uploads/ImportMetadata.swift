import AssetStore
import Foundation
import Images

#if canImport(Glibc)
    import Glibc
#endif

/// What an import reads from a file: the same fields the bucket layout carries in `x-amz-meta-*`.
///
/// JPEG, PNG and HEIF: pixel size, EXIF orientation, the capture date (`DateTimeOriginal`, with
/// `OffsetTimeOriginal` when present, else read as UTC) and GPS location, read by the `Images` module's header
/// parser. GIF, videos and anything else: the media type from the file's signature or name, the date from the
/// file system. A file
/// whose headers cannot be read is still imported, with what could be read.
struct ImportMetadata: Sendable, Hashable {
    var mediaType: MediaType
    var contentType: String
    var creationDate: Date
    var pixelWidth = 0
    var pixelHeight = 0
    /// EXIF orientation, 1…8.
    var orientation = 1
    /// Where it was taken (EXIF GPS), when the image says.
    var location: AssetLocation?

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
