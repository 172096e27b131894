import AssetStore
import Essentials
import Foundation
import S3Transfer

extension OriginalsCache {

    /// Marks assets pinned (one transaction) and, when background transfers are on, starts their downloads.
    func pin(_ ids: [Int64]) throws {
        try setPinned(ids, true)
        if configuration.startsBackgroundTransfers { startCaching(ids, priority: .utility) }
    }

    /// Clears the assets' pins (one transaction).
    func unpin(_ ids: [Int64]) throws { try setPinned(ids, false) }

    /// ``AssetLibrary/cacheUsage()``.
    func usage() throws -> CacheUsage {
        let usage = try localBytes()
        telemetry.cacheBytes(usage.bytes)
        return CacheUsage(bytes: usage.bytes, fullAssets: usage.fullAssets, partialAssets: usage.partialAssets)
    }

    /// Stops prefetching these assets (downloads shared with user requests go on for those requests).
    func stopCaching(_ ids: [Int64]) {
        for id in ids { downloads.setCachingTask(nil, for: id)?.cancel() }
    }

    private func setPinned(_ ids: [Int64], _ pinned: Bool) throws {
        try catalog.performWrite { tx in
            for id in ids where try tx.record(id)?.isPinned == !pinned {
                _ = try tx.update(id) { $0.isPinned = pinned }
            }
        }
    }

    @available(*, noasync, message: "blocks its thread; async code awaits the async form")
    @discardableResult
    func evict(ids: [Int64], force: Bool) throws -> Int64 {
        try catalog.performWrite { tx in try evict(ids: ids, force: force, in: tx) }
    }

    /// ``evict(ids:force:)`` from async code: the commit runs on the catalog's writer, not the cooperative pool.
    @discardableResult
    func evict(ids: [Int64], force: Bool) async throws -> Int64 {
        try await catalog.performWrite { tx in try evict(ids: ids, force: force, in: tx) }
    }

    /// The eviction inside the write transaction: rows updated, then their files removed (under the write lock,
    /// so that a concurrent ranged read cannot record bytes in a file removed here).
    private func evict(ids: [Int64], force: Bool, in tx: StoreTransaction) throws -> Int64 {
        var paths: [String] = []
        var freed: Int64 = 0
        for id in ids {
            guard let record = try tx.record(id) else { continue }
            if record.isPinned && !force { throw AssetRequestError.pinned(localIdentifier: id) }
            // An edit's rendered version goes too once it is in the bucket; its adjustment data and thumbnail
            // stay (the edit can still be resumed, and is drawn from its thumbnail).
            if let revision = record.editRevision, record.renderedPresent,
                try tx.editRevisions(of: id).first(where: { $0.revision == revision })?.isShared == true
            {
                let rendered = files.rendered(id: id, revision: revision)
                freed += LocalFiles.regularFileSize(rendered.path) ?? 0
                paths.append(rendered.path)
                _ = try tx.update(id) {
                    $0.editAvailability = files.editAvailability(id: id, revision: revision, rendered: false)
                }
            }
            guard record.availability == .full || record.availability == .partial else { continue }
            // The only copy of an import that is not in the bucket yet is never removed.
            guard record.uploadState == .uploaded else { continue }
            freed += record.availability == .full ? record.size : record.partialRanges.totalBytes
            paths += files.originalPaths(id: id, key: record.key)
            _ = try tx.update(id) { $0.dropLocalOriginal() }
            telemetry.transition(
                "availability", asset: id, key: record.key, ["from": "\(record.availability)", "reason": "evicted"])
        }
        // Under the write lock: a concurrent ranged read cannot record bytes in a file removed here.
        // try?: our own file; one left only takes room (no row names it)
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
        return freed
    }

    /// ``cacheUsage()``'s figures: the full originals counted and summed in SQL (no row decoded: a cache of a
    /// hundred thousand originals is not read row by row), the partial ones (few) read for their ranges.
    func localBytes() throws -> (bytes: Int64, fullAssets: Int, partialAssets: Int) {
        let full = try catalog.store.fullOriginals()
        let partial = try catalog.store.records(
            ids: catalog.store.fetchIDs(StoreQuery(predicate: .availability([.partial]))))
        let bytes = try partial.reduce(catalog.store.generatedThumbnailBytes() + full.bytes) {
            $0 + $1.partialRanges.totalBytes
        }
        return (bytes, full.count, partial.count)
    }

