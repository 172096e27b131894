import AssetStore
import Essentials
public import Foundation
import Images
import S3Transfer

/// What one catalog sync did.
public struct SyncSummary: Sendable, Hashable, Codable {
    /// Objects listed under the originals prefix.
    public internal(set) var listed = 0
    /// Assets inserted for new objects.
    public internal(set) var inserted = 0
    /// Assets whose object changed (ETag or size): a content change.
    public internal(set) var contentChanged = 0
    /// Assets whose remote metadata (not the bytes) changed.
    public internal(set) var metadataChanged = 0
    /// Assets removed because their object is gone.
    public internal(set) var removed = 0
    /// Objects whose head (`x-amz-meta-*`) was read (new or changed objects only): by a HEAD, or with an image's
    /// first bytes (``imageHeaderReads``).
    public internal(set) var headRequests = 0
    /// Ranged GETs of an image's first bytes made for its own headers (EXIF). In the fill after a first listing
    /// the response also carries the object's head: one request for such an object.
    public internal(set) var imageHeaderReads = 0
    /// Ranged GETs of videos' containers made for their length, size, codec, date and place (at most a few per
    /// video, wherever its `moov` box is; ``Asset/duration``).
    public internal(set) var videoHeaderReads = 0
    /// Assets whose metadata this sync read after committing them from their listing alone (the second phase of
    /// a first sync of objects other tools wrote, or what an interrupted sync left).
    public internal(set) var metadataFilled = 0
    /// Assets whose metadata is still to read when the sync ended (0 unless it was cut short, an object was
    /// skipped, or ``AssetLibrary/Configuration/imageHeaderBytes`` is 0): ``Asset/provisionalFields`` says which
    /// of their fields are the listing's guesses. The next sync goes on with them.
    public internal(set) var metadataPending = 0
    /// Listing pages read (originals and thumbnails).
    public internal(set) var pages = 0
    /// Store transactions committed (an unchanged bucket commits none).
    public internal(set) var transactions = 0
    /// True when this run continued one that was interrupted.
    public internal(set) var resumed = false
    /// Thumbnails fetched after listing.
    public internal(set) var thumbnailsFetched = 0
    /// Thumbnails made, for images another tool uploaded, from the bytes their header read fetched (no request of
    /// their own): the EXIF thumbnail embedded in the image, or a small image's whole file (one the header read
    /// took all of, ``AssetLibrary/Configuration/imageHeaderBytes`` or less).
    public internal(set) var thumbnailsFromImageHeaders = 0
    /// Metadata sidecars read and merged (those whose ETag changed since the last merge).
    public internal(set) var sidecarsRead = 0
    /// Album and folder documents read and merged (announced in the journal, or, on a full sync or a bootstrap,
    /// those whose ETag changed since the last merge).
    public internal(set) var collectionsRead = 0
    /// Assets purged from the trash (past the retention).
    public internal(set) var purged = 0
    /// Whether the sync listed the whole bucket (``SyncMode/full``) or read the journal
    /// (``SyncMode/incremental``).
    public internal(set) var mode: SyncMode = .full
    /// Journal entries read (GET) by an incremental sync.
    public internal(set) var journalEntriesRead = 0
    /// Assets a new library took from the bucket's newest checkpoint instead of a listing (0 when none).
    public internal(set) var checkpointAssets = 0
    /// Whether this sync wrote the bucket's checkpoint for the current period.
    public internal(set) var wroteCheckpoint = false
    /// Whether the journal no longer held entries this library had not read (it had not synced for longer than
    /// the bucket's retention, ``AssetLibrary/Configuration/journalRetention``): the sync then listed the whole
    /// bucket (``mode`` is ``SyncMode/full``), as PhotoKit's persistent history answers "expired".
    public internal(set) var historyExpired = false
    /// Edit revisions (manifests) read from the bucket's edits prefix (full syncs and bootstraps).
    public internal(set) var editsRead = 0
    /// Journal entries (and old checkpoints' objects) this sync deleted from the bucket after writing a checkpoint.
    public internal(set) var journalObjectsPruned = 0
    /// Objects whose metadata the sync could not read (their HEAD was refused for that object alone), with the
    /// reason. A new one is in the catalog with its listing's facts (``Asset/provisionalFields``), an asset
    /// already there keeps its earlier state; the next sync tries again.
    /// Also what the sync refused to trust (see docs/bucket-layout.md, "What a library trusts in the bucket"): a journal
    /// entry, one change of an entry, a checkpoint or one of its lines that breaks a rule — keyed by the object
    /// read (the entry, the manifest, the part), with a one-line reason. Nothing skipped is ever acted on.
    public internal(set) var skipped: [SkippedObject] = []
    /// When the catalog last reflected a full listing of the bucket — this library's own, or the one the
    /// checkpoint it started from reflects; nil before any. Objects other tools write (not in the journal) are
    /// found by a full listing only: ``SyncMode/full`` forces one, and ``SyncMode/automatic`` runs one when the
    /// last is older than 100 times what it took (at least a minute, at most
    /// ``AssetLibrary/Configuration/fullSyncInterval``).
    public internal(set) var lastFullListing: Date?

