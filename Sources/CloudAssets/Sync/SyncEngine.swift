import AssetStore
import Essentials
import Foundation
import S3Transfer

/// The sync engine: brings the catalog up to date with the bucket — a full listing, the journal's tail, or a
/// checkpoint for a new library — and before that sends what this library has not sent yet; writes checkpoints
/// and prunes the journal behind them. Everything read from the bucket is validated first (``BucketInput``).
///
/// Owns: the gate that keeps one sync at a time in this library (the folder lock's sync byte keeps one at a time
/// across libraries), and the sync settings kept in the catalog (``JournalSetting``).
final class SyncEngine: Sendable {
    let configuration: AssetLibrary.Configuration
    let catalog: Catalog
    let files: LocalFiles
    let lock: LibraryLock
    let remote: LibraryRemote?
    let telemetry: LibraryTelemetry
    let network: NetworkPermission
    let cache: OriginalsCache
    let edits: EditEngine
    let uploads: UploadEngine
    let journal: JournalOutbox
    /// One sync at a time in this library.
    let gate = SerialGate()

    /// A sync is running in this library.
    var isBusy: Bool { gate.isBusy }

    init(
        configuration: AssetLibrary.Configuration, catalog: Catalog, files: LocalFiles, lock: LibraryLock,
        remote: LibraryRemote?, telemetry: LibraryTelemetry, network: NetworkPermission, cache: OriginalsCache,
        edits: EditEngine, uploads: UploadEngine, journal: JournalOutbox
    ) {
        self.configuration = configuration
        self.catalog = catalog
        self.files = files
        self.lock = lock
        self.remote = remote
        self.telemetry = telemetry
        self.network = network
        self.cache = cache
        self.edits = edits
        self.uploads = uploads
        self.journal = journal
    }
}

extension SyncEngine {
    /// ``AssetLibrary/sync(mode:fetchThumbnails:progress:)``.
    func sync(mode: SyncMode, fetchThumbnails: Bool, progress: (@Sendable (SyncProgress) -> Void)?) async throws
        -> SyncSummary
    {
        let remote = try remote.checked()
        guard network.policy != .offline else { throw AssetLibraryError.offline }
        let commits = LockedBox(0)
        let started = ContinuousClock.now
        var summary: SyncSummary
        do {
            summary = try await Catalog.$commitCounter.withValue(commits) {
                try await synced(mode: mode, fetchThumbnails: fetchThumbnails, remote: remote, progress: progress)
            }
        } catch {
            telemetry.syncFailed(error, duration: ContinuousClock.now - started)
            throw error
        }
        // Every change this sync delivered, whichever step committed it.
        summary.transactions = commits.withLock { $0 }
        recordSyncCompleted(LastSync(date: Date(), summary: summary))
        telemetry.syncEnded(summary, requested: mode, duration: ContinuousClock.now - started)
        return summary
    }

