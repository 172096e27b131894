import AssetStore
import Essentials
import Foundation

/// What an album-scoped fetch result draws its members from (``FetchResult``'s scope): an album's members. Other
/// fetch results, smart albums (each defined by its predicate) included, have none.
package enum FetchScope: Sendable, Hashable {
    case album(id: Int64, uuid: String)
}

/// Albums, folders and smart albums read from the catalog, and the assets in each. Reads only; safe from any
/// thread (each call reads the last committed state).
struct CollectionCatalog: Sendable {
    let store: AssetStore
    let revealsLocation: Bool
    /// The originals' prefix when folders of keys show as albums (``AssetLibrary/Configuration/keyFoldersAsAlbums``);
    /// `nil` when they do not.
    var keyFolderRoot: String? = nil

    // MARK: Smart albums

    static let smartPrefix = "smart:"

    /// `smart:favorites`, `smart:recentlydeleted`, …
    static func smartIdentifier(_ subtype: AssetCollection.Subtype) -> String {
        let name =
            switch subtype {
            case .smartAlbumFavorites: "favorites"
            case .smartAlbumRecentlyAdded: "recentlyadded"
            case .smartAlbumVideos: "videos"
            case .smartAlbumHidden: "hidden"
            case .smartAlbumRecentlyDeleted: "recentlydeleted"
            case .smartAlbumEdited: "edited"
            case .albumRegular, .albumKeyFolder: "album"
            }
        return smartPrefix + name
    }

    static let smartSubtypes: [AssetCollection.Subtype] = [
        .smartAlbumFavorites, .smartAlbumRecentlyAdded, .smartAlbumVideos, .smartAlbumEdited, .smartAlbumHidden,
        .smartAlbumRecentlyDeleted,
    ]

    /// How far back Recently Added reaches: 30 days.
    static let recentlyAddedWindow: TimeInterval = 30 * 86_400

    static func smartTitle(_ subtype: AssetCollection.Subtype) -> String {
        switch subtype {
        case .smartAlbumFavorites: "Favorites"
        case .smartAlbumRecentlyAdded: "Recently Added"
        case .smartAlbumVideos: "Videos"
        case .smartAlbumHidden: "Hidden"
        case .smartAlbumRecentlyDeleted: "Recently Deleted"
        case .smartAlbumEdited: "Edited"
        case .albumRegular, .albumKeyFolder: "Album"
        }
    }

    /// The fetch a smart album is, its default order newest first; Recently Added reaches back
    /// ``recentlyAddedWindow`` from `now`. The one definition of each smart album: its fetch and its count
    /// (``smartAlbums()``) both run these options.
    static func smartOptions(_ subtype: AssetCollection.Subtype, now: Date = Date()) -> FetchOptions {
        let newest: [AssetSortDescriptor] = [.creationDate(ascending: false)]
        return switch subtype {
        case .smartAlbumFavorites: FetchOptions(predicate: .isFavorite(true), sortBy: newest)
        case .smartAlbumRecentlyAdded:
            FetchOptions(
                predicate: .addedSince(now.addingTimeInterval(-recentlyAddedWindow)),
                sortBy: [.addedDate(ascending: false)])
        case .smartAlbumVideos: FetchOptions(predicate: .mediaType(.video), sortBy: newest)
        case .smartAlbumHidden: FetchOptions(predicate: .isHidden(true), sortBy: newest, includeHiddenAssets: true)
        case .smartAlbumRecentlyDeleted:
            FetchOptions(
                predicate: .isTrashed(true), sortBy: newest, includeHiddenAssets: true, includeTrashedAssets: true)
        case .smartAlbumEdited: FetchOptions(predicate: .hasAdjustments(true), sortBy: newest)
        case .albumRegular, .albumKeyFolder: FetchOptions(sortBy: newest)
        }
    }

    func smartAlbum(_ subtype: AssetCollection.Subtype) throws -> AssetCollection {
        try smartAlbums().first { $0.subtype == subtype }!
    }