    /// Takes a full sync's summary as this one's, keeping what was reported before it (skipped input).
    mutating func absorbFullSync(_ full: SyncSummary) {
        let earlier = skipped
        self = full
        skipped = earlier + full.skipped
    }

    /// Adds the counts of another part of the same sync (a listing page, a pass), and its skipped objects.
    mutating func absorb(_ other: SyncSummary) {
        listed += other.listed
        inserted += other.inserted
        contentChanged += other.contentChanged
        metadataChanged += other.metadataChanged
        removed += other.removed
        headRequests += other.headRequests
        imageHeaderReads += other.imageHeaderReads
        videoHeaderReads += other.videoHeaderReads
        metadataFilled += other.metadataFilled
        pages += other.pages
        transactions += other.transactions
        thumbnailsFetched += other.thumbnailsFetched
        thumbnailsFromImageHeaders += other.thumbnailsFromImageHeaders
        sidecarsRead += other.sidecarsRead
        collectionsRead += other.collectionsRead
        purged += other.purged
        journalEntriesRead += other.journalEntriesRead
        skipped += other.skipped
    }

    /// An object a sync left out, and why.
    public struct SkippedObject: Sendable, Hashable, Codable {
        /// The object's key, exactly as listed.
        public internal(set) var key: String
        /// A one-line reason.
        public internal(set) var reason: String
    }
}

/// Reconciles the bucket's listing with the store, page by page.
///
/// The originals are listed over key ranges at once (``RangedListing``, up to `maxConnections` requests in
/// flight). Each listing page is reconciled in one store transaction covering the key interval the page accounts
/// for: objects not in the store are inserted `cloudOnly`, objects whose ETag or size changed are content
/// changes, store keys inside the interval that the page lacks are removed. Because every transaction is
/// complete for its interval, intervals can be reconciled in any order, and an interrupted sync resumes after the
/// point up to which every interval was reconciled (kept in `<store>/sync-state.json`, written only beside
/// transactions that changed something), then lists the part before it again; an unchanged bucket causes no
/// writes at all. A failed or cut listing request fails the sync: no interval is reconciled from a page that did
/// not arrive whole, so nothing is removed because of it.
struct CatalogSync {
    let sync: SyncEngine
    let remote: LibraryRemote
    /// Whether images read for their headers get a thumbnail from their embedded EXIF thumbnail (when the bucket
    /// has no thumbnail object for them): the bytes are already here, so it costs no request.
    var makesThumbnails = true
    /// Where the rows committed with metadata still to read go, for the fill beside the listing (none: they are
    /// read after it).
    var feed: FillFeed?
    /// Embedded thumbnails kept in memory at most during one pass (the rest are made on demand).
    static let embeddedThumbnailBudget = 32 << 20

    func run() async throws -> SyncSummary {
        var summary = SyncSummary()
        let thumbnails = try await listThumbnails(summary: &summary)
        let stateURL = sync.configuration.storeURL.appendingPathComponent("sync-state.json")
        let resumeKey = SyncState.load(from: stateURL)?.lastReconciledKey
        summary.resumed = resumeKey != nil

        let context = PassContext(thumbnails: thumbnails, stateURL: stateURL)
        // From the resume point to the end; then, when resumed, from the start through the resume point: the
        // part an interrupted run reconciled may have changed since, and a sync that reports success reflects
        // the whole bucket as of its listing.
        try await pass(after: resumeKey, through: nil, context: context)
        if let resumeKey {
            try await pass(after: nil, through: resumeKey, context: context)
        }
        let passes = context.summary.withLock { $0 }
        summary.absorb(passes)
        if resumeKey != nil || summary.transactions > 0 { SyncState.clear(at: stateURL) }
        return summary
    }

