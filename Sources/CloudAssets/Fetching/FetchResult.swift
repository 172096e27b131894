package import AssetStore
import Essentials
public import Foundation

/// An immutable, ordered list of assets: the result of one fetch (PhotoKit's `PHFetchResult`).
///
/// *Membership and order* are a snapshot taken when the fetch ran (or, for
/// ``FetchResultChangeDetails/fetchResultAfterChanges``, derived from the previous snapshot and one change): they
/// never change afterwards. Only identifiers (and sort keys) are held in memory; the ``Asset`` values are read
/// lazily from the library in pages of 256 and cached, so they reflect the library when the page was first
/// read (like PhotoKit, which returns current objects). An asset deleted before its page was read is returned as a
/// placeholder with an empty `key`. A fetch result is safe to use from any thread.
public final class FetchResult: Sendable, RandomAccessCollection {
    /// How many assets are read from the library at a time.
    static let pageSize = 256
    private static let maximumCachedPages = 64

    /// The options the result was fetched with.
    public let options: FetchOptions
    let sorted: SortedIdentifiers
    let query: StoreQuery
    let store: AssetStore
    /// Whether its assets carry their location (the library's ``AssetLibrary/Configuration/locationAccess``).
    let revealsLocation: Bool
    /// Where its members come from when not from the options alone (an album's assets).
    let scope: FetchScope?
    private let cache = LockedBox(Cache())

    private struct Cache {
        var indexByID: [Int64: Int]?
        /// Lookups answered by a scan so far (see ``index(ofIdentifier:)``).
        var scans = 0
        var pages: [Int: [Asset]] = [:]
        var pageOrder: [Int] = []
    }

    /// Assets shown as they were, whatever the library holds now (the before state of a change's assets).
    private let snapshot: [Int64: AssetRecord]

    package init(
        store: AssetStore, options: FetchOptions, sorted: SortedIdentifiers, snapshot: [Int64: AssetRecord] = [:],
        revealsLocation: Bool = false, scope: FetchScope? = nil
    ) {
        self.scope = scope
        self.store = store
        self.revealsLocation = revealsLocation
        self.options = options
        self.query = options.storeQuery
        self.sorted = sorted
        self.snapshot = snapshot
    }

    /// The same membership and order, with `records` shown as given (for the assets a change touched: their
    /// state before it) rather than read from the library. Itself when there is nothing to show differently.
    func showing(_ records: [Int64: AssetRecord]) -> FetchResult {
        guard !records.isEmpty else { return self }
        // Shares the change's dictionary (no copy) unless this result already shows some records.
        let merged = snapshot.isEmpty ? records : snapshot.merging(records) { _, new in new }
        return FetchResult(
            store: store, options: options, sorted: sorted, snapshot: merged, revealsLocation: revealsLocation,
            scope: scope)
    }

    /// The local identifiers, in order (O(n) unless the result holds them in one stretch).
    package var identifiers: ContiguousArray<Int64> { sorted.ids }

    /// The first position: 0.
    public var startIndex: Int { 0 }
    /// One past the last position: ``count``.
    public var endIndex: Int { sorted.count }
    /// How many assets the result holds (no database access).
    public var count: Int { sorted.count }

    /// The asset at `index` (0 ≤ index < count).
    public subscript(index: Int) -> Asset {
        precondition(index >= 0 && index < count, "FetchResult index \(index) out of range 0..<\(count)")
        if !snapshot.isEmpty, let fixed = snapshot[sorted.id(at: index)] {
            return Asset(fixed, revealsLocation: revealsLocation, store: store)
        }
        let page = index / Self.pageSize
        let offset = index % Self.pageSize
        if let cached = cache.withLock({ $0.pages[page] }) { return cached[offset] }
        let loaded = loadPage(page)
        return loaded[offset]
    }

    /// The first asset, or `nil` when the result is empty (PhotoKit's `firstObject`).
    public var firstObject: Asset? { isEmpty ? nil : self[0] }
    /// The last asset, or `nil` when the result is empty (PhotoKit's `lastObject`).
    public var lastObject: Asset? { isEmpty ? nil : self[count - 1] }

    /// `true` when the asset with this identifier is in the result.
    public func contains(_ asset: Asset) -> Bool { index(ofIdentifier: asset.rowID) != nil }

    /// The position of `asset` (matched by identifier), or `nil`.
    public func index(of asset: Asset) -> Int? { index(ofIdentifier: asset.rowID) }

    /// Lookups a result answers by scanning its identifiers before it builds an index of them: a change read from
    /// the history (another process's) locates its few assets in a million-asset result in ~1 ms each this way,
    /// where the index costs ~100 ms, and each change makes a new result.
    static let scansBeforeIndex = 16

    /// The position of the asset with this identifier, or `nil`. The first ``scansBeforeIndex`` calls scan the
    /// identifiers (O(n), no allocation); the next builds an index (O(n)), and later calls are O(1).
    package func index(ofIdentifier id: Int64) -> Int? {
        cache.withLock { cache in
            if cache.indexByID == nil, cache.scans < Self.scansBeforeIndex {
                cache.scans += 1
                var found: Int?
                sorted.forEachRun(in: 0..<sorted.count) { chunk, positions, start in
                    guard found == nil, let at = chunk.ids[positions].firstIndex(of: id) else { return }
                    found = start + (at - positions.lowerBound)
                }
                return found
            }
            if cache.indexByID == nil {
                var map = [Int64: Int](minimumCapacity: sorted.count)
                sorted.forEachRun(in: 0..<sorted.count) { chunk, positions, start in
                    for (offset, id) in chunk.ids[positions].enumerated() { map[id] = start + offset }
                }
                cache.indexByID = map
            }
            return cache.indexByID![id]
        }
    }

    /// The assets at these positions, in ascending position order.
    public func objects(at indexes: IndexSet) -> [Asset] { indexes.map { self[$0] } }

    private func loadPage(_ page: Int) -> [Asset] {
        let range = (page * Self.pageSize)..<Swift.min(count, (page + 1) * Self.pageSize)
        let ids = sorted.ids(in: range)
        // try?: a closed store: the page reads as deleted assets
        let records = (try? store.records(ids: ids)) ?? []
        var byID = [Int64: Asset](minimumCapacity: records.count)
        for record in records { byID[record.id!] = Asset(record, revealsLocation: revealsLocation, store: store) }
        let assets = ids.map { byID[$0] ?? Asset.deleted(id: $0) }
        cache.withLock { cache in
            if cache.pages[page] == nil {
                cache.pages[page] = assets
                cache.pageOrder.append(page)
                if cache.pageOrder.count > Self.maximumCachedPages {
                    cache.pages[cache.pageOrder.removeFirst()] = nil
                }
            }
        }
        return assets
    }
}

extension FetchResult: CustomStringConvertible {
    /// `FetchResult(N assets)`.
    public var description: String { "FetchResult(\(count) assets)" }
}
