import AssetStore
import Foundation

/// Albums, folders and smart albums (PhotoKit's `PHAssetCollection` and `PHCollectionList` fetches). Every call
/// reads the catalog as last committed, from any thread, offline as online; change them with the requests of
/// ``AssetLibrary/performChanges(_:)`` (``AssetChangeRequests/createAlbum(title:in:)`` and the ones after it).
///
/// Albums and folders reach the other libraries on the bucket through it (`collections/`, announced in the
/// journal); with ``Configuration/keyFoldersAsAlbums`` the bucket's folders of keys show as albums and folders too.
extension AssetLibrary {
    var collections: CollectionCatalog { catalog.collections }

    /// The albums directly in `folder` (`nil`: the top level), by title: user albums and, when shown, folders of
    /// keys' albums.
    /// - Throws: ``CloudAssetsError/Code/noSuchCollection`` when `folder` is not one of this library's folders.
    public func fetchAlbums(in folder: CollectionList? = nil) throws -> [AssetCollection] {
        try entry { try collections.albums(in: folder, anywhere: false) }
    }

    /// Every album, whichever folder it is in, by title: user albums and, when shown, folders of keys' albums.
    public func fetchAllAlbums() throws -> [AssetCollection] {
        try entry { try collections.albums(in: nil, anywhere: true) }
    }

    /// The smart albums, each with its current count: Favorites, Recently Added, Videos, Edited, Hidden, Recently
    /// Deleted.
    public func fetchSmartAlbums() throws -> [AssetCollection] {
        try entry { try collections.smartAlbums() }
    }

    /// The folders directly in `folder` (`nil`: the top level), by title.
    /// - Throws: ``CloudAssetsError/Code/noSuchCollection`` when `folder` is not one of this library's folders.
    public func fetchFolders(in folder: CollectionList? = nil) throws -> [CollectionList] {
        try entry { try collections.folders(in: folder, anywhere: false) }
    }

    /// The album or smart album with this local identifier, or `nil`.
    public func collection(withLocalIdentifier identifier: String) throws -> AssetCollection? {
        try entry { try collections.collection(identifier) }
    }

    /// The albums `asset` is in, by title (its folder of keys' album too when shown).
    public func fetchCollections(containing asset: Asset) throws -> [AssetCollection] {
        try entry { try collections.albums(containing: asset.rowID) }
    }

    /// The assets in `collection`: an immutable snapshot like ``fetchAssets(_:)``, observed the same way
    /// (``LibraryChange/details(for:)-(FetchResult)``).
    ///
    /// A user album gives its assets in its own order (the order they were added, as rearranged since) unless
    /// `options` sorts them; `options` also filters (hidden and trashed assets are left out unless included) and
    /// limits. A smart album gives its assets newest first unless `options` sorts them, its predicate combined
    /// with the options'. A folder-of-keys album gives its originals in key order unless `options` sorts them.
    /// Change details of a user album's result are taken from the change when it only inserted or removed members,
    /// else computed by reading its members after the change, O(members) (the Edited smart album's too); the
    /// other smart albums' and the folder-of-keys albums' are derived from the change, as for any fetch.
    /// - Throws: ``CloudAssetsError/Code/noSuchCollection`` when the album was deleted.
    public func fetchAssets(in collection: AssetCollection, options: FetchOptions? = nil) throws -> FetchResult {
        try entry {
            let (scope, options) = try collections.query(collection, options: options)
            return try collections.fetchResult(scope, options: options)
        }
    }
}
