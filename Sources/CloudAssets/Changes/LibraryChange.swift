import AssetStore
import Foundation

/// What one committed transaction did to the library (PhotoKit's `PHChange`).
///
/// Ask it how it affected each of your fetch results with ``details(for:)-(FetchResult)`` and each asset you
/// display with ``details(for:)-(Asset)``. Values are immutable and may be used on any thread.
public struct LibraryChange: Sendable {
    /// The token of this change: pass it to ``AssetLibrary/changes(since:)`` later to get what followed.
    public let token: ChangeToken
    let changes: StoreChangeSet
    let store: AssetStore
    let maxIncrementalChangeCount: Int
    /// Whether the assets it hands out carry their location (the library's access).
    let revealsLocation: Bool
    /// `true` when built from the persistent history (identifiers only; records are read when needed).
    let isHistorical: Bool
    /// The originals' prefix when folders of keys show as albums, else `nil` (their identifiers are left out).
    var keyFolderRoot: String? = nil

    package init(
        changes: StoreChangeSet, store: AssetStore, maxIncrementalChangeCount: Int, revealsLocation: Bool = false
    ) {
        self.token = changes.token
        self.revealsLocation = revealsLocation
        self.changes = changes
        self.store = store
        self.maxIncrementalChangeCount = maxIncrementalChangeCount
        self.isHistorical = false
    }

    init(history entry: StoreHistoryEntry, store: AssetStore, maxIncrementalChangeCount: Int, revealsLocation: Bool) {
        self.token = entry.token
        self.revealsLocation = revealsLocation
        var changes = StoreChangeSet(
            token: entry.token, inserted: entry.inserted, updated: entry.updated, contentChanged: entry.contentChanged,
            deleted: entry.deleted)
        changes.collections = entry.collections
        self.changes = changes
        self.store = store
        self.maxIncrementalChangeCount = maxIncrementalChangeCount
        self.isHistorical = true
    }

    /// Local identifiers of the assets this change inserted.
    public var insertedIdentifiers: Set<String> { Set(changes.inserted.map(String.init)) }
    /// Local identifiers of the assets this change updated (metadata, availability or content).
    public var updatedIdentifiers: Set<String> { Set(changes.updated.map(String.init)) }
    /// The subset of ``updatedIdentifiers`` whose content changed: the original's bytes, or its edit (an edit, a
    /// revert, another library's edit — ``Asset/hasAdjustments`` says which the asset shows now).
    public var contentChangedIdentifiers: Set<String> { Set(changes.contentChanged.map(String.init)) }
    /// Local identifiers of the assets this change deleted.
    public var deletedIdentifiers: Set<String> { Set(changes.deleted.map(String.init)) }

    /// How this change affected `fetchResult`, or `nil` when it did not (no object removed, inserted, changed or
    /// moved).
    ///
    /// `fetchResult` should reflect the library just before this change: the result of a fetch made before it, or
    /// the ``FetchResultChangeDetails/fetchResultAfterChanges`` of the previous change. Membership and order are
    /// derived from the change itself; only a result cut by its `fetchLimit` that lost objects reads its new tail
    /// from the library (its current state). For a change read from the history, the assets' current state is used.
    public func details(for fetchResult: FetchResult) -> FetchResultChangeDetails? {
        do {
            return try computeDetails(for: fetchResult)
        } catch {
            return nil
        }
    }

