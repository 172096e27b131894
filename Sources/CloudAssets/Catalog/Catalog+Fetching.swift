import AssetStore
import Foundation

/// What the catalog answers to the library's fetches: every read the facade makes goes through here, local only.
extension Catalog {
    /// The assets matching `options`, in their order.
    func fetch(_ options: FetchOptions) throws -> FetchResult {
        FetchResult(
            store: store, options: options, sorted: try store.fetchSorted(options.storeQuery),
            revealsLocation: revealsLocation)
    }

    /// The assets matching `options` and the token of the last change they reflect, read at once.
    func snapshot(_ options: FetchOptions) throws -> LibrarySnapshot {
        let (sorted, token) = try store.fetchSortedWithToken(options.storeQuery)
        return LibrarySnapshot(
            fetchResult: FetchResult(store: store, options: options, sorted: sorted, revealsLocation: revealsLocation),
            token: token)
    }

    /// The members of an album (or the assets of a smart album) as ``snapshot(_:)`` reads them.
    func snapshot(in collection: AssetCollection, options: FetchOptions?) throws -> LibrarySnapshot {
        let (scope, options) = try collections.query(collection, options: options)
        guard let scope else { return try snapshot(options) }  // a smart album is a fetch
        guard case .album(let id, _) = scope, options.sortDescriptors.isEmpty else {
            // A sorted album is read after the token: its change details read the result again, so a change
            // between the two reads, applied again, changes nothing.
            let token = try store.refreshedToken()
            return LibrarySnapshot(fetchResult: try collections.fetchResult(scope, options: options), token: token)
        }
        let (sorted, token) = try store.membersWithToken(
            ofCollection: id, matching: options.storeQuery.predicate, limit: options.fetchLimit)
        return LibrarySnapshot(
            fetchResult: FetchResult(
                store: store, options: options, sorted: sorted, revealsLocation: revealsLocation, scope: scope),
            token: token)
    }

    /// The asset with this row id, or `nil`.
    func asset(id: Int64) throws -> Asset? { try store.record(id: id).map(asset) }

    /// The asset whose original has this bucket key, or `nil`.
    func asset(key: String) throws -> Asset? { try store.record(key: key).map(asset) }

    /// The token of the last committed change.
    var currentToken: ChangeToken { store.currentToken }

    /// Albums, folders and smart albums, read from the catalog as last committed.
    var collections: CollectionCatalog {
        CollectionCatalog(
            store: store, revealsLocation: revealsLocation, keyFolderRoot: keyFolderRoot,
            keyFolderCache: keyFolderCache)
    }
}
