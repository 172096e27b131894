import AssetStore
import Essentials
import Foundation
import Images
import S3Transfer
import Video

/// The second phase of a sync: reads what the listing did not say of the assets a first listing took in from
/// their listing alone (`MetadataFill.objectHead`) — their `x-amz-meta-*` fields, and for another tool's image
/// its own headers (EXIF) — and commits it in batches that are ordinary changes (a capture date that re-sorts an
/// asset is a move).
///
/// One request per object where it can. An object with fields of ours needs only its HEAD; another tool's image
/// needs its first ``AssetLibrary/Configuration/imageHeaderBytes`` too, and one ranged GET gives both (its response
/// carries the head). Which kind the bucket holds is learnt as the reads come back: images are HEADed first (a
/// HEAD then a GET for another tool's), and ranged GETs go first from when other tools' images outnumber ours —
/// after the first one, on a bucket another tool wrote. Other objects get a HEAD. Objects are read in runs of
/// `readBatch` (their HEADs handed to the engine together, ``S3Client/headObjects(bucket:keys:)``), `batchesInFlight`
/// runs at a time, over at most `maxConnections` connections; the pending rows are read from the catalog in key
/// order, a page at a time (bounded memory at any bucket size). A ranged GET names the listed version (`If-Match`)
/// and a head is compared with it (ETag and size): an object replaced since is left to the next listing. What is committed stays committed: a sync cut short (Ctrl-C,
/// `kill -9`, the network) leaves the rest pending, and the next sync goes on from there.
struct MetadataBackfill {
    let sync: SyncEngine
    let remote: LibraryRemote
    /// Whether images whose headers are read get a thumbnail from the bytes in hand (embedded EXIF thumbnail, or a
    /// small image's whole file) when the bucket has no thumbnail object for them.
    var makesThumbnails = true
    /// Results committed together (one transaction, one change) in the first batch: the first capture dates show
    /// at once. Each batch after is twice the one before, up to `largestBatch`: fewer, larger transactions (each
    /// is a change for observers and a commit signal) once the fill is under way.
    var batchSize = 256
    /// The most results committed together.
    var largestBatch = 4096
    /// Objects read together (one batch of HEADs: ``S3Client/headObjects(bucket:keys:)``).
    var readBatch = 32
    /// Read batches under way at once: while one batch's answers are taken in, the others keep the connections
    /// busy.
    var batchesInFlight = 3
    /// Pending rows read from the catalog at a time.
    var pageSize = 1024
    /// Called after each committed batch with (assets filled so far, assets pending when the fill began).
    var progress: (@Sendable (Int, Int) -> Void)?

    /// Images read so far by a fill: with fields of ours (a HEAD was enough), and other tools' (their headers were
    /// read). A fill that follows another in the same sync starts from what the first learnt.
    struct ImagesSeen: Sendable {
        var ours = 0
        var others = 0
    }

    /// What a fill did, and what it learnt of the bucket's images.
    struct Outcome: Sendable {
        var summary = SyncSummary()
        var seen = ImagesSeen()
    }

    /// Fills every pending asset, read from the catalog in key order; `seen` is what a fill before it in this sync
    /// learnt of the images. Returns what it did (``SyncSummary/metadataFilled``, requests, skipped objects).
    func run(seen: ImagesSeen) async throws -> Outcome {
        guard sync.configuration.metadataSource == .headObject else { return Outcome(seen: seen) }
        let readsImageHeaders = sync.configuration.imageHeaderBytes > 0
        let counts = try sync.catalog.store.metadataFillCounts()
        let total = counts.objectHead + (readsImageHeaders ? counts.imageHeaders : 0)
        guard total > 0 else { return Outcome(seen: seen) }
        progress?(0, total)
        let store = sync.catalog.store
        let pageSize = self.pageSize
        var cursor: String?
        var exhausted = false
        return try await fill(seen: seen, total: total) { () throws -> [AssetRecord]? in
            guard !exhausted else { return nil }
            let page = try store.recordsNeedingMetadata(
                after: cursor, limit: pageSize, imageHeaders: readsImageHeaders)
            exhausted = page.count < pageSize
            cursor = page.last?.key
            return page.isEmpty ? nil : page
        }
    }

