import AssetStore
import Foundation

/// What an album-scoped fetch result draws its members from (``FetchResult``'s scope): an album's members, or the
/// edited assets. Other fetch results, smart albums defined by a predicate included, have none.
package enum FetchScope: Sendable, Hashable {
    case album(id: Int64, uuid: String)
    case edited
}

/// Albums, folders and smart albums read from the catalog, and the assets in each. Reads only; safe from any
/// thread (each call reads the last committed state).
struct CollectionCatalog: Sendable {
    let store: AssetStore
    let revealsLocation: Bool

    // MARK: Smart albums

    static let smartPrefix = "smart:"

    /// `smart:favorites`, `smart:recentlydeleted`, …
    static func smartIdentifier(_ subtype: AssetCollection.Subtype) -> String {
        let name =
            switch subtype {
            case .smartAlbumFavorites: "favorites"
            case .smartAlbumVideos: "videos"
            case .smartAlbumHidden: "hidden"
            case .smartAlbumRecentlyDeleted: "recentlydeleted"
            case .smartAlbumEdited: "edited"
            case .albumRegular: "album"
            }
        return smartPrefix + name
    }

    static let smartSubtypes: [AssetCollection.Subtype] = [
        .smartAlbumFavorites, .smartAlbumVideos, .smartAlbumEdited, .smartAlbumHidden, .smartAlbumRecentlyDeleted,
    ]

    static func smartTitle(_ subtype: AssetCollection.Subtype) -> String {
        switch subtype {
        case .smartAlbumFavorites: "Favorites"
        case .smartAlbumVideos: "Videos"
        case .smartAlbumHidden: "Hidden"
        case .smartAlbumRecentlyDeleted: "Recently Deleted"
        case .smartAlbumEdited: "Edited"
        case .albumRegular: "Album"
        }
    }

    /// The fetch a smart album is, its default order newest first (the edited one is a scope, not a predicate).
    static func smartOptions(_ subtype: AssetCollection.Subtype) -> FetchOptions {
        let newest: [AssetSortDescriptor] = [.creationDate(ascending: false)]
        return switch subtype {
        case .smartAlbumFavorites: FetchOptions(predicate: .isFavorite(true), sortBy: newest)
        case .smartAlbumVideos: FetchOptions(predicate: .mediaType(.video), sortBy: newest)
        case .smartAlbumHidden: FetchOptions(predicate: .isHidden(true), sortBy: newest, includeHiddenAssets: true)
        case .smartAlbumRecentlyDeleted:
            FetchOptions(
                predicate: .isTrashed(true), sortBy: newest, includeHiddenAssets: true, includeTrashedAssets: true)
        case .smartAlbumEdited, .albumRegular: FetchOptions(sortBy: newest)
        }
    }

    func smartAlbum(_ subtype: AssetCollection.Subtype) throws -> AssetCollection {
        try smartAlbums().first { $0.subtype == subtype }!
    }

    /// Every smart album with its count (one query over partial indexes).
    func smartAlbums() throws -> [AssetCollection] {
        let counts = try store.smartAlbumCounts()
        return Self.smartSubtypes.map { subtype in
            let count =
                switch subtype {
                case .smartAlbumFavorites: counts.favorites
                case .smartAlbumVideos: counts.videos
                case .smartAlbumEdited: counts.edited
                case .smartAlbumHidden: counts.hidden
                case .smartAlbumRecentlyDeleted, .albumRegular: counts.trashed
                }
            return AssetCollection(
                localIdentifier: Self.smartIdentifier(subtype), title: Self.smartTitle(subtype), kind: .smartAlbum,
                subtype: subtype, estimatedAssetCount: count, folderIdentifier: nil, creationDate: nil)
        }
    }

    // MARK: Albums and folders

    func album(_ record: CollectionRecord) -> AssetCollection {
        AssetCollection(
            localIdentifier: record.uuid, title: record.title, kind: .album, subtype: .albumRegular,
            estimatedAssetCount: record.count, folderIdentifier: record.parentUUID, creationDate: record.creationDate)
    }

    func folder(_ record: CollectionRecord) -> CollectionList {
        CollectionList(
            localIdentifier: record.uuid, title: record.title, folderIdentifier: record.parentUUID,
            count: record.count)
    }

