import CloudAssets
import Essentials
import Foundation

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

    /// The asset as the page reads it. `width` and `height` are the size it is drawn at (``Asset/pixelWidth``,
    /// ``Asset/pixelHeight``: orientation applied, an edit's rendered size), as the page lays it out.
    var galleryJSON: String {
        let name = key.split(separator: "/").last.map(String.init) ?? key
        let created = Int64((creationDate.timeIntervalSince1970 * 1000).rounded())
        let version =
            "\(etag)-\(modificationDate.timeIntervalSince1970)-\(availability.rawValue)-\(hasThumbnail)"
            + "-\(editRevision ?? "")"
        return "{\"id\":\(JSONText.quoted(localIdentifier)),\"name\":\(JSONText.quoted(name)),"
            + "\"created\":\(created),\"size\":\(size),\"media\":\"\(mediaType.galleryName)\","
            + "\"width\":\(pixelWidth),\"height\":\(pixelHeight),"
            + "\"availability\":\"\(availability.galleryName)\",\"upload\":\"\(uploadState.galleryName)\","
            + "\"badge\":\"\(galleryBadge)\",\"favorite\":\(isFavorite),\"pinned\":\(isPinned),"
            + "\"thumbnail\":\(hasThumbnail),\"edited\":\(hasAdjustments),\"duration\":\(duration),"
            + "\"version\":\(JSONText.quoted(version))}"
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
