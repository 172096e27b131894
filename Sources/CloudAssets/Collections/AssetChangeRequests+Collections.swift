import AssetStore
public import Foundation

extension AssetChangeRequests {
    /// An asset a collection request names: one the library has, or one created earlier in the same call.
    enum AssetReference {
        case existing(Int64)
        case created(index: Int)
    }

    /// One album or folder request, applied in call order after the assets are created and edited.
    enum CollectionChange {
        case create(uuid: String, kind: StoredCollectionKind, title: String, folder: String?)
        case rename(String, title: String)
        case move(String, folder: String?)
        case delete(String)
        case insert(album: String, assets: [AssetReference], at: Int?)
        case remove(album: String, assets: [Int64])
        case reorder(album: String, indexes: IndexSet, to: Int)
    }

    /// Creates a user album (PhotoKit's `creationRequestForAssetCollection(withTitle:)`), at the top level or in
    /// `folder`. The title is trimmed, and must then be one every library accepts (``collectionTitle(_:of:)``). The
    /// album reaches the other libraries on the bucket with the next upload round or sync.
    /// - Returns: Its placeholder: its identifier is the album's, and later requests of this call may name it.
    @discardableResult
    public func createAlbum(title: String, in folder: (any CollectionIdentifying)? = nil) -> CollectionPlaceholder {
        create(.album, title: title, in: folder)
    }

    /// Creates a folder (PhotoKit's `PHCollectionListChangeRequest`), at the top level or in `folder`.
    @discardableResult
    public func createFolder(title: String, in folder: (any CollectionIdentifying)? = nil) -> CollectionPlaceholder {
        create(.folder, title: title, in: folder)
    }

    private func create(
        _ kind: StoredCollectionKind, title: String, in folder: (any CollectionIdentifying)?
    ) -> CollectionPlaceholder {
        let uuid = UUID().uuidString.lowercased()
        recordCollectionChange(.create(uuid: uuid, kind: kind, title: title, folder: folder?.localIdentifier))
        return CollectionPlaceholder(localIdentifier: uuid)
    }

    /// Renames an album or folder (the title trimmed, then held to ``collectionTitle(_:of:)``'s rule).
    public func renameCollection(_ collection: any CollectionIdentifying, to title: String) {
        recordCollectionChange(.rename(collection.localIdentifier, title: title))
    }

    /// Moves an album or folder into `folder` (`nil`: the top level). A folder cannot go inside itself.
    public func moveCollection(_ collection: any CollectionIdentifying, to folder: (any CollectionIdentifying)?) {
        recordCollectionChange(.move(collection.localIdentifier, folder: folder?.localIdentifier))
    }

    /// Deletes albums and folders; a folder's albums and folders go with it. Their assets stay in the library.
    public func deleteCollections(_ collections: [any CollectionIdentifying]) {
        for collection in collections { recordCollectionChange(.delete(collection.localIdentifier)) }
    }

    /// Adds assets at the end of a user album, in the given order; ones already in it stay where they are.
    public func addAssets(_ assets: [Asset], to album: any CollectionIdentifying) {
        recordCollectionChange(
            .insert(album: album.localIdentifier, assets: assets.map { .existing($0.rowID) }, at: nil))
    }

    /// Adds assets created earlier in this call at the end of a user album.
    public func addAssets(_ placeholders: [AssetPlaceholder], to album: any CollectionIdentifying) {
        recordCollectionChange(
            .insert(album: album.localIdentifier, assets: placeholders.map { .created(index: $0.index) }, at: nil))
    }

    /// Inserts assets into a user album at `index` (in its order before this request; past the end: at the end),
    /// in the given order; ones already in it stay where they are.
    public func insertAssets(_ assets: [Asset], into album: any CollectionIdentifying, at index: Int) {
        recordCollectionChange(
            .insert(album: album.localIdentifier, assets: assets.map { .existing($0.rowID) }, at: max(0, index)))
    }

    /// Takes assets out of a user album (they stay in the library); ones not in it are ignored.
    public func removeAssets(_ assets: [Asset], from album: any CollectionIdentifying) {
        recordCollectionChange(.remove(album: album.localIdentifier, assets: assets.map(\.rowID)))
    }

    /// Moves the assets at `indexes` of a user album (its order before this request) so that the first is at
    /// `index` of the order that remains once they are taken out, keeping their relative order
    /// (PhotoKit's `moveAssets(at:to:)`).
    public func moveAssets(in album: any CollectionIdentifying, at indexes: IndexSet, to index: Int) {
        recordCollectionChange(.reorder(album: album.localIdentifier, indexes: indexes, to: index))
    }
}

