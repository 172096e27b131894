import AssetStore
import Foundation
import S3Transfer

/// What one catalog sync did.
public struct SyncSummary: Sendable, Hashable {
    /// Objects listed under the originals prefix.
    public var listed = 0
    /// Assets inserted for new objects.
    public var inserted = 0
    /// Assets whose object changed (ETag or size): a content change.
    public var contentChanged = 0
    /// Assets whose remote metadata (not the bytes) changed.
    public var metadataChanged = 0
    /// Assets removed because their object is gone.
    public var removed = 0
    /// HEAD requests made for metadata (new or changed objects only).
    public var headRequests = 0
    /// Listing pages read (originals and thumbnails).
    public var pages = 0
    /// Store transactions committed (an unchanged bucket commits none).
    public var transactions = 0
    /// True when this run continued one that was interrupted.
    public var resumed = false
    /// Thumbnails fetched after listing.
    public var thumbnailsFetched = 0
}

/// Reconciles the bucket's listing with the store, page by page.
///
/// Each listing page is reconciled in one store transaction covering the key interval the page spans
/// (after the previous page's last key, up to and including its own last key; the last page runs to the
/// end): objects not in the store are inserted `cloudOnly`, objects whose ETag or size changed are content
/// changes, store keys inside the interval that the page lacks are removed. Because every transaction is
/// complete for its interval, an interrupted sync resumes after the last reconciled key (kept in
/// `<store>/sync-state.json`, written only beside transactions that changed something) and an unchanged
/// bucket causes no writes at all.
struct CatalogSync {
    let library: AssetLibrary
    let remote: LibraryRemote

    func run() async throws -> SyncSummary {
        var summary = SyncSummary()
        let layout = library.configuration.layout
        let thumbnails = try await listThumbnails(summary: &summary)
        let stateURL = library.configuration.storeURL.appendingPathComponent("sync-state.json")
        let resumeKey = SyncState.load(from: stateURL)?.lastReconciledKey
        summary.resumed = resumeKey != nil

        // Store keys under the originals prefix, in S3's order (UTF-8 bytes).
        let storeKeys = try library.store.keysAndIdentifiers(withPrefix: layout.originalsPrefix)
        var cursor = 0
        if let resumeKey {
            while cursor < storeKeys.count, !resumeKey.utf8.lexicographicallyPrecedes(storeKeys[cursor].key.utf8) {
                cursor += 1
            }
        }
        var continuation: String?
        while true {
            try Task.checkCancellation()
            let page = try await remote.client.listObjectsV2(
                bucket: library.configuration.bucket, prefix: layout.originalsPrefix,
                continuationToken: continuation, startAfter: continuation == nil ? resumeKey : nil)
            summary.pages += 1
            summary.listed += page.objects.count
            let upper: String? = page.isTruncated ? page.objects.last?.key : nil
            let listed = Set(page.objects.map(\.key))
            var vanished: [Int64] = []
            while cursor < storeKeys.count {
                let entry = storeKeys[cursor]
                if let upper, upper.utf8.lexicographicallyPrecedes(entry.key.utf8) { break }
                if !listed.contains(entry.key) { vanished.append(entry.id) }
                cursor += 1
            }
            try await reconcile(
                objects: page.objects, vanished: vanished, thumbnails: thumbnails, resumeMarker: upper,
                stateURL: stateURL, summary: &summary)
            guard page.isTruncated else { break }
            guard let next = page.nextContinuationToken else {
                throw S3Error.malformedResponse("the listing is truncated but carries no continuation token")
            }
            continuation = next
        }
        if resumeKey != nil || summary.transactions > 0 { SyncState.clear(at: stateURL) }
        return summary
    }

    /// Lists `thumbnails/` once: original key → thumbnail object.
    private func listThumbnails(summary: inout SyncSummary) async throws -> [String: S3ObjectSummary] {
        let layout = library.configuration.layout
        var result: [String: S3ObjectSummary] = [:]
        for try await page in remote.client.listAllObjects(
            bucket: library.configuration.bucket, prefix: layout.thumbnailsPrefix)
        {
            summary.pages += 1
            for object in page.objects {
                if let original = layout.originalKey(forThumbnailKey: object.key) { result[original] = object }
            }
        }
        return result
    }