    /// What the passes of one run share, between the listing's workers.
    private final class PassContext: Sendable {
        let thumbnails: [String: S3ObjectSummary]
        let stateURL: URL
        /// What the passes did, merged page by page.
        let summary = LockedBox(SyncSummary())
        /// Whether the library has been bound to the bucket (after the first listing page), and whether a
        /// transaction changed something since the resume point was last saved.
        let flags = LockedBox((bound: false, changedSinceSave: false))

        init(thumbnails: [String: S3ObjectSummary], stateURL: URL) {
            self.thumbnails = thumbnails
            self.stateURL = stateURL
        }
    }

    /// Lists the originals after `after` (all when `nil`) up to and including `through` (the end when `nil`),
    /// reconciling page by page. Only a pass that runs to the end records resume points.
    private func pass(after: String?, through: String?, context: PassContext) async throws {
        let layout = sync.configuration.layout
        let listing = RangedListing(
            client: remote.client, bucket: sync.configuration.bucket, prefix: layout.originalsPrefix,
            width: sync.configuration.maxConnections)
        try await listing.run(after: after, through: through) { interval in
            if context.flags.withLock({ flags in
                defer { flags.bound = true }
                return !flags.bound
            }) {
                // The bucket answered a listing: from now on this library belongs to it.
                try await remote.recordBinding()
            }
            var summary = SyncSummary()
            summary.pages = 1
            summary.listed = interval.objects.count
            let changed = try await reconcile(interval, thumbnails: context.thumbnails, summary: &summary)
            context.summary.withLock { $0.absorb(summary) }
            if changed { context.flags.withLock { $0.changedSinceSave = true } }
        } progress: { frontier in
            guard through == nil else { return }
            let save = context.flags.withLock { flags in
                defer { flags.changedSinceSave = false }
                return flags.changedSinceSave
            }
            if save { SyncState(lastReconciledKey: frontier).save(to: context.stateURL) }
        }
    }

    /// Lists `thumbnails/` once: original key → thumbnail object.
    private func listThumbnails(summary: inout SyncSummary) async throws -> [String: S3ObjectSummary] {
        let layout = sync.configuration.layout
        var result: [String: S3ObjectSummary] = [:]
        for try await page in remote.client.listAllObjects(
            bucket: sync.configuration.bucket, prefix: layout.thumbnailsPrefix)
        {
            summary.pages += 1
            for object in page.objects {
                if let original = layout.originalKey(forThumbnailKey: object.key) { result[original] = object }
            }
        }
        return result
    }

