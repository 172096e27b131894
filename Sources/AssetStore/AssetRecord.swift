package import Essentials
package import Foundation

/// The kind of media an asset holds.
public enum MediaType: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Neither an image, a video nor audio, or not known.
    case unknown = 0
    /// A photo or other still image.
    case image = 1
    /// A video.
    case video = 2
    /// A sound recording.
    case audio = 3
}

/// How much of an asset is on this machine. The states form a ladder: each one implies the data of the ones
/// below it may (but need not) be present, except that `thumbnail` requires the thumbnail.
package enum StoredAvailability: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Only metadata is local.
    case cloudOnly = 0
    /// The thumbnail is local; the original is not.
    case thumbnail = 1
    /// Some verified byte ranges of the original are local (`partialRanges`, fetched under `partialETag`).
    case partial = 2
    /// The whole original is local, verified, at `localFilePath`.
    case full = 3
}

/// Where an asset's original stands with the bucket. Assets a sync discovered are `uploaded`; an imported asset
/// starts `pendingUpload` and its original is local (`full`) until the bucket holds it.
package enum StoredUploadState: Int, Sendable, Hashable, Codable, CaseIterable {
    /// The bucket holds the original (every asset a sync found).
    case uploaded = 0
    /// Imported here; waiting for the network.
    case pendingUpload = 1
    /// An upload is running (or was running when the library last closed: it resumes).
    case uploading = 2
    /// The last upload failed (`uploadError` says why); the next sync tries again.
    case uploadFailed = 3
}

/// A place on Earth, in degrees (WGS 84) and metres above sea level.
public struct AssetLocation: Sendable, Hashable, Codable {
    /// Degrees north (negative: south), −90…90.
    public var latitude: Double
    /// Degrees east (negative: west), −180…180.
    public var longitude: Double
    /// Metres above sea level, when known.
    public var altitude: Double?

    /// A location at these coordinates (degrees) and, when known, altitude (metres).
    public init(latitude: Double, longitude: Double, altitude: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }

    /// Whether the coordinates are on Earth (finite, in range).
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
            && (altitude?.isFinite ?? true)
    }

    /// `latitude,longitude[,altitude]`, as `x-amz-meta-location` and the journal carry it.
    public var serialized: String {
        altitude.map { "\(latitude),\(longitude),\($0)" } ?? "\(latitude),\(longitude)"
    }

    /// Parses ``serialized``; `nil` for anything else or a place off the globe.
    public init?(serialized text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard parts.count == 2 || parts.count == 3, let latitude = parts[0], let longitude = parts[1] else {
            return nil
        }
        if parts.count == 3 && parts[2] == nil { return nil }
        self.init(latitude: latitude, longitude: longitude, altitude: parts.count == 3 ? parts[2] : nil)
        guard isValid else { return nil }
    }
}