    /// Evicts unpinned originals, least recently used first, until the cache is under its size limit; the
    /// asset just fetched is kept.
    ///
    /// Called after every download: under the limit (the usual case) it decodes no `full` row (see
    /// ``localBytes()``); reading every local asset's row made a batch of downloads into a large cache cost
    /// O(local assets) each.
    func enforceCacheLimit(keeping keep: Int64?) async throws {
        guard let limit = configuration.cacheSizeLimit else { return }
        let bytes = try localBytes().bytes
        telemetry.cacheBytes(bytes)
        guard bytes > limit else { return }
        // Over the limit: every local asset is a candidate, least recently used first (recounted from the rows
        // read, so that the two agree).
        let records = try catalog.store.records(
            ids: catalog.store.fetchIDs(StoreQuery(predicate: .availability([.full, .partial]))))
        var used = try records.reduce(catalog.store.generatedThumbnailBytes()) {
            $0 + ($1.availability == .full ? $1.size : $1.partialRanges.totalBytes)
        }
        guard used > limit else { return }
        var candidates: [(id: Int64, size: Int64, used: Date)] = []
        for r in records {
            guard let id = r.id, !r.isPinned, r.uploadState == .uploaded, id != keep, !downloads.isDownloading(id)
            else {
                continue
            }
            let size = r.availability == .full ? r.size : r.partialRanges.totalBytes
            let memory = downloads.lastAccess(id) ?? .distantPast
            let persisted = r.lastAccessDate ?? .distantPast
            candidates.append((id, size, max(memory, persisted)))
        }
        candidates.sort { a, b in a.used == b.used ? a.id < b.id : a.used < b.used }
        var victims: [Int64] = []
        for c in candidates where used > limit {
            victims.append(c.id)
            used -= c.size
        }
        if !victims.isEmpty { try await evict(ids: victims, force: false) }
    }

    /// Prefetches originals at `priority` (as non-user work: the `userRequestsOnly` and `offline` policies skip
    /// them); already-local assets are skipped.
    func startCaching(_ ids: [Int64], priority: DownloadPriority) {
        guard remote != nil, network.allows(userRequest: false) else { return }
        for id in ids {
            let requestID = downloads.nextRequestID()
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            let task = Task { [self] in
                // try?: a pin's download is tried again at the next open or pin
                _ = try? await self.ensureOriginal(
                    assetID: id, options: options, requestID: requestID, priority: priority, isUserRequest: false)
                _ = self.downloads.setCachingTask(nil, for: id)
            }
            downloads.setCachingTask(task, for: id)?.cancel()
        }
    }

}

extension OriginalsCache {
    /// ``AssetLibrary/assetCounts()``.
    func counts() throws -> AssetCounts {
        let counts = try catalog.store.assetCounts()
        var byAvailability: [AssetAvailability: Int] = [:]
        for state in AssetAvailability.allCases { byAvailability[state] = counts.byAvailability[state.stored] ?? 0 }
        let fill = try catalog.store.metadataFillCounts()
        return AssetCounts(
            byAvailability: byAvailability, pinned: counts.pinned, trashed: counts.trashed,
            metadataPending: fill.objectHead + (configuration.imageHeaderBytes > 0 ? fill.imageHeaders : 0))
    }

    /// Restarts the downloads of pinned assets whose original is not local yet — interrupted by a crash, a
    /// `kill -9` or `close()` — at utility priority; each continues from its `.part` file. Called on open; does
    /// nothing without an endpoint or when the network policy forbids background work.
    func resumePinnedDownloads() {
        guard remote != nil, configuration.startsBackgroundTransfers, network.allows(userRequest: false) else {
            return
        }
        // One query over two columns, not a load of every record: this runs on every open.
        // try?: unreadable now: the pins resume at the next open
        guard let ids = try? catalog.store.identifiersOfPinnedAssetsNotFull(), !ids.isEmpty,
            // try?: unreadable now: the pins resume at the next open
            let records = try? catalog.store.records(ids: ids)
        else { return }
        let pinned = records.compactMap(\.id)
        if !pinned.isEmpty { startCaching(pinned, priority: .utility) }
    }
}

/// How many assets a library holds in each state (``AssetLibrary/assetCounts()``).
public struct AssetCounts: Sendable, Hashable {
    /// Assets not in the trash (hidden ones included), by availability; every state has an entry.
    public let byAvailability: [AssetAvailability: Int]
    /// Pinned assets not in the trash.
    public let pinned: Int
    /// Assets in the trash.
    public let trashed: Int
    /// Assets whose metadata a sync has still to read (``Asset/provisionalFields``): a first sync cut short, or
    /// objects whose HEAD was refused. The next sync reads them.
    public let metadataPending: Int
    /// Assets not in the trash.
    public var total: Int { byAvailability.values.reduce(0, +) }
}

/// What the library's cache holds on disk (``AssetLibrary/cacheUsage()``), as the catalog records it.
public struct CacheUsage: Sendable, Hashable {
    /// Bytes of full originals, partial ranges and the thumbnails the library made itself.
    public var bytes: Int64
    /// Assets whose original is local and verified (`full`).
    public var fullAssets: Int
    /// Assets with some verified byte ranges (`partial`).
    public var partialAssets: Int
}