    func computeDetails(for fetchResult: FetchResult) throws -> FetchResultChangeDetails? {
        if let scope = fetchResult.scope { return try scopedDetails(for: fetchResult, scope: scope) }
        var afterRecords = changes.after
        if isHistorical {
            for record in try store.records(ids: changes.inserted.union(changes.updated)) {
                afterRecords[record.id!] = record
            }
        }
        let store = self.store
        let engine = ChangeDetailsEngine(
            before: fetchResult.sorted, query: fetchResult.query, afterRecords: afterRecords,
            beforeRecords: changes.before, inserted: changes.inserted, updated: changes.updated,
            deleted: changes.deleted, isHistorical: isHistorical, slowIndex: { fetchResult.index(ofIdentifier: $0) },
            fill: { position, excluding, limit in
                try store.fetchRecords(fetchResult.query, after: position, excluding: excluding, limit: limit)
            })
        let computed = try engine.compute()
        guard !computed.isEmpty else { return nil }
        let after = FetchResult(
            store: store, options: fetchResult.options, sorted: computed.after,
            revealsLocation: fetchResult.revealsLocation)
        let incremental = computed.size <= maxIncrementalChangeCount
        let indexSets = incremental ? computed.indexSets() : nil
        return FetchResultChangeDetails(
            // The assets this change touched are shown as they were before it, whether or not the app had read
            // them: a page read only now would otherwise show their state after it.
            fetchResultBeforeChanges: fetchResult.showing(changes.before), fetchResultAfterChanges: after,
            hasIncrementalChanges: incremental,
            removedIndexes: indexSets?.removed, insertedIndexes: indexSets?.inserted,
            changedIndexes: indexSets?.changed,
            moves: incremental
                ? computed.moves.map { .init(fromIndex: $0.from, toIndex: $0.to, beforeIndex: $0.beforeIndex) } : [],
            beforeRecords: changes.before, afterRecords: afterRecords)
    }

    /// Details for a result drawn from an album: its members and order after the change are read from the
    /// catalog, then compared with the result's. Only a change that touched the album reads anything.
    private func scopedDetails(for fetchResult: FetchResult, scope: FetchScope) throws -> FetchResultChangeDetails? {
        switch scope {
        case .album(let id, let uuid):
            guard try changes.collections.contains(uuid) || store.hasMembers(id, among: changes.updated) else {
                return nil
            }
        }
        if let fast = try albumInsertionsAndRemovals(fetchResult, scope: scope) { return fast }
        let collections = CollectionCatalog(store: store, revealsLocation: fetchResult.revealsLocation)
        let sorted = try collections.sorted(scope, options: fetchResult.options)
        let diff = IdentifierListDiff(before: fetchResult.sorted.ids, after: sorted.ids, changed: changes.updated)
        guard !diff.isEmpty else { return nil }
        var afterRecords = changes.after
        if isHistorical {
            for record in try store.records(ids: changes.inserted.union(changes.updated)) {
                afterRecords[record.id!] = record
            }
        }
        let after = FetchResult(
            store: store, options: fetchResult.options, sorted: sorted, revealsLocation: fetchResult.revealsLocation,
            scope: scope)
        let incremental = diff.size <= maxIncrementalChangeCount
        return FetchResultChangeDetails(
            fetchResultBeforeChanges: fetchResult.showing(changes.before), fetchResultAfterChanges: after,
            hasIncrementalChanges: incremental,
            removedIndexes: incremental ? diff.removed : nil, insertedIndexes: incremental ? diff.inserted : nil,
            changedIndexes: incremental ? diff.changed : nil,
            moves: incremental
                ? diff.moves.map { .init(fromIndex: $0.from, toIndex: $0.to, beforeIndex: $0.beforeIndex) } : [],
            beforeRecords: changes.before, afterRecords: afterRecords)
    }

