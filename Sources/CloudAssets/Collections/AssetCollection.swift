import AssetStore
public import Foundation

/// Something a change request can name as a collection: an ``AssetCollection``, a ``CollectionList`` or the
/// placeholder of one created in the same ``AssetLibrary/performChanges(_:)`` call.
public protocol CollectionIdentifying: Sendable {
    /// The collection's local identifier.
    var localIdentifier: String { get }
}

/// An album or a smart album (PhotoKit's `PHAssetCollection`): a value read from the library when it was fetched.
///
/// A user album is an ordered list of assets that the app (or the user) made; a smart album is derived from the
/// catalog (favourites, videos, …), kept current without writes of its own, and cannot be changed directly. An
/// asset can be in any number of albums; deleting an album never deletes its assets.
public struct AssetCollection: Sendable, Hashable, Identifiable, CollectionIdentifying {
    /// What the collection is.
    public enum Kind: Sendable, Hashable {
        /// An album the user made: its assets in its own order.
        case album
        /// A collection the library derives from its assets.
        case smartAlbum
    }

    /// Which album or smart album.
    public enum Subtype: Sendable, Hashable {
        /// A user album.
        case albumRegular
        /// The originals directly in a folder of the bucket's keys (``AssetLibrary/Configuration/keyFoldersAsAlbums``),
        /// in key order; follows the keys, cannot be changed by requests (PhotoKit's synced-folder album).
        case albumKeyFolder
        /// Favourites (not hidden, not in the trash).
        case smartAlbumFavorites
        /// Assets added to the bucket in the last 30 days (``Asset/addedDate``; not hidden, not in the trash),
        /// newest first. The 30 days count back from the fetch: a fetch result keeps its window (a change adds to
        /// it; an asset does not age out of a result, only out of the next fetch).
        case smartAlbumRecentlyAdded
        /// Videos (not hidden, not in the trash).
        case smartAlbumVideos
        /// Hidden assets (not in the trash).
        case smartAlbumHidden
        /// Assets in the trash, until they are purged (PhotoKit's Recently Deleted).
        case smartAlbumRecentlyDeleted
        /// Assets with a content edit (not hidden, not in the trash).
        case smartAlbumEdited
    }

    /// Stable: a user album keeps it for its lifetime (a lower-case UUID); a smart album's names its subtype; a
    /// folder-of-keys album's is `keys:` and its folder (`keys:originals/Trips/Rome/`).
    public let localIdentifier: String
    /// The title (a smart album's is its English name).
    public let title: String
    /// Album or smart album.
    public let kind: Kind
    /// Which one.
    public let subtype: Subtype
    /// How many assets it held when it was fetched: an album's every member (hidden and trashed ones
    /// included), a smart album's assets as ``AssetLibrary/fetchAssets(in:options:)`` returns them by default.
    public let estimatedAssetCount: Int
    /// The folder the album is in (``CollectionList/localIdentifier``); `nil` at the top level and for smart
    /// albums.
    public let folderIdentifier: String?
    /// When the album was created (`nil` for a smart album and a folder-of-keys album).
    public let creationDate: Date?

    /// ``localIdentifier``.
    public var id: String { localIdentifier }

    /// `true` for a user album (which change requests can modify).
    public var canContainAssets: Bool { subtype == .albumRegular }

    package init(
        localIdentifier: String, title: String, kind: Kind, subtype: Subtype, estimatedAssetCount: Int,
        folderIdentifier: String?, creationDate: Date?
    ) {
        self.localIdentifier = localIdentifier
        self.title = title
        self.kind = kind
        self.subtype = subtype
        self.estimatedAssetCount = estimatedAssetCount
        self.folderIdentifier = folderIdentifier
        self.creationDate = creationDate
    }
}

/// A folder of albums and other folders (PhotoKit's `PHCollectionList`).
public struct CollectionList: Sendable, Hashable, Identifiable, CollectionIdentifying {
    /// Stable for the folder's lifetime (a lower-case UUID); a folder of keys'
    /// (``AssetLibrary/Configuration/keyFoldersAsAlbums``) is `keyfolder:` and its folder of keys.
    public let localIdentifier: String
    /// The title.
    public let title: String
    /// The folder it is in; `nil` at the top level.
    public let folderIdentifier: String?
    /// How many albums and folders are directly in it.
    public let count: Int
    /// `true` for a folder of the bucket's keys, which follows the keys and cannot be changed by requests.
    public var isKeyFolder: Bool { localIdentifier.hasPrefix(AssetStore.keyListPrefix) }

    /// ``localIdentifier``.
    public var id: String { localIdentifier }
}

/// A collection created by a change request: its identifier is known at once and stays the collection's
/// (PhotoKit's `placeholderForCreatedAssetCollection`). Later requests of the same call may name it.
public struct CollectionPlaceholder: Sendable, Hashable, CollectionIdentifying {
    /// The identifier the created album or folder has.
    public let localIdentifier: String
}