    /// Fills the rows a listing hands to `feed` as it commits them, until the feed is closed; the rows it had
    /// not started then are left to ``run(seen:)``. Reports no progress (the listing does).
    func run(feed: FillFeed?) async throws -> Outcome {
        guard let feed, sync.configuration.metadataSource == .headObject else { return Outcome() }
        return try await fill(seen: ImagesSeen(), total: nil, feed: feed, catalogPage: nil)
    }

    /// The fill: rows from `catalogPage` (the catalog a page at a time, nil when there are no more) or `feed`, read
    /// in runs, `batchesInFlight` at a time, committed in batches in order.
    private func fill(
        seen: ImagesSeen, total: Int?, feed: FillFeed? = nil,
        catalogPage: (() throws -> [AssetRecord]?)?
    ) async throws -> Outcome {
        var outcome = Outcome(seen: seen)
        let headerBytes = sync.configuration.imageHeaderBytes
        let client = remote.client
        let bucket = sync.configuration.bucket
        var queue: [AssetRecord] = []
        var queued = 0
        /// The next rows to read, at most `limit`: from the queue, refilled from the catalog when it runs out.
        func nextRun(_ limit: Int) throws -> [AssetRecord] {
            if queued == queue.count, let catalogPage {
                queue = try catalogPage() ?? []
                queued = 0
            }
            let run = Array(queue[queued..<min(queue.count, queued + limit)])
            queued += run.count
            return run
        }

        var done: [FillResult] = []
        var filled = 0
        var batchLimit = max(1, batchSize)
        // Results waiting for their commit, at most: reads go on while a commit runs (or waits for the catalog's
        // writer, as while a listing's indexes are built) until this many are in hand.
        let backlog = 4 * max(batchSize, largestBatch)
        func absorb(_ committed: CommitOutcome) {
            filled += committed.filled
            outcome.summary.absorb(committed)
            if let total { progress?(filled, total) }
        }
        let readBatch = max(1, self.readBatch)
        /// What a task of the fill brings: a run's results, rows from the feed (none: it is closed), or what a
        /// batch's commit did.
        enum Event: Sendable {
            case read([FillResult])
            case fed([AssetRecord])
            case committed(CommitOutcome)
        }
        try await withThrowingTaskGroup(of: Event.self) { group in
            var running = 0
            var waitingForFeed = false
            var feedOpen = feed != nil
            // One batch is committed while the next ones' requests run; at most one commit at a time, in batch
            // order. A failure ends the group after the commit under way (what was read before it is committed
            // all the same).
            var committing = false
            func startCommit() {
                guard !committing, done.count >= batchLimit else { return }
                let batch = done
                done.removeAll(keepingCapacity: true)
                committing = true
                group.addTask { await .committed(try self.commit(batch)) }
                batchLimit = min(2 * batchLimit, max(batchSize, largestBatch))
            }
            func addNext(_ limit: Int) throws -> Bool {
                guard done.count < backlog else { return false }
                let records = try nextRun(limit)
                guard !records.isEmpty else { return false }
                let rangedFirst = outcome.seen.others > outcome.seen.ours
                group.addTask {
                    .read(
                        await Self.read(
                            records, client: client, bucket: bucket, headerBytes: headerBytes,
                            rangedFirst: rangedFirst))
                }
                running += 1
                return true
            }
            // The first run goes alone, only as wide as the connections (unless a fill before this one learnt
            // the bucket): what it finds says whether the images are ours (a HEAD is enough) or another tool's
            // (a ranged GET first) before the full runs start.
            var probing = outcome.seen.ours + outcome.seen.others == 0
            func startRuns() throws {
                if probing {
                    if running == 0 { _ = try addNext(min(readBatch, max(1, sync.configuration.maxConnections))) }
                } else {
                    while running < max(1, batchesInFlight), try addNext(readBatch) {}
                }
                if let feed, feedOpen, !waitingForFeed, queue.count - queued < readBatch * batchesInFlight {
                    group.addTask { .fed(await feed.take()) }
                    waitingForFeed = true
                }
            }
            try startRuns()
            while let event = try await group.next() {
                switch event {
                case .fed(let records):
                    waitingForFeed = false
                    if records.isEmpty {
                        // The listing ended: the rows not started are read after it, from the catalog.
                        feedOpen = false
                        queue = []
                        queued = 0
                    } else {
                        queue.removeFirst(queued)
                        queued = 0
                        queue += records
                    }
                case .committed(let committed):
                    committing = false
                    absorb(committed)
                case .read(let results):
                    running -= 1
                    probing = false
                    for result in results {
                        if case .failed(let error) = result.outcome, !CatalogSync.isFailureOfThisObject(error) {
                            // The connection, the credentials, the bucket: the sync fails; what is committed
                            // stays.
                            throw error
                        }
                        if case .read(let head, _, _) = result.outcome,
                            ImageHeaderRead.mayHaveHeaders(key: result.record.key)
                        {
                            if head.metadata["creation-date"] != nil {
                                outcome.seen.ours += 1
                            } else {
                                outcome.seen.others += 1
                            }
                        }
                    }
                    done += results
                }
                startCommit()
                try startRuns()
            }
        }
        // The last results, fewer than a batch.
        await absorb(try commit(done))
        outcome.summary.metadataFilled = filled
        return outcome
    }