    private func reconcile(
        objects: [S3ObjectSummary], vanished: [Int64], thumbnails: [String: S3ObjectSummary],
        resumeMarker: String?, stateURL: URL, summary: inout SyncSummary
    ) async throws {
        // Decide, from a read, which objects are new or changed: only those need a HEAD for metadata.
        let byKey = try library.store.records(keys: objects.map(\.key))
        var needHead: [S3ObjectSummary] = []
        var rows: [AssetRecord] = []
        for object in objects {
            let thumb = thumbnails[object.key]
            if let current = byKey[object.key], current.etag == object.etag, current.size == object.size {
                // Same bytes: only the thumbnail fields can differ; upsert writes nothing when equal.
                var row = current
                row.thumbnailKey = thumb?.key
                row.thumbnailSize = thumb?.size
                row.thumbnailETag = thumb?.etag
                rows.append(row)
            } else {
                needHead.append(object)
            }
        }
        let heads = try await headAll(needHead, summary: &summary)
        for object in needHead {
            rows.append(
                RemoteMetadata.record(
                    for: object, head: heads[object.key], thumbnail: thumbnails[object.key],
                    source: library.configuration.metadataSource))
        }
        var filesToRemove: [String] = []
        let files = library.files
        // Downloads of vanished objects stop before their files go: a cancelled download writes no more files,
        // so none appears after the removal below.
        if !vanished.isEmpty { library.runtime.cancelDownloads(forAssets: vanished) }
        let counts = try library.performWrite { tx -> ReconcileCounts in
            tx.reserveCapacity(rows.count)
            var c = ReconcileCounts()
            for row in rows {
                switch try tx.upsert(row) {
                case .inserted: c.inserted += 1
                case .updated(_, let before):
                    if before.etag != row.etag || before.size != row.size {
                        c.content += 1
                        filesToRemove += files.originalPaths(id: before.id!, key: before.key)
                    } else {
                        c.meta += 1
                    }
                case .unchanged: break
                }
            }
            for id in vanished {
                if let before = try tx.record(id) {
                    filesToRemove += files.allPaths(id: id, key: before.key)
                    if try tx.delete(id) { c.removed += 1 }
                }
            }
            // Files go under the write lock, so no concurrent commit (a ranged read) can record bytes in a file
            // that is about to disappear.
            for path in filesToRemove { try? FileManager.default.removeItem(atPath: path) }
            return c
        }
        summary.inserted += counts.inserted
        summary.contentChanged += counts.content
        summary.metadataChanged += counts.meta
        summary.removed += counts.removed
        let changed = counts.inserted + counts.content + counts.meta + counts.removed > 0
        if changed {
            summary.transactions += 1
            if let resumeMarker { SyncState(lastReconciledKey: resumeMarker).save(to: stateURL) }
        }
    }

    /// HEADs the objects with at most `maxConnections` in flight. A vanished object (404) is skipped: the
    /// next listing will no longer show it.
    private func headAll(_ objects: [S3ObjectSummary], summary: inout SyncSummary) async throws
        -> [String: S3ObjectHead]
    {
        guard library.configuration.metadataSource == AssetLibrary.MetadataSource.headObject, !objects.isEmpty else {
            return [:]
        }
        summary.headRequests += objects.count
        let client = remote.client
        let bucket = library.configuration.bucket
        let limit = max(1, library.configuration.maxConnections)
        return try await withThrowingTaskGroup(of: (String, S3ObjectHead?).self) { group in
            var result: [String: S3ObjectHead] = [:]
            var iterator = objects.makeIterator()
            func addNext() -> Bool {
                guard let object = iterator.next() else { return false }
                group.addTask {
                    do {
                        return (object.key, try await client.headObject(bucket: bucket, key: object.key))
                    } catch S3Error.noSuchKey {
                        return (object.key, nil)  // gone since the listing; the next sync drops it
                    }
                }
                return true
            }
            for _ in 0..<limit where !addNext() { break }
            while let (key, head) = try await group.next() {
                if let head { result[key] = head }
                _ = addNext()
            }
            return result
        }
    }
}

/// The resume point of an interrupted sync.
struct SyncState: Codable {
    var lastReconciledKey: String

    static func load(from url: URL) -> SyncState? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(SyncState.self, from: data)
    }

    func save(to url: URL) {
        guard let data = try? JSONEncoder().encode(self) else { return }
        try? data.write(to: url, options: .atomic)
    }

    static func clear(at url: URL) { try? FileManager.default.removeItem(at: url) }
}

private struct ReconcileCounts {
    var inserted = 0
    var content = 0
    var meta = 0
    var removed = 0
}