    /// Every smart album with its count: the count of the fetch ``smartOptions(_:now:)`` defines, all in one
    /// read (each answered from its partial index).
    func smartAlbums() throws -> [AssetCollection] {
        let now = Date()
        let counts = try store.counts(Self.smartSubtypes.map { Self.smartOptions($0, now: now).storeQuery })
        return zip(Self.smartSubtypes, counts).map { subtype, count in
            AssetCollection(
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
        Self.isDerived(identifier) ? nil : try store.collection(uuid: identifier)
    }

    /// Whether `identifier` names a collection the library derives (a smart album, a folder of keys or its album).
    static func isDerived(_ identifier: String) -> Bool {
        identifier.hasPrefix(smartPrefix) || identifier.hasPrefix(AssetStore.keyAlbumPrefix)
            || identifier.hasPrefix(AssetStore.keyListPrefix)
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

    /// The albums in `folder` (`nil`: the top level), or every album when `anywhere`, by title: the user's and,
    /// when shown, the folders of keys'.
    func albums(in folder: (any CollectionIdentifying)?, anywhere: Bool) throws -> [AssetCollection] {
        if let folder, folder.localIdentifier.hasPrefix(AssetStore.keyListPrefix) {
            let tree = try keyFolderTree()
            guard tree.folder[folder.localIdentifier] != nil else {
                throw AssetLibraryError.noSuchCollection(localIdentifier: folder.localIdentifier)
            }
            return tree.albumsIn[folder.localIdentifier] ?? []
        }
        let user = try store.collections(kind: .album, parentUUID: try parentUUID(folder, anywhere: anywhere))
            .map(album)
        guard keyFolderRoot != nil else { return user }
        let tree = try keyFolderTree()
        return Self.byTitle(user + (anywhere ? tree.albums : tree.albumsIn[nil] ?? []))
    }

    /// The folders in `folder` (`nil`: the top level), or every folder when `anywhere`, by title: the user's and,
    /// when shown, the folders of keys.
    func folders(in folder: (any CollectionIdentifying)?, anywhere: Bool) throws -> [CollectionList] {
        if let folder, folder.localIdentifier.hasPrefix(AssetStore.keyListPrefix) {
            let tree = try keyFolderTree()
            guard tree.folder[folder.localIdentifier] != nil else {
                throw AssetLibraryError.noSuchCollection(localIdentifier: folder.localIdentifier)
            }
            return tree.foldersIn[folder.localIdentifier] ?? []
        }
        let user = try store.collections(kind: .folder, parentUUID: try parentUUID(folder, anywhere: anywhere))
            .map(self.folder)
        guard keyFolderRoot != nil else { return user }
        let tree = try keyFolderTree()
        return Self.byTitle(user + (anywhere ? tree.folders : tree.foldersIn[nil] ?? []))
    }

    static func byTitle(_ albums: [AssetCollection]) -> [AssetCollection] {
        albums.sorted { ($0.title, $0.localIdentifier) < ($1.title, $1.localIdentifier) }
    }

    static func byTitle(_ folders: [CollectionList]) -> [CollectionList] {
        folders.sorted { ($0.title, $0.localIdentifier) < ($1.title, $1.localIdentifier) }
    }

    // MARK: Folders of keys

    /// The albums and folders the folders of keys make, each list by title, with lookups by identifier and by the
    /// folder they are in (`nil`: the top level).
    struct KeyFolderTree: Sendable {
        var albums: [AssetCollection] = []
        var folders: [CollectionList] = []
        var album: [String: AssetCollection] = [:]
        var folder: [String: CollectionList] = [:]
        var albumsIn: [String?: [AssetCollection]] = [:]
        var foldersIn: [String?: [CollectionList]] = [:]
    }

    /// The last tree built, with the catalog's change token it reflects: built again only after a commit (a
    /// sidebar walks every folder, and each call would otherwise read every folder of keys).
    final class KeyFolderCache: Sendable {
        let latest = LockedBox<(token: ChangeToken, tree: KeyFolderTree)?>(nil)
    }

    /// ``keyFolderTree()``'s cache (none: built on every call).
    var keyFolderCache: KeyFolderCache? = nil

    /// The albums and folders the folders of keys under ``keyFolderRoot`` make (none when they are not shown).
    /// A folder of keys holding originals is an album of its last name; one holding other folders is a folder,
    /// and when it holds originals too its album is inside it. The originals directly under the root make none.
    func keyFolderTree() throws -> KeyFolderTree {
        guard let root = keyFolderRoot else { return KeyFolderTree() }
        // The token first: a commit after it makes the next call build again (never a new token on an old tree).
        let token = try store.refreshedToken()
        if let cached = keyFolderCache?.latest.withLock({ $0 }), cached.token == token { return cached.tree }
        let rows = try store.keyFolders(under: root).filter { $0.folder.utf8.count > root.utf8.count }
        func parent(_ folder: String) -> String? {
            guard let up = StorePredicate.keyFolder(of: String(folder.dropLast())) else { return nil }
            return up.utf8.count > root.utf8.count && up.hasPrefix(root) ? up : nil
        }
        func title(_ folder: String) -> String {
            let inside = folder.utf8.dropFirst(root.utf8.count).dropLast()
            let start = inside.lastIndex(of: UInt8(ascii: "/")).map { inside.index(after: $0) } ?? inside.startIndex
            return String(decoding: inside[start...], as: UTF8.self)
        }
        var folders = Set<String>()
        for row in rows {
            var above = parent(row.folder)
            while let folder = above, folders.insert(folder).inserted { above = parent(folder) }
        }
        var tree = KeyFolderTree()
        tree.albums = Self.byTitle(
            rows.map { row in
                let holder = folders.contains(row.folder) ? row.folder : parent(row.folder)
                return AssetCollection(
                    localIdentifier: AssetStore.keyFolderAlbumIdentifier(row.folder), title: title(row.folder),
                    kind: .album, subtype: .albumKeyFolder, estimatedAssetCount: row.count,
                    folderIdentifier: holder.map(AssetStore.keyFolderListIdentifier), creationDate: nil)
            })
        var children: [String: Int] = [:]
        for album in tree.albums { if let holder = album.folderIdentifier { children[holder, default: 0] += 1 } }
        for folder in folders {
            if let holder = parent(folder) { children[AssetStore.keyFolderListIdentifier(holder), default: 0] += 1 }
        }
        tree.folders = Self.byTitle(
            folders.map { folder in
                let identifier = AssetStore.keyFolderListIdentifier(folder)
                return CollectionList(
                    localIdentifier: identifier, title: title(folder),
                    folderIdentifier: parent(folder).map(AssetStore.keyFolderListIdentifier),
                    count: children[identifier] ?? 0)
            })
        for album in tree.albums {
            tree.album[album.localIdentifier] = album
            tree.albumsIn[album.folderIdentifier, default: []].append(album)
        }
        for folder in tree.folders {
            tree.folder[folder.localIdentifier] = folder
            tree.foldersIn[folder.folderIdentifier, default: []].append(folder)
        }
        keyFolderCache?.latest.withLock { $0 = (token, tree) }
        return tree
    }

    /// The folder-of-keys album with this identifier, or `nil` (also when folders of keys are not shown).
    func keyFolderAlbum(_ identifier: String) throws -> AssetCollection? {
        guard keyFolderRoot != nil, identifier.hasPrefix(AssetStore.keyAlbumPrefix) else { return nil }
        return try keyFolderTree().album[identifier]
    }

    /// The album or smart album with this identifier, or `nil`.
    func collection(_ identifier: String) throws -> AssetCollection? {
        if identifier.hasPrefix(AssetStore.keyAlbumPrefix) { return try keyFolderAlbum(identifier) }
        if identifier.hasPrefix(Self.smartPrefix) {
            guard let subtype = Self.smartSubtypes.first(where: { Self.smartIdentifier($0) == identifier }) else {
                return nil
            }
            return try smartAlbum(subtype)
        }
        guard let record = try store.collection(uuid: identifier), record.kind == .album else { return nil }
        return album(record)
    }

    /// The albums holding `assetID`, by title (its folder of keys' when shown).
    func albums(containing assetID: Int64) throws -> [AssetCollection] {
        let user = try store.collections(containing: assetID).map(album)
        guard keyFolderRoot != nil, let key = try store.record(id: assetID)?.key,
            let folder = StorePredicate.keyFolder(of: key),
            let keyAlbum = try keyFolderAlbum(AssetStore.keyFolderAlbumIdentifier(folder))
        else { return user }
        return Self.byTitle(user + [keyAlbum])
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
        case .albumKeyFolder:
            guard let album = try keyFolderAlbum(collection.localIdentifier) else {
                throw AssetLibraryError.noSuchCollection(localIdentifier: collection.localIdentifier)
            }
            let folder = String(album.localIdentifier.dropFirst(AssetStore.keyAlbumPrefix.count))
            var keyed = options ?? FetchOptions()
            keyed.predicate =
                keyed.predicate == .all ? .keyFolder(folder) : .and([.keyFolder(folder), keyed.predicate])
            if keyed.sortDescriptors.isEmpty { keyed.sortDescriptors = [.key()] }
            return (nil, keyed)
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

    /// The members of a scope that `options` selects: an album in its own order unless `options` sorts; then the
    /// limit.
    func sorted(_ scope: FetchScope, options: FetchOptions) throws -> SortedIdentifiers {
        var query = options.storeQuery
        switch scope {
        case .album(let id, _):
            if options.sortDescriptors.isEmpty {
                return try store.members(ofCollection: id, matching: query.predicate, limit: options.fetchLimit)
            }
            query.predicate = .and([query.predicate, .ids(Set(try store.memberIDs(ofCollection: id)))])
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