extension AssetChangeRequests {
    /// The title an album or folder gets for `title`: `title` trimmed of white space and line breaks, held to the
    /// rule every library holds a collection document's title to (not empty, no control character such as a tab
    /// or a line break, at most 4096 bytes of UTF-8), so that no title is written that other libraries refuse.
    /// ``createAlbum(title:in:)``, ``createFolder(title:in:)`` and ``renameCollection(_:to:)`` apply it; call it
    /// first to check what a user typed.
    /// - Parameters:
    ///   - title: The title as given.
    ///   - collection: The album or folder renamed; `nil` for one to be created (the error then names none).
    /// - Throws: ``CloudAssetsError/Code/cannotChangeCollection``, its reason saying what is wrong.
    public static func collectionTitle(_ title: String, of collection: (any CollectionIdentifying)? = nil) throws
        -> String
    {
        try CollectionChange.title(title, of: collection?.localIdentifier)
    }
}

extension AssetChangeRequests.CollectionChange {
    /// The album or folder the request changes.
    var collectionIdentifier: String {
        switch self {
        case .create(let uuid, _, _, _): uuid
        case .rename(let id, _), .move(let id, _), .delete(let id): id
        case .insert(let album, _, _), .remove(let album, _), .reorder(let album, _, _): album
        }
    }

    /// `title` trimmed, or the error of a title another library would refuse (``BucketInput/collectionTitleProblem(_:)``);
    /// `identifier` is the collection renamed, nil for one created.
    static func title(_ title: String, of identifier: String?) throws -> String {
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        if let problem = BucketInput.collectionTitleProblem(trimmed) {
            throw AssetLibraryError.cannotChangeCollection(
                localIdentifier: identifier ?? "", reason: "the title \(problem)")
        }
        return trimmed
    }

    /// Applies the request inside the change's transaction; `created` are the identifiers of the assets the call
    /// created, by placeholder index.
    func apply(created: [Int64], now: Date, in tx: StoreTransaction) throws {
        func collection(_ identifier: String, _ kind: StoredCollectionKind? = nil) throws -> CollectionRecord {
            if identifier.hasPrefix(CollectionCatalog.smartPrefix) {
                throw AssetLibraryError.cannotChangeCollection(
                    localIdentifier: identifier, reason: "a smart album follows the library; change its assets instead")
            }
            if CollectionCatalog.isDerived(identifier) {
                throw AssetLibraryError.cannotChangeCollection(
                    localIdentifier: identifier, reason: "a folder of keys follows the bucket's keys")
            }
            guard let record = try tx.collection(uuid: identifier) else {
                throw AssetLibraryError.noSuchCollection(localIdentifier: identifier)
            }
            if let kind, record.kind != kind {
                throw AssetLibraryError.cannotChangeCollection(
                    localIdentifier: identifier,
                    reason: kind == .album ? "it is a folder, not an album" : "it is not a folder")
            }
            return record
        }
        func folder(_ identifier: String?, for subject: String) throws -> String? {
            guard let identifier else { return nil }
            let record = try collection(identifier, .folder)
            if record.uuid == subject {
                throw AssetLibraryError.cannotChangeCollection(
                    localIdentifier: subject, reason: "a folder cannot go inside itself")
            }
            return record.uuid
        }
        do {
            switch self {
            case .create(let uuid, let kind, let title, let parent):
                _ = try tx.createCollection(
                    uuid: uuid, kind: kind, title: try Self.title(title, of: nil),
                    parentUUID: try folder(parent, for: uuid), now: now)
            case .rename(let identifier, let title):
                try tx.updateCollection(
                    try collection(identifier).id, title: try Self.title(title, of: identifier), now: now)
            case .move(let identifier, let parent):
                let record = try collection(identifier)
                try tx.updateCollection(record.id, parentUUID: .some(try folder(parent, for: identifier)), now: now)
            case .delete(let identifier):
                try tx.deleteCollection(try collection(identifier).id, now: now)
            case .insert(let identifier, let assets, let index):
                let album = try collection(identifier, .album)
                let ids = try assets.map { reference -> Int64 in
                    switch reference {
                    case .existing(let id): return id
                    case .created(let index):
                        guard created.indices.contains(index) else {
                            throw AssetLibraryError.cannotChangeCollection(
                                localIdentifier: identifier, reason: "a placeholder of another change")
                        }
                        return created[index]
                    }
                }
                try tx.insertMembers(ids, into: album.id, at: index, now: now)
            case .remove(let identifier, let assets):
                try tx.removeMembers(assets, from: try collection(identifier, .album).id, now: now)
            case .reorder(let identifier, let indexes, let destination):
                try tx.moveMembers(at: indexes, to: destination, in: try collection(identifier, .album).id, now: now)
            }
        } catch AssetStoreError.notFound(let id) {
            throw AssetLibraryError.noSuchAsset(localIdentifier: String(id))
        } catch AssetStoreError.invariantViolation(let reason) {
            throw AssetLibraryError.cannotChangeCollection(localIdentifier: subject, reason: reason)
        }
    }

    /// The collection the request is about.
    var subject: String {
        switch self {
        case .create(let uuid, _, _, _): uuid
        case .rename(let id, _), .move(let id, _), .delete(let id): id
        case .insert(let id, _, _), .remove(let id, _), .reorder(let id, _, _): id
        }
    }
}