/// One asset as the store keeps it: remote facts from the bucket listing and HEAD, and local state.
///
/// The store enforces the availability invariants on every write (see ``AssetStoreError/invariantViolation(_:)``):
/// - `full` ⇒ `localFilePath`, `verifiedSize` and `verifiedETag` are set and `verifiedETag == etag`;
/// - `partial` ⇒ `partialRanges` is not empty and `partialETag == etag`;
/// - `thumbnail` ⇒ `thumbnailPresent`;
/// - `cloudOnly` / `thumbnail` ⇒ no partial ranges and no local file;
/// - not `uploaded` ⇒ `full` (the only copy of an imported original is the local one).
package struct AssetRecord: Sendable, Hashable, Codable {
    /// The stable local identifier; `nil` until the store inserts the record. Never reused after a delete.
    package var id: Int64?
    /// Bucket key of the original; unique in the store.
    package var key: String
    package var size: Int64
    package var etag: String
    package var lastModified: Date
    package var contentType: String?
    package var creationDate: Date
    package var modificationDate: Date
    package var mediaType: MediaType
    package var pixelWidth: Int
    package var pixelHeight: Int
    /// EXIF orientation, 1…8.
    package var orientation: Int
    package var isFavorite: Bool
    package var isHidden: Bool
    package var thumbnailKey: String?
    package var thumbnailSize: Int64?
    package var thumbnailETag: String?
    package var thumbnailPresent: Bool
    package var availability: StoredAvailability
    package var partialRanges: ByteRangeSet
    package var partialETag: String?
    package var localFilePath: String?
    package var verifiedSize: Int64?
    package var verifiedETag: String?
    package var isPinned: Bool
    package var lastAccessDate: Date?
    /// A user-given title (shared through the bucket).
    package var title: String?
    /// User keywords, in the order given (shared through the bucket).
    package var keywords: [String] = []
    /// When the asset went to the trash; `nil` when it is not in the trash.
    package var trashedDate: Date?
    /// Whether the bucket holds the original yet.
    package var uploadState: StoredUploadState = .uploaded
    /// Why the last upload failed (with ``StoredUploadState/uploadFailed``).
    package var uploadError: String?
    /// Lower-case hex SHA-256 of the original, when known (imports; objects carrying `x-amz-meta-sha256`).
    package var contentSHA256: String?
    /// The ETag of the metadata sidecar object last merged into this row (nil: none merged yet).
    package var sidecarETag: String?
    /// Opaque to the store: when and where each shared property was last set (the library's merge clock).
    package var metadataStamps: String?
    /// Whether shared properties changed here and are not in the bucket yet.
    package var metadataDirty = false
    /// Where the photo was taken (GPS from the file or `x-amz-meta-location`), or `nil`.
    package var location: AssetLocation?
    /// What of the object's metadata a sync has still to read (``MetadataFill``): the listing's facts are in the
    /// row from the start; the object's head and an image's own headers follow.
    package var metadataFill = MetadataFill.complete
    /// The revision of the asset's current content edit (rendered version plus adjustment data), or `nil` when the
    /// asset shows its original. Opaque to the store (the library's revision identifier).
    package var editRevision: String?
    /// What of the current edit is on disk (meaningful only with ``editRevision``): `full` with its rendered
    /// version, `thumbnail` with only its thumbnail, else `cloudOnly` (never `partial`).
    package var editAvailability: StoredAvailability = .cloudOnly
    /// A video's length in seconds, as its container says (0: not a video, or not known yet).
    package var duration: Double = 0
    /// A video's codec (its sample entry code: `avc1`, `hvc1`, …), when known.
    package var videoCodec: String?
    /// A video's frames per second (0 when not known).
    package var frameRate: Double = 0

    /// Whether the current edit's rendered version is on disk.
    package var renderedPresent: Bool { editRevision != nil && editAvailability == .full }

    /// The availability of the version the asset shows: its original's, or, for an edited asset, its edit's.
    /// (Inlinable, like ``isTrashed``: ``TestedFields`` reads it where a record is not to be copied.)
    @inlinable
    package var currentAvailability: StoredAvailability { editRevision == nil ? availability : editAvailability }

    /// `true` when the asset is in the trash.
    @inlinable
    package var isTrashed: Bool { trashedDate != nil }

    /// The `lastModified` of an original uploaded from this library and not listed since (an upload's answer
    /// carries no date); the next listing fills it in without a HEAD.
    package static let notListedYet = Date(timeIntervalSinceReferenceDate: 0)

    /// When the asset was added to the bucket, as sorted and tested (seconds since the reference date): the
    /// object's Last-Modified; for one not listed yet (``notListedYet``: an import of this library, another
    /// library's upload the journal announced) ``notListedAddedKey``, after every listed one — it has just come.
    @inlinable
    package var addedKey: Double {
        lastModified == Self.notListedYet ? Self.notListedAddedKey : lastModified.timeIntervalSinceReferenceDate
    }

    /// The ``addedKey`` of an asset not listed yet: later than any date a listing gives (year 285 million).
    package static let notListedAddedKey = 9e15

    /// ``addedKey`` in SQL, on the `asset` table's columns; the schema indexes this very expression
    /// (`asset_added`), so a query must spell it the same way.
    package static let addedKeySQL = "(CASE WHEN lastModified = 0 THEN 9e15 ELSE lastModified END)"

    /// A record as the listing knows it: cloud-only, no local state.
    package init(
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
    package var pixelCount: Int64 { Int64(pixelWidth) * Int64(pixelHeight) }

    /// Forgets the local original, whole or in ranges: availability falls back to `thumbnail` when the thumbnail
    /// is present, else `cloudOnly`. Removing the files is the caller's part.
    package mutating func dropLocalOriginal() {
        availability = thumbnailPresent ? .thumbnail : .cloudOnly
        localFilePath = nil
        verifiedSize = nil
        verifiedETag = nil
        partialRanges = ByteRangeSet()
        partialETag = nil
    }

    /// Clears the properties shared through the bucket and their merge state (a row that starts over from a
    /// listing).
    package mutating func resetSharedMetadata() {
        isFavorite = false
        isHidden = false
        title = nil
        keywords = []
        trashedDate = nil
        sidecarETag = nil
        metadataStamps = nil
        metadataDirty = false
    }

    /// `true` when `other` differs in what identifies the original's bytes (ETag or size).
    package func contentDiffers(from other: AssetRecord) -> Bool {
        etag != other.etag || size != other.size || editRevision != other.editRevision
    }
}

/// What of an object's metadata the catalog has still to read from the bucket (the `imageMetadataPending` column).
///
/// A first sync of objects other tools wrote commits each listing page at once — key, size, ETag and the
/// listing's date, enough to fetch, sort and count every asset — and reads the rest afterwards, object by object
/// (``objectHead``); what it read replaces the provisional fields as an ordinary change.
package enum MetadataFill: Int, Sendable, Hashable, Codable {
    /// Everything the bucket says of the object is in the row.
    case complete = 0
    /// The object's head was read and carries no `x-amz-meta-*` fields of ours; the image's own headers (EXIF:
    /// capture date, pixel size, orientation, GPS) have not been read.
    case imageHeaders = 1
    /// Only the listing is in the row: the creation date is the listing's date, the pixel size 0, the media type
    /// guessed from the key. The object's head (and, for another tool's image, its headers) is still to read.
    case objectHead = 2
}
