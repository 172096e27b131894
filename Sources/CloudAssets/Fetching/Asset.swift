public import AssetStore
import Essentials
public import Foundation

/// How much of an asset is on this machine (PhotoKit's "in cloud" vs local, with the steps in between).
public enum AssetAvailability: Int, Sendable, Hashable, CaseIterable, Comparable {
    /// Only the metadata is local; any data request needs the network.
    case cloudOnly = 0
    /// The thumbnail is local; the original is not.
    case thumbnail = 1
    /// Some verified byte ranges of the original are local (see ``Asset/partialRanges``).
    case partial = 2
    /// The whole original is local and verified.
    case full = 3

    /// Orders availabilities by how much is local: `cloudOnly` < `thumbnail` < `partial` < `full`.
    public static func < (lhs: AssetAvailability, rhs: AssetAvailability) -> Bool { lhs.rawValue < rhs.rawValue }

    init(_ stored: StoredAvailability) { self = AssetAvailability(rawValue: stored.rawValue)! }
    var stored: StoredAvailability { StoredAvailability(rawValue: rawValue)! }
}

/// Where an asset's original stands with the bucket.
public enum UploadState: Int, Sendable, Hashable, CaseIterable {
    /// The bucket holds the original (every asset a sync found, and imports once uploaded).
    case uploaded = 0
    /// Imported on this device and waiting to go up (offline, or behind other uploads).
    case pendingUpload = 1
    /// Going up now.
    case uploading = 2
    /// The last attempt failed (see ``Asset/uploadError``); the next sync tries again. The original stays local.
    case uploadFailed = 3

    init(_ stored: StoredUploadState) { self = UploadState(rawValue: stored.rawValue)! }
    var stored: StoredUploadState { StoredUploadState(rawValue: rawValue)! }
}