    /// Reconciles one listed interval in one transaction. Returns whether it changed the catalog.
    private func reconcile(
        _ interval: ListedInterval, thumbnails: [String: S3ObjectSummary], summary: inout SyncSummary
    ) async throws -> Bool {
        let objects = interval.objects
        let defersMetadata = sync.configuration.metadataSource == .headObject
        // The catalog's side of the interval: which objects are new or changed (only those need a HEAD for
        // metadata), and which assets the bucket no longer has.
        let byKey = try sync.catalog.store.records(
            withPrefix: sync.configuration.layout.originalsPrefix, after: interval.after,
            through: interval.through)
        var listedKeys = Set<String>()
        listedKeys.reserveCapacity(objects.count)
        for object in objects { listedKeys.insert(object.key) }
        let vanished = byKey.values.compactMap { record -> Int64? in
            guard record.uploadState == .uploaded, !listedKeys.contains(record.key) else { return nil }
            return record.id
        }
        var needHead: [S3ObjectSummary] = []
        var rows: [AssetRecord] = []
        for object in objects {
            let thumb = thumbnails[object.key]
            if let current = byKey[object.key], current.uploadState != .uploaded {
                // An import going up: the object is (or is becoming) its own; the upload's commit records it.
                continue
            }
            if let current = byKey[object.key], current.etag == object.etag, current.size == object.size,
                current.lastModified == AssetRecord.notListedYet
            {
                // Uploaded from here: the listing adds the one fact the upload did not return.
                var row = current
                row.lastModified = object.lastModified
                row.thumbnailKey = thumb?.key
                row.thumbnailSize = thumb?.size
                row.thumbnailETag = thumb?.etag
                rows.append(row)
            } else if let current = byKey[object.key], current.etag == object.etag, current.size == object.size,
                abs(current.lastModified.timeIntervalSince(object.lastModified)) < 0.001
            {
                // Same bytes, not rewritten: only the thumbnail fields can differ; upsert writes nothing when
                // equal. A copy onto itself with new metadata (`--metadata-directive REPLACE`) keeps the ETag but
                // changes Last-Modified: it is HEADed again like a changed object.
                var row = current
                row.thumbnailKey = thumb?.key
                row.thumbnailSize = thumb?.size
                row.thumbnailETag = thumb?.etag
                rows.append(row)
            } else if byKey[object.key] == nil, defersMetadata {
                // New: committed from the listing now (fetchable, sorted, counted); its head is read afterwards
                // (`MetadataFill`), so the library is usable after the listing.
                var row = RemoteMetadata.record(for: object, metadata: [:], contentType: nil, thumbnail: thumb)
                row.metadataFill = .objectHead
                rows.append(row)
            } else {
                needHead.append(object)
            }
        }
        var skipped: [String: S3Error] = [:]
        var embedded: [String: ImageHeaderRead.ThumbnailBytes] = [:]
        let heads = try await headAll(needHead, summary: &summary, skipped: &skipped, embedded: &embedded)
        for (key, error) in skipped {
            summary.skipped.append(SyncSummary.SkippedObject(key: key, reason: error.description))
        }
        for object in needHead where skipped[object.key] == nil {
            let found = heads[object.key]
            rows.append(
                RemoteMetadata.record(
                    for: object, head: found?.head, image: found?.image, thumbnail: thumbnails[object.key],
                    source: sync.configuration.metadataSource))
        }
        var filesToRemove: [String] = []
        let files = sync.files
        // Downloads of vanished objects stop before their files go: a cancelled download writes no more files,
        // so none appears after the removal below.
        if !vanished.isEmpty { sync.cache.cancelDownloads(forAssets: vanished) }
        let feeds = feed != nil
        let (counts, pending) = try await sync.catalog.performWrite { tx -> (ReconcileCounts, [AssetRecord]) in
            tx.reserveCapacity(rows.count)
            var c = ReconcileCounts()
            var pending: [AssetRecord] = []
            for var row in rows {
                row.id = try c.upsert(row, tx, files: files, removing: &filesToRemove)
                if feeds, row.metadataFill == .objectHead { pending.append(row) }
            }
            for id in vanished { try c.remove(id, tx, files: files, removing: &filesToRemove) }
            // Files go under the write lock, so no concurrent commit (a ranged read) can record bytes in a file
            // that is about to disappear.
            // try?: a file left only takes room (no row names it)
            for path in filesToRemove { try? FileManager.default.removeItem(atPath: path) }
            return (c, pending)
        }
        // Committed: the fill beside the listing may read them now.
        feed?.offer(pending)
        counts.add(to: &summary)
        if counts.changed { summary.transactions += 1 }
        embedded = embedded.filter { thumbnails[$0.key] == nil }
        if !embedded.isEmpty {
            await summary.thumbnailsFromImageHeaders += try sync.cache.storeEmbeddedThumbnails(embedded)
            summary.transactions += 1
        }
        return counts.changed
    }

    /// HEADs the objects with at most `maxConnections` in flight; an image without fields of ours (another
    /// tool's) also has its first ``AssetLibrary/Configuration/imageHeaderBytes`` read for its own headers. A
    /// vanished object (404) is skipped: the next listing will no longer show it.
    private func headAll(
        _ objects: [S3ObjectSummary], summary: inout SyncSummary, skipped: inout [String: S3Error],
        embedded: inout [String: ImageHeaderRead.ThumbnailBytes]
    ) async throws -> [String: (head: S3ObjectHead, image: ImageMetadata?)] {
        guard sync.configuration.metadataSource == AssetLibrary.MetadataSource.headObject, !objects.isEmpty else {
            return [:]
        }
        summary.headRequests += objects.count
        let client = remote.client
        let bucket = sync.configuration.bucket
        let limit = max(1, sync.configuration.maxConnections)
        let headerBytes = sync.configuration.imageHeaderBytes
        var thumbnailBytes = 0
        let makesThumbnails = self.makesThumbnails
        return try await withThrowingTaskGroup(of: (String, HeadOutcome).self) { group in
            var result: [String: (head: S3ObjectHead, image: ImageMetadata?)] = [:]
            var iterator = objects.makeIterator()
            func addNext() -> Bool {
                guard let object = iterator.next() else { return false }
                group.addTask {
                    do {
                        let head = try await client.headObject(bucket: bucket, key: object.key)
                        if headerBytes > 0, head.size > 0, head.metadata["creation-date"] == nil,
                            ImageHeaderRead.mayHaveHeaders(key: object.key)
                        {
                            let found = try await ImageHeaderRead.read(
                                key: object.key, size: head.size, etag: head.etag, client: client, bucket: bucket,
                                firstBytes: headerBytes)
                            return (object.key, .head(head, found))
                        }
                        return (object.key, .head(head, nil))
                    } catch S3Error.noSuchKey {
                        return (object.key, .gone)  // gone since the listing; the next sync drops it
                    } catch let error as S3Error where Self.isFailureOfThisObject(error) {
                        return (object.key, .failed(error))
                    }
                }
                return true
            }
            for _ in 0..<limit where !addNext() { break }
            while let (key, outcome) = try await group.next() {
                switch outcome {
                case .head(let head, let found):
                    result[key] = (head, found?.metadata)
                    // Kept for the thumbnail the sync makes once the asset exists, within a memory budget.
                    if makesThumbnails, thumbnailBytes < Self.embeddedThumbnailBudget,
                        let source = found?.thumbnailSource
                    {
                        embedded[key] = source
                        thumbnailBytes += source.count
                    }
                case .gone: break
                case .failed(let error): skipped[key] = error
                }
                _ = addNext()
            }
            return result
        }
    }
}