    /// Details for an album in its own order from the change's record of its members, when the change only put
    /// assets in and took assets out (no move, no rewrite, no change to one of its assets): the after result is
    /// the before one with the removals taken out and the insertions merged in by position — no read of the album,
    /// O(album) copying. `nil` when the change is not of that kind (the caller reads the album instead).
    private func albumInsertionsAndRemovals(_ fetchResult: FetchResult, scope: FetchScope) throws
        -> FetchResultChangeDetails?
    {
        guard !isHistorical, case .album(let id, _) = scope, fetchResult.options.sortDescriptors.isEmpty,
            fetchResult.options.fetchLimit == nil, let delta = changes.memberDeltas[id], !delta.rebuilt,
            case .integer(let positions)? = fetchResult.sorted.keys.first
        else { return nil }
        let before = fetchResult.sorted.ids
        // An asset of the change already shown, or placed again: a move or a change of its fields.
        for asset in changes.updated.union(delta.placed.keys) where fetchResult.index(ofIdentifier: asset) != nil {
            return nil
        }
        let placed = delta.placed.isEmpty ? [] : try store.records(ids: Array(delta.placed.keys))
        let predicate = fetchResult.query.predicate
        let entering = placed.compactMap { record -> (id: Int64, position: Int64)? in
            guard let asset = record.id, let position = delta.placed[asset], predicate.matches(record) else {
                return nil
            }
            return (asset, position)
        }.sorted { $0.position != $1.position ? $0.position < $1.position : $0.id < $1.id }
        var removed = IndexSet()
        for asset in delta.removed {
            if let index = fetchResult.index(ofIdentifier: asset) { removed.insert(index) }
        }
        guard !removed.isEmpty || !entering.isEmpty else { return nil }
        var ids = ContiguousArray<Int64>()
        var keys = ContiguousArray<Int64>()
        ids.reserveCapacity(before.count - removed.count + entering.count)
        keys.reserveCapacity(ids.capacity)
        var inserted = IndexSet()
        var next = 0
        for index in before.indices where !removed.contains(index) {
            while next < entering.count,
                entering[next].position < positions[index]
                    || (entering[next].position == positions[index] && entering[next].id < before[index])
            {
                inserted.insert(ids.count)
                ids.append(entering[next].id)
                keys.append(entering[next].position)
                next += 1
            }
            ids.append(before[index])
            keys.append(positions[index])
        }
        while next < entering.count {
            inserted.insert(ids.count)
            ids.append(entering[next].id)
            keys.append(entering[next].position)
            next += 1
        }
        let after = FetchResult(
            store: store, options: fetchResult.options, sorted: SortedIdentifiers(ids: ids, keys: [.integer(keys)]),
            revealsLocation: fetchResult.revealsLocation, scope: scope)
        let incremental = removed.count + inserted.count <= maxIncrementalChangeCount
        return FetchResultChangeDetails(
            fetchResultBeforeChanges: fetchResult.showing(changes.before), fetchResultAfterChanges: after,
            hasIncrementalChanges: incremental, removedIndexes: incremental ? removed : nil,
            insertedIndexes: incremental ? inserted : nil, changedIndexes: incremental ? IndexSet() : nil, moves: [],
            beforeRecords: changes.before, afterRecords: changes.after)
    }

    /// Local identifiers of the albums and folders this change created, changed (renamed, moved, assets added,
    /// removed or reordered, an asset of theirs deleted) or deleted; with folders of keys shown
    /// (``AssetLibrary/Configuration/keyFoldersAsAlbums``), those whose originals came or went, and those above a
    /// folder of keys that appeared or went.
    public var changedCollectionIdentifiers: Set<String> {
        changes.collections.filter { identifier in
            let prefix =
                identifier.hasPrefix(AssetStore.keyAlbumPrefix)
                ? AssetStore.keyAlbumPrefix
                : identifier.hasPrefix(AssetStore.keyListPrefix) ? AssetStore.keyListPrefix : nil
            guard let prefix else { return true }
            guard let root = keyFolderRoot else { return false }
            let folder = identifier.dropFirst(prefix.count)
            return folder.hasPrefix(root) && folder.utf8.count > root.utf8.count
        }
    }

    /// How this change affected `asset`, or `nil` when it did not update or delete it.
    public func details(for asset: Asset) -> ObjectChangeDetails? {
        let id = asset.rowID
        if changes.deleted.contains(id) {
            let before = changes.before[id].map { Asset($0, revealsLocation: revealsLocation, store: store) } ?? asset
            return ObjectChangeDetails(objectBeforeChanges: before, objectAfterChanges: nil, assetContentChanged: false)
        }
        guard changes.updated.contains(id) else { return nil }
        let before = changes.before[id].map { Asset($0, revealsLocation: revealsLocation, store: store) } ?? asset
        // try?: a record gone since reads as no details (nil)
        let afterRecord = isHistorical ? (try? store.record(id: id)) : changes.after[id]
        return ObjectChangeDetails(
            objectBeforeChanges: before,
            objectAfterChanges: afterRecord.map { Asset($0, revealsLocation: revealsLocation, store: store) },
            assetContentChanged: changes.contentChanged.contains(id))
    }
}
