import Foundation

/// How far one asset's upload has come.
public struct AssetUploadProgress: Sendable, Hashable {
    /// The asset's local identifier.
    public var localIdentifier: String
    /// Bytes the bucket has acknowledged or is receiving (parts acknowledged in an earlier run included).
    public var bytesSent: Int64
    /// The original's size.
    public var totalBytes: Int64
}

/// An import whose upload failed: its original stays in the library, and the next sync (or
/// ``AssetLibrary/retryFailedUploads()``) tries again.
public struct UploadFailure: Sendable, Hashable {
    /// The asset.
    public var localIdentifier: String
    /// The key it was to be uploaded to.
    public var key: String
    /// Why the last attempt failed, as one line.
    public var reason: String
}

/// The state of the library's uploads at one moment (``AssetLibrary/uploads``).
public struct UploadStatus: Sendable, Hashable {
    /// Imports waiting to go up.
    public var pending = 0
    /// Imports going up (or interrupted while going up: they resume).
    public var uploading = 0
    /// Imports whose last upload failed (``AssetLibrary/retryFailedUploads()``, and every sync, try again).
    public var failed = 0
    /// Shared-property changes (favourite, title, trash…) not in the bucket yet.
    public var unsharedEdits = 0
    /// Content edit revisions (rendered versions, reverts) not in the bucket yet.
    public var unsharedContentEdits = 0
    /// Albums and folders changed here whose change is not in the bucket yet.
    public var unsharedCollections = 0
    /// Progress of the uploads running in this process.
    public var inFlight: [AssetUploadProgress] = []
    /// Whether this library's background worker is running.
    public var isActive = false
    /// The imports whose last upload failed, with why (at most ``failureLimit``, oldest first; ``failed`` counts
    /// them all). Filled by ``AssetLibrary/waitForUploads()`` and ``AssetLibrary/uploads``.
    public var failures: [UploadFailure] = []

    /// How many failures ``failures`` lists at most.
    public static let failureLimit = 100

    /// Nothing waiting to go up.
    public var isEmpty: Bool { pending == 0 && uploading == 0 && unsharedEdits == 0 && unsharedContentEdits == 0 }
}