    /// The sync itself, one at a time (``sync(mode:fetchThumbnails:progress:)`` counts what it commits).
    private func synced(
        mode: SyncMode, fetchThumbnails: Bool, remote: LibraryRemote, progress: (@Sendable (SyncProgress) -> Void)?
    ) async throws -> SyncSummary {
        return try await gate.run {
            // One sync at a time over every library on this folder, in any process.
            try await lock.lock(byte: LibraryLock.syncByte)
            defer { lock.unlock(byte: LibraryLock.syncByte) }
            // What is local and not in the bucket goes up first (failed uploads are tried again), so that a sync
            // leaves this library and the bucket agreeing.
            try uploads.retryFailedUploads()
            await uploads.sendEverythingPending()
            var summary = SyncSummary()
            // What a fill beside the listing learnt of the bucket's images.
            var seen = MetadataBackfill.ImagesSeen()
            // A new library starts from the newest checkpoint, when the bucket has one.
            var bootstrap: CheckpointBootstrap?
            // A sync that failed after it moved past albums and folders it had not merged: they are read at the end.
            let pullsCollections = try catalog.store.setting(JournalSetting.collectionsToPull) == "1"
            let route = SyncRoute.decide(try routeFacts(mode: mode))
            if route == .checkpoint {
                // The checkpoint moves the position past the bucket's collections before they are read.
                try await catalog.setSetting(JournalSetting.collectionsToPull, to: "1")
                bootstrap = try await loadingInBulk {
                    try await bootstrapFromCheckpoint(remote: remote, summary: &summary)
                }
            }
            if let bootstrap {
                // The bucket filled the catalog: from now on this library belongs to it.
                try await remote.recordBinding()
                summary.checkpointAssets = bootstrap.restored
                summary.mode = .incremental
                // Edits, albums and folders made before the checkpoint are not in the journal's tail.
                summary.editsRead = try await edits.pullEdits(remote: remote)
                summary.collectionsRead = try await pullCollections(remote: remote, skipped: &summary.skipped)
                let journal = JournalSync(sync: self, remote: remote)
                try await journal.run(summary: &summary, readAhead: bootstrap.readAhead)
            } else if route != .journal {
                let full = try await fullSync(remote: remote, makesThumbnails: fetchThumbnails)
                summary.absorbFullSync(full.summary)
                seen = full.seen
            } else if try await journalHistoryExpired(remote: remote) {
                // Entries this library has not read may be gone: only a listing shows everything.
                let full = try await fullSync(remote: remote, makesThumbnails: fetchThumbnails)
                summary.absorbFullSync(full.summary)
                seen = full.seen
                summary.historyExpired = true
            } else {
                summary.mode = .incremental
                try await JournalSync(sync: self, remote: remote).run(summary: &summary)
                // A library filled by a bootstrap before bindings were recorded there is bound by its journal.
                if try catalog.store.setting(LibraryBinding.settingName) == nil { try await remote.recordBinding() }
            }
            if pullsCollections {
                summary.collectionsRead += try await pullCollections(remote: remote, skipped: &summary.skipped)
            }
            if try catalog.store.setting(JournalSetting.collectionsToPull) == "1" {
                try await catalog.setSetting(JournalSetting.collectionsToPull, to: "0")
            }
            catalog.resolveCollections()
            try catalog.settleCollectionFolders()
            summary.lastFullListing = try lastFullListing()
            // Every asset is in the catalog; what the listing could not say is read now (and what an interrupted
            // sync left), committed batch by batch.
            progress?(.catalogReady(assets: try catalog.store.count, metadataPending: try metadataPending()))
            var fill = MetadataBackfill(sync: self, remote: remote)
            fill.makesThumbnails = fetchThumbnails
            if let progress { fill.progress = { progress(.fillingMetadata(filled: $0, of: $1)) } }
            summary.absorb(try await fill.run(seen: seen).summary)
            summary.metadataPending = try metadataPending()
            progress?(.metadataComplete(assets: try catalog.store.count, metadataPending: summary.metadataPending))
            summary.purged = try await uploads.purgeExpiredTrash()
            // A checkpoint is an optimisation for other libraries: failing to write one fails nothing. The
            // library that writes it prunes the journal behind it.
            if let covered = (try? await writeCheckpointIfDue(remote: remote)) ?? nil {
                summary.wroteCheckpoint = true
                // try?: not pruned now: the next checkpoint's prune covers them
                summary.journalObjectsPruned = (try? await pruneJournal(remote: remote, covered: covered)) ?? 0
            }
            if fetchThumbnails {
                summary.thumbnailsFetched = try await ThumbnailFetcher(sync: self, remote: remote).run()
            }
            return summary
        }
    }

    /// Rows of a listing waiting for the fill beside it, at most: about a fifth of a second of reads.
    static let fillFeedCapacity = 4096