    /// What one committed batch did.
    struct CommitOutcome: Sendable {
        var filled = 0
        var headRequests = 0
        var imageHeaderReads = 0
        var videoHeaderReads = 0
        var thumbnailsFromImageHeaders = 0
        var skipped: [SyncSummary.SkippedObject] = []
    }

    /// What one object's read found.
    struct FillResult: Sendable {
        /// The row as it was when the read started (the version the read asked for).
        var record: AssetRecord
        var outcome: Outcome

        enum Outcome: Sendable {
            /// The object's head, the image's headers when they were read and parsed, and whether they were read.
            case read(S3ObjectHead, ImageHeaderRead.Found?, headersRead: Bool)
            /// A video's head and what the reads of its container found.
            case video(S3ObjectHead, VideoHeaderRead.Found)
            /// Deleted or replaced since the listing: the next listing says what it is now.
            case gone
            case failed(S3Error)
        }
    }

    /// Reads a run of objects: the heads of most by one batch of HEADs (``S3Client/headObjects(bucket:keys:)``), and
    /// an image's own headers when it has no fields of ours — with `rangedFirst`, by one ranged GET instead of its
    /// HEAD (the head comes with it), else by a ranged GET after a head that is not ours. The results are in no
    /// particular order.
    private static func read(
        _ records: [AssetRecord], client: S3Client, bucket: String, headerBytes: Int, rangedFirst: Bool
    ) async -> [FillResult] {
        func readsHeaders(_ record: AssetRecord) -> Bool {
            headerBytes > 0 && record.size > 0 && ImageHeaderRead.mayHaveHeaders(key: record.key)
        }
        return await withTaskGroup(of: FillResult.self) { group in
            var results: [FillResult] = []
            results.reserveCapacity(records.count)
            var headed: [AssetRecord] = []
            for record in records {
                guard rangedFirst, readsHeaders(record) else {
                    headed.append(record)
                    continue
                }
                group.addTask {
                    await outcome(of: record) { () throws(S3Error) in
                        let (head, found) = try await ImageHeaderRead.readWithHead(
                            key: record.key, size: record.size, etag: record.etag, client: client, bucket: bucket,
                            firstBytes: headerBytes, unlessOurs: true)
                        return .read(head, found, headersRead: true)
                    }
                }
            }
            let heads = await client.headObjects(bucket: bucket, keys: headed.map(\.key))
            for (record, answer) in zip(headed, heads) {
                // A video whose fields do not give its length: its container's few reads.
                if case .success(let head) = answer, head.size > 0, head.metadata["duration"] == nil,
                    VideoHeaderRead.mayHaveHeaders(key: record.key),
                    head.metadata["media-type"].map({ $0 == "video" }) ?? true
                {
                    group.addTask {
                        await outcome(of: record) { () throws(S3Error) in
                            .video(
                                head,
                                try await VideoHeaderRead.read(
                                    key: record.key, size: head.size, etag: head.etag, client: client,
                                    bucket: bucket))
                        }
                    }
                    continue
                }
                guard case .success(let head) = answer, readsHeaders(record), head.metadata["creation-date"] == nil
                else {
                    results.append(
                        await outcome(of: record) { () throws(S3Error) in
                            .read(try answer.get(), nil, headersRead: false)
                        })
                    continue
                }
                group.addTask {
                    await outcome(of: record) { () throws(S3Error) in
                        let found = try await ImageHeaderRead.read(
                            key: record.key, size: head.size, etag: head.etag, client: client, bucket: bucket,
                            firstBytes: headerBytes)
                        return .read(head, found, headersRead: true)
                    }
                }
            }
            for await result in group { results.append(result) }
            return results
        }
    }