    /// The row of the folder or album `identifier` names, or `nil`.
    func record(_ identifier: String) throws -> CollectionRecord? {
        identifier.hasPrefix(Self.smartPrefix) ? nil : try store.collection(uuid: identifier)
    }

    /// The parent argument of a store read: `nil` for "any folder", `.some(nil)` for the top level.
    func parentUUID(_ folder: (any CollectionIdentifying)?, anywhere: Bool) throws -> String?? {
        if anywhere { return .none }
        guard let folder else { return .some(nil) }
        guard let record = try record(folder.localIdentifier), record.kind == .folder else {
            throw AssetLibraryError.noSuchCollection(localIdentifier: folder.localIdentifier)
        }
        return .some(record.uuid)
    }

    /// The albums in `folder` (`nil`: the top level), or every album when `anywhere`, by title.
    func albums(in folder: (any CollectionIdentifying)?, anywhere: Bool) throws -> [AssetCollection] {
        try store.collections(kind: .album, parentUUID: try parentUUID(folder, anywhere: anywhere)).map(album)
    }

    /// The folders in `folder` (`nil`: the top level), or every folder when `anywhere`, by title.
    func folders(in folder: (any CollectionIdentifying)?, anywhere: Bool) throws -> [CollectionList] {
        try store.collections(kind: .folder, parentUUID: try parentUUID(folder, anywhere: anywhere)).map(self.folder)
    }

    /// The album or smart album with this identifier, or `nil`.
    func collection(_ identifier: String) throws -> AssetCollection? {
        if identifier.hasPrefix(Self.smartPrefix) {
            guard let subtype = Self.smartSubtypes.first(where: { Self.smartIdentifier($0) == identifier }) else {
                return nil
            }
            return try smartAlbum(subtype)
        }
        guard let record = try store.collection(uuid: identifier), record.kind == .album else { return nil }
        return album(record)
    }

    /// The albums holding `assetID`, by title.
    func albums(containing assetID: Int64) throws -> [AssetCollection] {
        try store.collections(containing: assetID).map(album)
    }

    // MARK: Assets in a collection

    /// The scope and options of a fetch of `collection`'s assets: a smart album is its own options (the
    /// caller's sort and limit over its predicate), an album its members.
    func query(
        _ collection: AssetCollection, options: FetchOptions?
    ) throws -> (scope: FetchScope?, options: FetchOptions) {
        switch collection.subtype {
        case .albumRegular:
            guard let record = try store.collection(uuid: collection.localIdentifier), record.kind == .album else {
                throw AssetLibraryError.noSuchCollection(localIdentifier: collection.localIdentifier)
            }
            return (.album(id: record.id, uuid: record.uuid), options ?? FetchOptions())
        case .smartAlbumEdited:
            return (.edited, options ?? Self.smartOptions(.smartAlbumEdited))
        default:
            var smart = Self.smartOptions(collection.subtype)
            if let options {
                smart.predicate =
                    options.predicate == .all ? smart.predicate : .and([smart.predicate, options.predicate])
                if !options.sortDescriptors.isEmpty { smart.sortDescriptors = options.sortDescriptors }
                smart.fetchLimit = options.fetchLimit
            }
            return (nil, smart)
        }
    }

    /// The members of a scope that `options` selects: an album in its own order unless `options` sorts, the
    /// edited assets in the options' order; then the limit.
    func sorted(_ scope: FetchScope, options: FetchOptions) throws -> SortedIdentifiers {
        var query = options.storeQuery
        switch scope {
        case .album(let id, _):
            if options.sortDescriptors.isEmpty {
                return try store.members(ofCollection: id, matching: query.predicate, limit: options.fetchLimit)
            }
            query.predicate = .and([query.predicate, .ids(Set(try store.memberIDs(ofCollection: id)))])
        case .edited:
            query.predicate = .and([query.predicate, .ids(try store.editedAssetIDs())])
        }
        return try store.fetchSorted(query)
    }

    func fetchResult(_ scope: FetchScope?, options: FetchOptions) throws -> FetchResult {
        guard let scope else {
            return FetchResult(
                store: store, options: options, sorted: try store.fetchSorted(options.storeQuery),
                revealsLocation: revealsLocation)
        }
        return FetchResult(
            store: store, options: options, sorted: try sorted(scope, options: options),
            revealsLocation: revealsLocation, scope: scope)
    }
}
