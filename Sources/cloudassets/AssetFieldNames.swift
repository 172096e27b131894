import CloudAssets

// The words `ls`, `ls --json` and `status` print for the library's enums, and `ls --state`/`--type` accept.

/// `cloudassets`' names of the availability states (`ls --state`, the STATE column, `status`).
extension AssetAvailability {
    /// The name printed and accepted for the state.
    var name: String {
        switch self {
        case .cloudOnly: "cloudOnly"
        case .thumbnail: "thumbnail"
        case .partial: "partial"
        case .full: "full"
        }
    }

    /// The state with this name, in any letter case.
    init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = match
    }
}

/// `cloudassets`' names of the upload states (the `uploadState` field of `ls --json`).
extension UploadState {
    /// The name printed for the state.
    var name: String {
        switch self {
        case .uploaded: "uploaded"
        case .pendingUpload: "pending"
        case .uploading: "uploading"
        case .uploadFailed: "failed"
        }
    }
}

/// `cloudassets`' names of the media types (`ls --type`, the `mediaType` field of `ls --json`).
extension MediaType {
    /// The name printed and accepted for the media type.
    var name: String {
        switch self {
        case .image: "image"
        case .video: "video"
        case .audio: "audio"
        case .unknown: "unknown"
        }
    }

    /// The media type with this name, in any letter case.
    init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = match
    }
}