    /// One object's result from what its reads found: an object deleted or replaced since the listing is gone.
    private static func outcome(
        of record: AssetRecord, _ read: () async throws(S3Error) -> FillResult.Outcome
    ) async -> FillResult {
        do {
            return FillResult(record: record, outcome: try await read())
        } catch .noSuchKey, .preconditionFailed {
            return FillResult(record: record, outcome: .gone)
        } catch {
            return FillResult(record: record, outcome: .failed(error))
        }
    }

    /// Commits one batch in one transaction. A row that changed since its read started (another version
    /// listed, filled by a concurrent sync of this library, removed) keeps what it has. Returns how many rows it
    /// filled.
    private func commit(_ results: [FillResult]) async throws -> CommitOutcome {
        var summary = CommitOutcome()
        guard !results.isEmpty else { return summary }
        var rows: [(id: Int64, row: AssetRecord)] = []
        var embedded: [String: ImageHeaderRead.ThumbnailBytes] = [:]
        var embeddedBytes = 0
        for result in results {
            let record = result.record
            switch result.outcome {
            case .gone: continue
            case .failed(let error):
                summary.skipped.append(SyncSummary.SkippedObject(key: record.key, reason: error.description))
                continue
            case .video(let head, let found):
                summary.headRequests += 1
                summary.videoHeaderReads += found.cost.reads
                guard let id = record.id, S3ETag.same(head.etag, record.etag), head.size == record.size else {
                    continue
                }
                let listed = S3ObjectSummary(
                    key: record.key, size: record.size, etag: record.etag, lastModified: record.lastModified)
                var row = RemoteMetadata.record(
                    for: listed, head: head, video: found.metadata, thumbnail: nil,
                    source: sync.configuration.metadataSource)
                // Read and not a movie the reader takes: nothing more to learn from it.
                if row.metadataFill == .imageHeaders { row.metadataFill = .complete }
                rows.append((id, row))
            case .read(let head, let found, let headersRead):
                summary.headRequests += 1
                if headersRead { summary.imageHeaderReads += 1 }
                guard let id = record.id, S3ETag.same(head.etag, record.etag), head.size == record.size else {
                    continue
                }
                let listed = S3ObjectSummary(
                    key: record.key, size: record.size, etag: record.etag, lastModified: record.lastModified)
                var row = RemoteMetadata.record(
                    for: listed, head: head, image: found?.metadata, thumbnail: nil,
                    source: sync.configuration.metadataSource)
                // Headers read and not an image we can parse: nothing more to learn from them.
                if headersRead, row.metadataFill == .imageHeaders { row.metadataFill = .complete }
                rows.append((id, row))
                if makesThumbnails, record.thumbnailKey == nil, let source = found?.thumbnailSource,
                    embeddedBytes < CatalogSync.embeddedThumbnailBudget
                {
                    embedded[record.key] = source
                    embeddedBytes += source.count
                }
            }
        }
        let filled = try await sync.catalog.performWrite { tx -> Int in
            tx.reserveCapacity(rows.count, upserting: false)
            var filled = 0
            for (id, row) in rows {
                // Only the version read, and only while it still waits for this.
                guard let current = try tx.record(id), current.key == row.key, current.etag == row.etag,
                    current.size == row.size, current.metadataFill != .complete, current.uploadState == .uploaded
                else { continue }
                _ = try tx.fillMetadata(row, over: current)
                filled += 1
            }
            return filled
        }
        summary.filled = filled
        if !embedded.isEmpty {
            await summary.thumbnailsFromImageHeaders += try sync.cache.storeEmbeddedThumbnails(embedded)
        }
        return summary
    }
}

