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

    public init(
        predicate: AssetPredicate = .all, sortBy sortDescriptors: [AssetSortDescriptor] = [], limit: Int? = nil,
        includeHiddenAssets: Bool = false
    ) {
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = limit
        self.includeHiddenAssets = includeHiddenAssets
    }

    /// The predicate actually applied: the user's predicate, and "not hidden" unless hidden assets are included.
    var effectivePredicate: StorePredicate {
        let base = predicate.storePredicate
        if includeHiddenAssets { return base }
        return base == .all ? .isHidden(false) : .and([.isHidden(false), base])
    }

    var storeQuery: StoreQuery {
        StoreQuery(predicate: effectivePredicate, sort: sortDescriptors.map(\.storeSort), limit: fetchLimit)
    }
}
