import CloudAssets
import Foundation

/// JSON text built by hand: the shapes are small and fixed, and the event stream's hot path (a change of 1,000
/// assets, a reset of 100,000 identifiers) should not go through a generic encoder.
enum JSONText {
    /// `text` as a JSON string literal (quotes, backslashes and control characters escaped).
    static func quoted(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// The strings as a JSON array.
    static func strings(_ values: [String]) -> String {
        "[" + values.map(quoted).joined(separator: ",") + "]"
    }

    /// Integers as a JSON array.
    static func integers(_ values: some Sequence<Int>) -> String {
        "[" + values.map(String.init).joined(separator: ",") + "]"
    }
}

extension AssetAvailability {
    /// The name the page and the API use.
    var galleryName: String {
        switch self {
        case .cloudOnly: "cloud"
        case .thumbnail: "thumbnail"
        case .partial: "partial"
        case .full: "full"
        }
    }
}

extension UploadState {
    var galleryName: String {
        switch self {
        case .uploaded: "uploaded"
        case .pendingUpload: "pending"
        case .uploading: "uploading"
        case .uploadFailed: "failed"
        }
    }
}

extension MediaType {
    var galleryName: String {
        switch self {
        case .unknown: "unknown"
        case .image: "image"
        case .video: "video"
        case .audio: "audio"
        }
    }
}

extension Asset {
    /// The badge the grid shows: the upload when one is pending or running, else the availability.
    var galleryBadge: String {
        switch uploadState {
        case .pendingUpload, .uploading: "uploading"
        case .uploaded, .uploadFailed: availability.galleryName
        }
    }

    /// The asset as the page reads it.
    var galleryJSON: String {
        let name = key.split(separator: "/").last.map(String.init) ?? key
        let created = Int64((creationDate.timeIntervalSince1970 * 1000).rounded())
        let version = "\(etag)-\(modificationDate.timeIntervalSince1970)-\(availability.rawValue)-\(hasThumbnail)"
        return "{\"id\":\(JSONText.quoted(localIdentifier)),\"name\":\(JSONText.quoted(name)),"
            + "\"created\":\(created),\"size\":\(size),\"media\":\"\(mediaType.galleryName)\","
            + "\"width\":\(pixelWidth),\"height\":\(pixelHeight),"
            + "\"availability\":\"\(availability.galleryName)\",\"upload\":\"\(uploadState.galleryName)\","
            + "\"badge\":\"\(galleryBadge)\",\"favorite\":\(isFavorite),\"pinned\":\(isPinned),"
            + "\"thumbnail\":\(hasThumbnail),\"version\":\(JSONText.quoted(version))}"
    }
}

extension NetworkPolicy {
    var galleryName: String {
        switch self {
        case .allowed: "allowed"
        case .offline: "offline"
        case .userRequestsOnly: "user"
        }
    }

    init?(galleryName: String) {
        switch galleryName {
        case "allowed": self = .allowed
        case "offline": self = .offline
        case "user": self = .userRequestsOnly
        default: return nil
        }
    }
}