extension SyncSummary {
    /// Adds what one batch of the metadata fill did (not its fill count: the caller keeps that).
    fileprivate mutating func absorb(_ outcome: MetadataBackfill.CommitOutcome) {
        headRequests += outcome.headRequests
        imageHeaderReads += outcome.imageHeaderReads
        videoHeaderReads += outcome.videoHeaderReads
        thumbnailsFromImageHeaders += outcome.thumbnailsFromImageHeaders
        skipped += outcome.skipped
    }
}

/// The rows a full listing commits with metadata still to read, handed to the fill that runs beside it
/// (``MetadataBackfill/run(feed:)``). Bounded: it holds at most `capacity` rows not yet taken, and takes none before
/// `startsAfter` rows were offered; a row it does not take stays pending in the catalog, where the fill after the
/// listing finds it. Thread-safe.
final class FillFeed: Sendable {
    private struct State {
        var rows: [AssetRecord] = []
        var offered = 0
        var closed = false
        var waiter: CheckedContinuation<[AssetRecord], Never>?
    }

    private let state = LockedBox(State())
    let capacity: Int
    let startsAfter: Int

    init(capacity: Int, startsAfter: Int) {
        self.capacity = max(1, capacity)
        self.startsAfter = max(0, startsAfter)
    }

    /// Offers rows just committed (each with its identifier); keeps what fits.
    func offer(_ rows: [AssetRecord]) {
        guard !rows.isEmpty else { return }
        let handed = state.withLock { state -> (CheckedContinuation<[AssetRecord], Never>, [AssetRecord])? in
            let before = state.offered
            state.offered += rows.count
            guard !state.closed, state.offered > startsAfter else { return nil }
            let fresh = rows.dropFirst(max(0, startsAfter - before))
            state.rows += fresh.prefix(max(0, capacity - state.rows.count))
            guard let waiter = state.waiter, !state.rows.isEmpty else { return nil }
            state.waiter = nil
            defer { state.rows = [] }
            return (waiter, state.rows)
        }
        if let (waiter, rows) = handed { waiter.resume(returning: rows) }
    }

    /// Ends the feed: the rows not taken are left in the catalog, and a fill waiting for rows gets none.
    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<[AssetRecord], Never>? in
            state.closed = true
            state.rows = []
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: [])
    }

    /// The rows offered since the last take, waiting while there are none; none once the feed is closed (or the
    /// task cancelled). One taker at a time.
    func take() async -> [AssetRecord] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[AssetRecord], Never>) in
                let ready = state.withLock { state -> [AssetRecord]? in
                    if state.closed { return [] }
                    guard state.rows.isEmpty else {
                        defer { state.rows = [] }
                        return state.rows
                    }
                    precondition(state.waiter == nil, "one taker at a time")
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            close()
        }
    }
}