    /// A full sync: the whole bucket listed and reconciled, the sidecars merged; the journal position moves to
    /// the listing's start. Once the listing has taken in
    /// ``AssetLibrary/Configuration/metadataFillBesideListingAfter`` objects, the metadata fill reads what it
    /// commits beside it (the rest is read after). Returns what it did, with what that fill learnt of the images.
    private func fullSync(remote: LibraryRemote, makesThumbnails: Bool) async throws -> (
        summary: SyncSummary, seen: MetadataBackfill.ImagesSeen
    ) {
        let started = Int64(remote.client.correctedNow.timeIntervalSince1970 * 1000)
        let clock = ContinuousClock.now
        // The listing moves the position past the bucket's collections before they are read.
        try await catalog.setSetting(JournalSetting.collectionsToPull, to: "1")
        var catalogSync = CatalogSync(sync: self, remote: remote)
        catalogSync.makesThumbnails = makesThumbnails
        let startsAfter = configuration.metadataFillBesideListingAfter
        let feed =
            configuration.metadataSource == .headObject && startsAfter < Int.max
            ? FillFeed(capacity: Self.fillFeedCapacity, startsAfter: startsAfter) : nil
        catalogSync.feed = feed
        var fill = MetadataBackfill(sync: self, remote: remote)
        fill.makesThumbnails = makesThumbnails
        // Above the listing's priority: on the shared pool each hop of the fill would otherwise wait behind the
        // listing's pages (it read about 500 objects a second that way, against 10,000). Task-local values (the
        // sync's commit counter) come with it; cancelling the sync cancels it.
        let besideTask = Task(priority: .high) { [fill] in try await fill.run(feed: feed) }
        var summary: SyncSummary
        do {
            summary = try await withTaskCancellationHandler {
                try await loadingInBulk { try await catalogSync.run() }
            } onCancel: {
                besideTask.cancel()
            }
        } catch {
            feed?.close()
            // try?: the sync's own error is thrown; this only waits for the task
            _ = try? await besideTask.value
            throw error
        }
        // The rows the fill took in are read while the indexes were built; the rest after the listing.
        feed?.close()
        let filled = try await besideTask.value
        summary.absorb(filled.summary)
        summary.sidecarsRead = try await pullSharedMetadata(remote: remote)
        summary.editsRead = try await edits.pullEdits(remote: remote)
        summary.collectionsRead = try await pullCollections(remote: remote, skipped: &summary.skipped)
        // The journal is read from the listing's start on (less the look-back) by the next incremental sync:
        // entries the listing already reflects apply as no-ops.
        let cursor = Int64(try catalog.store.setting(JournalSetting.cursor) ?? "") ?? 0
        if cursor < started { try await catalog.setSetting(JournalSetting.cursor, to: String(started)) }
        try await catalog.setSetting(
            JournalSetting.lastFullSync, to: String(Int64(Date().timeIntervalSince1970 * 1000)))
        let cost = ContinuousClock.now - clock
        let costMillis = cost.components.seconds * 1000 + cost.components.attoseconds / 1_000_000_000_000_000
        try await catalog.setSetting(JournalSetting.lastFullSyncCost, to: String(max(0, costMillis)))
        return (summary, filled.seen)
    }

    /// Runs `body` — a first listing or a bootstrap — with the catalog's secondary indexes suspended when the
    /// catalog is empty (see `AssetStore.suspendIndexesForBulkLoad()`), and builds them again when it ends,
    /// whether it succeeded or threw. Queries made meanwhile answer correctly, only slower; a process killed in
    /// between leaves them to the next library that opens the folder first.
    private func loadingInBulk<T>(_ body: () async throws -> T) async throws -> T {
        // Under the sync lock no other load runs: indexes still suspended are a killed load's (of a library that
        // is still open somewhere else, or the folder's first open would have built them).
        try await catalog.restoreSuspendedIndexes()
        let bulk = try catalog.store.count == 0 ? try await catalog.suspendIndexesForBulkLoad() > 0 : false
        let value: T
        do {
            value = try await body()
        } catch {
            // try?: the sync's own error is the one thrown; indexes not built now are built by the next library to
            // open the folder first (a closed library writes nothing more).
            if bulk, !catalog.isClosed { _ = try? await catalog.restoreSuspendedIndexes() }
            throw error
        }
        if bulk { try await catalog.restoreSuspendedIndexes() }
        return value
    }

    /// Assets whose metadata a sync has still to read (an image's own headers only when the library reads them).
    func metadataPending() throws -> Int {
        let counts = try catalog.store.metadataFillCounts()
        return counts.objectHead + (configuration.imageHeaderBytes > 0 ? counts.imageHeaders : 0)
    }

