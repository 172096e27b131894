import AssetStore

/// What to fetch: a filter, an order and a limit (PhotoKit's `PHFetchOptions`).
public struct FetchOptions: Sendable, Hashable {
    /// The filter (default: every asset).
    public var predicate: AssetPredicate
    /// The order; the local identifier is always appended as the final tie-break. Empty: identifier order.
    public var sortDescriptors: [AssetSortDescriptor]
    /// At most this many assets (the first ones in sort order); `nil` for no limit.
    public var fetchLimit: Int?
    /// When `false` (the default), hidden assets are left out whatever the predicate says.
    public var includeHiddenAssets: Bool
    /// When `false` (the default), assets in the trash are left out whatever the predicate says (PhotoKit's
    /// Recently Deleted album is not part of a library's fetches).
    public var includeTrashedAssets: Bool

    /// Options that fetch the assets matching `predicate` in the order of `sortDescriptors`, at most `limit` of
    /// them, leaving out hidden and trashed assets unless asked to include them.
    public init(
        predicate: AssetPredicate = .all, sortBy sortDescriptors: [AssetSortDescriptor] = [], limit: Int? = nil,
        includeHiddenAssets: Bool = false, includeTrashedAssets: Bool = false
    ) {
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = limit
        self.includeHiddenAssets = includeHiddenAssets
        self.includeTrashedAssets = includeTrashedAssets
    }

    /// The predicate actually applied: the user's predicate, "not hidden" unless hidden assets are included, and
    /// "not trashed" unless trashed assets are.
    var effectivePredicate: StorePredicate {
        var terms: [StorePredicate] = []
        if !includeHiddenAssets { terms.append(.isHidden(false)) }
        if !includeTrashedAssets { terms.append(.isTrashed(false)) }
        let base = predicate.storePredicate
        if base != .all { terms.append(base) }
        return terms.isEmpty ? .all : terms.count == 1 ? terms[0] : .and(terms)
    }

    package var storeQuery: StoreQuery {
        StoreQuery(predicate: effectivePredicate, sort: sortDescriptors.map(\.storeSort), limit: fetchLimit)
    }
}