/// An immutable description of one asset at the moment it was read (PhotoKit's `PHAsset`).
///
/// Two values are equal when every property is equal, so a changed asset is not equal to its earlier value;
/// ``localIdentifier`` alone identifies the asset across changes.
public struct Asset: Sendable, Hashable, Identifiable {
    /// The catalog's row for this asset (never reused); ``localIdentifier`` is its public form.
    let rowID: Int64
    /// Bucket key of the original.
    public let key: String
    /// Size of the original in bytes.
    public let size: Int64
    /// ETag of the original as the bucket last reported it.
    public let etag: String
    /// When the photo or video was taken: the original's `x-amz-meta-creation-date`, else its EXIF capture date
    /// (read from the image's first bytes at sync, or from an imported file), else the object's Last-Modified
    /// (or an imported file's date).
    public let creationDate: Date
    /// When the asset's content last changed: the object's Last-Modified as last listed, the time of an import, or
    /// the time of its latest content edit or revert.
    public let modificationDate: Date
    /// When the asset was added to the bucket: the object's Last-Modified; `nil` until a listing gives it (an
    /// import of this library, or another library's upload the journal announced: just added, so
    /// ``AssetSortDescriptor/Key/addedDate`` puts them after every dated one, and
    /// ``AssetPredicate/addedSince(_:)`` counts them in). What Recently Added shows.
    public let addedDate: Date?
    /// Image, video, audio or unknown: the original's `x-amz-meta-media-type`, else guessed from its key's
    /// extension (imports: from the file's signature and name).
    public let mediaType: MediaType
    /// A video's length in seconds (PhotoKit's `duration`), read from its container (`mvhd`, or where a
    /// fragmented file's last fragment ends) — by a sync with a few ranged reads of the original, by an import
    /// from the file. 0 for photos, and for a video whose length is not known yet (``provisionalFields``).
    public let duration: TimeInterval
    /// A video's codec as its container names it (`avc1` H.264, `hvc1`/`hev1` HEVC, `av01`, `vp09`, …); nil for
    /// photos and when not known.
    public let videoCodec: String?
    /// A video's frames per second, from its sample table; 0 for photos and when not known.
    public let frameRate: Double
    /// The width the asset is drawn at, in pixels (PhotoKit's `pixelWidth`): that of the version it shows. With
    /// an edit (``hasAdjustments``), the edit's rendered version's width, as the edit recorded it; otherwise the
    /// original's with its EXIF ``orientation`` applied (``storedPixelHeight`` for orientations 5–8, which turn
    /// the picture a quarter, else ``storedPixelWidth``). An image request of the current version at
    /// ``AssetLibrary/maximumImageSize`` answers ``pixelWidth`` × ``pixelHeight`` pixels, so a grid can be laid
    /// out from these numbers before any image is decoded. 0 when unknown.
    public let pixelWidth: Int
    /// The height the asset is drawn at, in pixels (PhotoKit's `pixelHeight`): see ``pixelWidth``.
    public let pixelHeight: Int
    /// The original's encoded width: its pixel rows as stored in the file, before the EXIF ``orientation`` is
    /// applied, whatever edits the asset has (a HEIF's size after its own transforms; its orientation is 1).
    /// 0 when unknown. ``pixelWidth`` is the width drawn.
    public let storedPixelWidth: Int
    /// The original's encoded height, before the EXIF ``orientation`` is applied, whatever edits the asset has.
    /// 0 when unknown. ``pixelHeight`` is the height drawn.
    public let storedPixelHeight: Int
    /// EXIF orientation, 1…8.
    public let orientation: Int
    /// Whether the user marked the asset a favourite (shared with every library on the bucket).
    public let isFavorite: Bool
    /// Whether the asset is hidden: left out of fetches unless ``FetchOptions/includeHiddenAssets`` is set
    /// (shared with every library on the bucket).
    public let isHidden: Bool
    /// How much of the version the asset shows is local: its original's, or, with ``hasAdjustments``, the edited
    /// version's — `full` only when the rendered version is on disk, else `thumbnail` or `cloudOnly` (a rendered
    /// version is never partial). Fetch predicates on availability use this value.
    public let availability: AssetAvailability
    /// How much of the original is local, whatever edits the asset has (the same as ``availability`` when it has
    /// none).
    public let originalAvailability: AssetAvailability
    /// `true` when the asset has a content edit (PhotoKit's `hasAdjustments`): data and image requests for the
    /// current version deliver the rendered version; the original is unchanged, in the bucket and here.
    public var hasAdjustments: Bool { editRevision != nil }
    /// The current edit's revision identifier (`nil` without one): a new edit, a restore or another library's
    /// edit changes it (see ``AssetLibrary/contentRevisions(of:)``).
    public let editRevision: String?
    /// The verified byte ranges of the original on disk (empty unless ``availability`` is `partial`; the whole
    /// file when `full`).
    public let partialRanges: [Range<Int64>]
    /// `true` when a thumbnail is on disk.
    public let hasThumbnail: Bool
    /// `true` when the original is pinned (never evicted).
    public let isPinned: Bool
    /// When this library's download of the original last completed; `nil` if it never did. With
    /// ``AssetLibrary/Configuration/cacheSizeLimit``, originals are evicted least recently used first, by this date
    /// and the reads this process made since.
    public let lastAccessDate: Date?
    /// A title the user gave the asset (shared with every library on the bucket).
    public let title: String?
    /// The user's keywords, in the order given (shared).
    public let keywords: [String]
    /// When the asset went to the trash (PhotoKit's Recently Deleted); `nil` when it is not in the trash. Trashed
    /// assets are left out of fetches unless ``FetchOptions/includeTrashedAssets`` is set.
    public let trashedDate: Date?
    /// Whether the bucket holds the original yet.
    public let uploadState: UploadState
    /// Why the last upload failed (with ``UploadState/uploadFailed``).
    public let uploadError: String?
    /// Lower-case hex SHA-256 of the original, when known (every import; objects whose metadata carries it).
    public let contentSHA256: String?
    /// Where the photo was taken (from its GPS tags or the bucket's `x-amz-meta-location`): always `nil` in a
    /// library opened with ``AssetLibrary/Configuration/locationAccess`` `.denied` (the default), like PhotoKit's
    /// `location` for an app that may not see it.
    public let location: AssetLocation?
    /// The fields that are the listing's guesses until a sync reads the object's metadata (empty when every field
    /// is what the bucket and the file say). A first sync commits objects other tools wrote from their listing
    /// alone, so the library is usable at once, and reads the rest right after
    /// (``AssetLibrary/sync(mode:fetchThumbnails:progress:)``); until then ``creationDate`` is the object's
    /// Last-Modified, the pixel size 0, the media type the key's extension's. Reading them is an ordinary change.
    public let provisionalFields: ProvisionalFields

    /// Fields of an ``Asset`` that a sync has not read yet (``Asset/provisionalFields``).
    public struct ProvisionalFields: OptionSet, Sendable, Hashable {
        /// The set's bits, one per field (the static members).
        public let rawValue: Int
        /// The set with these bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// ``Asset/creationDate`` is the object's Last-Modified (the capture date is not read yet).
        public static let creationDate = ProvisionalFields(rawValue: 1 << 0)
        /// ``Asset/pixelWidth``, ``Asset/pixelHeight`` and ``Asset/orientation`` are not known yet (0, 0, 1).
        public static let pixelSize = ProvisionalFields(rawValue: 1 << 1)
        /// ``Asset/location`` is not read yet (`nil`).
        public static let location = ProvisionalFields(rawValue: 1 << 2)
        /// ``Asset/mediaType`` is guessed from the key (the object's `x-amz-meta-media-type` is not read yet).
        public static let mediaType = ProvisionalFields(rawValue: 1 << 3)
        /// ``Asset/contentSHA256`` may yet come from the object's metadata.
        public static let contentSHA256 = ProvisionalFields(rawValue: 1 << 4)
        /// A video's ``Asset/duration``, ``Asset/videoCodec`` and ``Asset/frameRate`` are not read yet (0, nil, 0).
        public static let videoDetails = ProvisionalFields(rawValue: 1 << 5)
    }

    /// `true` when the asset is in the trash.
    public var isTrashed: Bool { trashedDate != nil }

    /// The stable local identifier, PhotoKit style: never reused, not derived from the bucket key, the same in
    /// every fetch result, change and error (``CloudAssetsError/localIdentifier``) that names this asset.
    public var localIdentifier: String { String(rowID) }