    /// What the sync's route is decided from (``SyncRoute/decide(_:)``), read from the catalog and the clock.
    func routeFacts(mode: SyncMode) throws -> SyncRoute.Facts {
        SyncRoute.Facts(
            mode: mode, checkpointInterval: configuration.checkpointInterval,
            fullSyncInterval: configuration.fullSyncInterval,
            lastFullListing: Int64(try catalog.store.setting(JournalSetting.lastFullSync) ?? ""),
            lastFullListingCost: Int64(try catalog.store.setting(JournalSetting.lastFullSyncCost) ?? ""),
            now: Int64(Date().timeIntervalSince1970 * 1000))
    }

    /// How long after a full listing an automatic sync lists the whole bucket again
    /// (``SyncRoute/fullListingInterval(_:)``, for this library now).
    func automaticFullListingInterval() throws -> TimeInterval {
        SyncRoute.fullListingInterval(try routeFacts(mode: .automatic))
    }

    /// When the catalog last reflected a full listing of the bucket (this library's, or the one a checkpoint it
    /// started from reflects); nil before any.
    func lastFullListing() throws -> Date? {
        Int64(try catalog.store.setting(JournalSetting.lastFullSync) ?? "").map {
            Date(timeIntervalSince1970: Double($0) / 1000)
        }
    }
}

/// Fetches thumbnails that the catalog knows of but does not have, committing arrivals in batches.
struct ThumbnailFetcher {
    let sync: SyncEngine
    let remote: LibraryRemote
    var batchSize = 64

    func run() async throws -> Int {
        let ids = try sync.catalog.store.identifiersNeedingThumbnail()
        guard !ids.isEmpty else { return 0 }
        let records = try sync.catalog.store.records(ids: ids)
        let client = remote.client
        let bucket = sync.configuration.bucket
        let files = sync.files
        var fetched = 0
        var pending: [(id: Int64, etag: String)] = []
        let jobs = records.compactMap { record in record.id.flatMap { id in record.thumbnailKey.map { (id, $0) } } }
        try await concurrentForEach(jobs, limit: sync.configuration.thumbnailConcurrency) {
            job -> (Int64, String)? in
            let (id, key) = job
            do {
                // Read only up to the cap: a larger object is no thumbnail (the next sync tries again).
                guard
                    let (data, head) = try await client.getObject(
                        bucket: bucket, key: key, maxBytes: BucketInput.maxThumbnailBytes)
                else { return nil }
                try files.writeThumbnail(data, id: id)
                return (id, head.etag)
            } catch S3Error.noSuchKey {
                return nil  // gone since the listing; the next sync drops the key
            } catch S3Error.cancelled {
                throw CancellationError()
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // One thumbnail failing (after the client's retries) does not fail the sync: the asset
                // keeps needing its thumbnail and the next sync tries again.
                return nil
            }
        } receiving: { item in
            if let item { pending.append((item.0, item.1)) }
            if pending.count >= batchSize {
                await fetched += try commit(pending)
                pending.removeAll()
            }
        }
        await fetched += try commit(pending)
        return fetched
    }

    /// Records the thumbnails written. One whose asset was deleted meanwhile (or changed to another version)
    /// is removed again, under the same write lock: no file is left that belongs to no asset.
    func commit(_ arrivals: [(id: Int64, etag: String)]) async throws -> Int {
        guard !arrivals.isEmpty else { return 0 }
        var count = 0
        let files = sync.files
        try await sync.catalog.performWrite { tx in
            for arrival in arrivals {
                let record = try tx.record(arrival.id)
                guard let record, !record.thumbnailPresent,
                    record.thumbnailETag.map({ S3ETag.same($0, arrival.etag) }) ?? true
                else {
                    if record?.thumbnailPresent != true {
                        // try?: our own file; one left is replaced by the next thumbnail written
                        try? FileManager.default.removeItem(at: files.thumbnail(id: arrival.id))
                    }
                    continue
                }
                _ = try tx.update(arrival.id) { r in
                    r.thumbnailPresent = true
                    if r.availability == .cloudOnly { r.availability = .thumbnail }
                }
                sync.telemetry.transition("thumbnail recorded", asset: arrival.id, key: record.key)
                count += 1
            }
        }
        return count
    }
}