/// What one HEAD of a sync found.
private enum HeadOutcome: Sendable {
    /// The object's head, and an image's own headers when they were read and parsed.
    case head(S3ObjectHead, ImageHeaderRead.Found?)
    /// Deleted since the listing.
    case gone
    /// Refused for this object alone (its key, its permissions): the object is skipped and reported.
    case failed(S3Error)
}

extension CatalogSync {
    /// Whether a HEAD's error concerns that object alone (a key the service refuses, an object this user may not
    /// read, a server error that outlasted the retries for this request): such an object is skipped and
    /// reported, and the sync goes on (the listing just succeeded, so the service is up). Errors of the
    /// connection, the credentials or the bucket fail the sync.
    static func isFailureOfThisObject(_ error: S3Error) -> Bool {
        switch error {
        case .accessDenied, .invalidRange, .preconditionFailed, .malformedResponse, .slowDown, .service: true
        case .retriesExhausted(let last, _): isFailureOfThisObject(last)
        default: false
        }
    }
}

/// The resume point of an interrupted sync.
struct SyncState: Codable {
    var lastReconciledKey: String

    static func load(from url: URL) -> SyncState? {
        // try?: no saved state: the listing starts from the beginning
        guard let data = try? LocalFile.read(url) else { return nil }
        // try?: a corrupt state: the listing starts from the beginning
        return try? JSONDecoder().decode(SyncState.self, from: data)
    }

    func save(to url: URL) {
        // try?: encoding strings cannot fail
        guard let data = try? JSONEncoder().encode(self) else { return }
        // try?: a resume point only: without it the listing starts over
        try? LocalFile.replace(url, with: data)
    }

    // try?: absent already, or a stale point the next save replaces
    static func clear(at url: URL) { try? FileManager.default.removeItem(at: url) }
}

/// What a reconciliation (of a listing page, or of journal entries) did to the catalog, and the two writes it
/// is made of.
struct ReconcileCounts {
    var inserted = 0
    var content = 0
    var meta = 0
    var removed = 0

    var changed: Bool { inserted + content + meta + removed > 0 }

    func add(to summary: inout SyncSummary) {
        summary.inserted += inserted
        summary.contentChanged += content
        summary.metadataChanged += meta
        summary.removed += removed
    }

    /// Writes the bucket's state of one object: a new object is inserted, a changed ETag or size is a content
    /// change (the local original's files are added to `removing`), other differences are metadata changes, an
    /// equal row writes nothing.
    /// - Returns: The row's identifier.
    @discardableResult
    mutating func upsert(_ row: AssetRecord, _ tx: StoreTransaction, files: LocalFiles, removing: inout [String])
        throws -> Int64
    {
        let result = try tx.upsert(row)
        switch result {
        case .inserted: inserted += 1
        case .updated(_, let before):
            if before.etag != row.etag || before.size != row.size {
                content += 1
                if let id = before.id { removing += files.originalPaths(id: id, key: before.key) }
            } else {
                meta += 1
            }
        case .unchanged: break
        }
        return result.id
    }

    /// Removes the asset of an object that is gone (its files are added to `removing`).
    mutating func remove(_ id: Int64, _ tx: StoreTransaction, files: LocalFiles, removing: inout [String]) throws {
        guard let before = try tx.record(id) else { return }
        removing += files.allPaths(id: id, key: before.key)
        if try tx.delete(id) { removed += 1 }
    }
}
