import AssetStore
import Foundation

/// Albums, folders and smart albums (PhotoKit's `PHAssetCollection` and `PHCollectionList` fetches). Every call
/// reads the catalog as last committed, from any thread, offline as online; change them with the requests of
/// ``AssetLibrary/performChanges(_:)`` (``AssetChangeRequests/createAlbum(title:in:)`` and the ones after it).
///
/// Albums and folders are this library's: they are not written to the bucket yet, so other libraries on the
/// bucket do not see them.
extension AssetLibrary {
    var collections: CollectionCatalog {
        CollectionCatalog(store: catalog.store, revealsLocation: catalog.revealsLocation)
    }

    /// The user albums directly in `folder` (`nil`: the top level), by title.
    /// - Throws: ``CloudAssetsError/Code/noSuchCollection`` when `folder` is not one of this library's folders.
    public func fetchAlbums(in folder: CollectionList? = nil) throws -> [AssetCollection] {
        try entry { try collections.albums(in: folder, anywhere: false) }
    }

    /// Every user album, whichever folder it is in, by title.
    public func fetchAllAlbums() throws -> [AssetCollection] {
        try entry { try collections.albums(in: nil, anywhere: true) }
    }

    /// The smart albums, each with its current count: Favorites, Videos, Edited, Hidden, Recently Deleted.
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

    /// The user albums `asset` is in, by title.
    public func fetchCollections(containing asset: Asset) throws -> [AssetCollection] {
        try entry { try collections.albums(containing: asset.rowID) }
    }

    /// The assets in `collection`: an immutable snapshot like ``fetchAssets(_:)``, observed the same way
    /// (``LibraryChange/details(for:)-(FetchResult)``).
    ///
    /// A user album gives its assets in its own order (the order they were added, as rearranged since) unless
    /// `options` sorts them; `options` also filters (hidden and trashed assets are left out unless included) and
    /// limits. A smart album gives its assets newest first unless `options` sorts them, its predicate combined
    /// with the options'. Change details of an album's result (and of the Edited smart album's) are computed by
    /// reading its members after the change, O(members); the other smart albums' are derived from the change,
    /// as for any fetch.
    /// - Throws: ``CloudAssetsError/Code/noSuchCollection`` when the album was deleted.
    public func fetchAssets(in collection: AssetCollection, options: FetchOptions? = nil) throws -> FetchResult {
        try entry {
            let (scope, options) = try collections.query(collection, options: options)
            return try collections.fetchResult(scope, options: options)
        }
    }
}
