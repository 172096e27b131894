import Foundation

/// The kind of media an asset holds.
public enum MediaType: Int, Sendable, Hashable, Codable, CaseIterable {
    case unknown = 0
    case image = 1
    case video = 2
    case audio = 3
}

/// How much of an asset is on this machine. The states form a ladder: each one implies the data of the ones
/// below it may (but need not) be present, except that `thumbnail` requires the thumbnail.
public enum StoredAvailability: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Only metadata is local.
    case cloudOnly = 0
    /// The thumbnail is local; the original is not.
    case thumbnail = 1
    /// Some verified byte ranges of the original are local (`partialRanges`, fetched under `partialETag`).
    case partial = 2
    /// The whole original is local, verified, at `localFilePath`.
    case full = 3
}

/// One asset as the store keeps it: remote facts from the bucket listing and HEAD, and local state.
///
/// The store enforces the availability invariants on every write (see ``AssetStoreError/invariantViolation(_:)``):
/// - `full` ⇒ `localFilePath`, `verifiedSize` and `verifiedETag` are set and `verifiedETag == etag`;
/// - `partial` ⇒ `partialRanges` is not empty and `partialETag == etag`;
/// - `thumbnail` ⇒ `thumbnailPresent`;
/// - `cloudOnly` / `thumbnail` ⇒ no partial ranges and no local file.
public struct AssetRecord: Sendable, Hashable, Codable {
    /// The stable local identifier; `nil` until the store inserts the record. Never reused after a delete.
    public var id: Int64?
    /// Bucket key of the original; unique in the store.
    public var key: String
    public var size: Int64
    public var etag: String
    public var lastModified: Date
    public var contentType: String?
    public var creationDate: Date
    public var modificationDate: Date
    public var mediaType: MediaType
    public var pixelWidth: Int
    public var pixelHeight: Int
    /// EXIF orientation, 1…8.
    public var orientation: Int
    public var isFavorite: Bool
    public var isHidden: Bool
    public var thumbnailKey: String?
    public var thumbnailSize: Int64?
    public var thumbnailETag: String?
    public var thumbnailPresent: Bool
    public var availability: StoredAvailability
    public var partialRanges: ByteRangeSet
    public var partialETag: String?
    public var localFilePath: String?
    public var verifiedSize: Int64?
    public var verifiedETag: String?
    public var isPinned: Bool
    public var lastAccessDate: Date?

    /// A record as the listing knows it: cloud-only, no local state.
    public init(
        id: Int64? = nil, key: String, size: Int64, etag: String, lastModified: Date, contentType: String? = nil,
        creationDate: Date, modificationDate: Date? = nil, mediaType: MediaType = .unknown, pixelWidth: Int = 0,
        pixelHeight: Int = 0, orientation: Int = 1, isFavorite: Bool = false, isHidden: Bool = false,
        thumbnailKey: String? = nil, thumbnailSize: Int64? = nil, thumbnailETag: String? = nil,
        thumbnailPresent: Bool = false, availability: StoredAvailability = .cloudOnly,
        partialRanges: ByteRangeSet = ByteRangeSet(), partialETag: String? = nil, localFilePath: String? = nil,
        verifiedSize: Int64? = nil, verifiedETag: String? = nil, isPinned: Bool = false, lastAccessDate: Date? = nil
    ) {
        self.id = id
        self.key = key
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
        self.creationDate = creationDate
        self.modificationDate = modificationDate ?? lastModified
        self.mediaType = mediaType
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.orientation = orientation
        self.isFavorite = isFavorite
        self.isHidden = isHidden
        self.thumbnailKey = thumbnailKey
        self.thumbnailSize = thumbnailSize
        self.thumbnailETag = thumbnailETag
        self.thumbnailPresent = thumbnailPresent
        self.availability = availability
        self.partialRanges = partialRanges
        self.partialETag = partialETag
        self.localFilePath = localFilePath
        self.verifiedSize = verifiedSize
        self.verifiedETag = verifiedETag
        self.isPinned = isPinned
        self.lastAccessDate = lastAccessDate
    }

    /// `pixelWidth * pixelHeight`, the "pixel count" sort key.
    public var pixelCount: Int64 { Int64(pixelWidth) * Int64(pixelHeight) }

    /// Forgets the local original, whole or in ranges: availability falls back to `thumbnail` when the thumbnail
    /// is present, else `cloudOnly`. Removing the files is the caller's part.
    public mutating func dropLocalOriginal() {
        availability = thumbnailPresent ? .thumbnail : .cloudOnly
        localFilePath = nil
        verifiedSize = nil
        verifiedETag = nil
        partialRanges = ByteRangeSet()
        partialETag = nil
    }

    /// `true` when `other` differs in what identifies the original's bytes (ETag or size).
    public func contentDiffers(from other: AssetRecord) -> Bool {
        etag != other.etag || size != other.size
    }
}