    /// The catalog row a local identifier names: `nil` unless it is written as ``localIdentifier`` writes one
    /// (no sign, no leading zero, no space).
    static func rowID(localIdentifier: String) -> Int64? {
        guard let id = Int64(localIdentifier), String(id) == localIdentifier else { return nil }
        return id
    }

    /// ``localIdentifier`` (`Identifiable`): the asset's one identity in the API.
    public var id: String { localIdentifier }

    /// `true` when the version the asset shows is not fully local.
    public var isInCloud: Bool { availability != .full }

    /// The asset a catalog row describes, its current edit's rendered size read from the catalog's record of the
    /// edit (see ``pixelWidth``); its location only when `revealsLocation` (the library's access). What every
    /// asset handed to the app should be made with.
    init(_ record: AssetRecord, revealsLocation: Bool, store: AssetStore) {
        self.init(record, revealsLocation: revealsLocation, renderedSize: Self.renderedSize(of: record, in: store))
    }

    /// The asset a catalog row describes without reading the catalog: an edited one is given its original's
    /// displayed size (for assets used only by identifier, and placeholders).
    init(_ record: AssetRecord, revealsLocation: Bool) {
        self.init(record, revealsLocation: revealsLocation, renderedSize: nil)
    }

    /// The asset a catalog row describes, drawn at `renderedSize` when it has an edit (`nil`: not known; its
    /// original's displayed size stands in).
    init(_ record: AssetRecord, revealsLocation: Bool, renderedSize: (width: Int, height: Int)?) {
        rowID = record.id ?? 0
        location = revealsLocation ? record.location : nil
        key = record.key
        size = record.size
        etag = record.etag
        creationDate = record.creationDate
        modificationDate = record.modificationDate
        addedDate = record.lastModified == AssetRecord.notListedYet ? nil : record.lastModified
        mediaType = record.mediaType
        duration = record.duration
        videoCodec = record.videoCodec
        frameRate = record.frameRate
        storedPixelWidth = record.pixelWidth
        storedPixelHeight = record.pixelHeight
        if record.editRevision != nil, let renderedSize {
            (pixelWidth, pixelHeight) = renderedSize
        } else if (5...8).contains(record.orientation) {
            (pixelWidth, pixelHeight) = (record.pixelHeight, record.pixelWidth)
        } else {
            (pixelWidth, pixelHeight) = (record.pixelWidth, record.pixelHeight)
        }
        orientation = record.orientation
        isFavorite = record.isFavorite
        isHidden = record.isHidden
        availability = AssetAvailability(record.currentAvailability)
        originalAvailability = AssetAvailability(record.availability)
        editRevision = record.editRevision
        switch record.availability {
        case .full: partialRanges = [0..<record.size]
        case .partial: partialRanges = record.partialRanges.ranges
        case .cloudOnly, .thumbnail: partialRanges = []
        }
        // The thumbnail of the version the asset shows.
        hasThumbnail = record.editRevision != nil ? record.editAvailability != .cloudOnly : record.thumbnailPresent
        isPinned = record.isPinned
        lastAccessDate = record.lastAccessDate
        title = record.title
        keywords = record.keywords
        trashedDate = record.trashedDate
        uploadState = UploadState(record.uploadState)
        uploadError = record.uploadError
        contentSHA256 = record.contentSHA256
        switch record.metadataFill {
        case .complete: provisionalFields = []
        case .imageHeaders:
            provisionalFields =
                record.mediaType == .video
                ? [.creationDate, .pixelSize, .location, .videoDetails] : [.creationDate, .pixelSize, .location]
        case .objectHead:
            provisionalFields = [.creationDate, .pixelSize, .location, .mediaType, .contentSHA256, .videoDetails]
        }
    }

    /// The pixel size of the rendered version of the record's current edit, as the edit's manifest in the catalog
    /// records it; nil without an edit, or when the manifest is gone or unreadable.
    static func renderedSize(of record: AssetRecord, in store: AssetStore) -> (width: Int, height: Int)? {
        guard let id = record.id, let revision = record.editRevision,
            // try?: a size only: nil when unreadable (documented)
            let stored = try? store.editRevisions(of: id).first(where: { $0.revision == revision }),
            let rendered = EditManifest.decode(stored.manifest)?.rendered,
            rendered.pixelWidth > 0, rendered.pixelHeight > 0
        else { return nil }
        return (rendered.pixelWidth, rendered.pixelHeight)
    }

    /// A stand-in for an asset deleted after the fetch result holding it was taken and never loaded before.
    static func deleted(id: Int64) -> Asset {
        var record = AssetRecord(
            key: "", size: 0, etag: "", lastModified: .distantPast, creationDate: .distantPast)
        record.id = id
        return Asset(record, revealsLocation: false)
    }

    /// Hashes what identifies this value of the asset: its identifier, ETag, modification date, availability,
    /// upload state and edit revision (consistent with `==`, which compares every property).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(etag)
        hasher.combine(modificationDate)
        hasher.combine(availability)
        hasher.combine(uploadState)
        hasher.combine(editRevision)
    }
}
