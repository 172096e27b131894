import AssetStore
import Essentials
import Foundation
import S3Transfer

extension SyncEngine {
    /// The catalog settings of the journal reader.
    enum JournalSetting {
        /// The newest entry time (milliseconds, the service's clock) this library has applied through.
        static let cursor = "journal.cursor"
        /// When this library last completed a full listing (milliseconds since 1970, the local clock).
        static let lastFullSync = "journal.lastFullSync"
        /// How long this library's last full listing took (milliseconds).
        static let lastFullSyncCost = "journal.lastFullSyncCost"
        /// The newest checkpoint slot this library wrote or found written.
        static let checkpointSlot = "journal.checkpointSlot"
        /// "1" while a sync has moved past announcements of albums and folders (or a listing or checkpoint past
        /// the bucket's collections) that it has not merged yet: a sync that failed in between (a full disk, a
        /// cut connection) leaves it, and the next sync reads `collections/` whole.
        static let collectionsToPull = "journal.collectionsToPull"
    }
}

/// An incremental sync: reads the journal entries written since this library's position (less the look-back
/// window), GETs the ones it has not applied, and applies them in key order, one store transaction per listing
/// page (each one change notification). No HEAD per object: an entry carries the metadata.
///
/// - A `put` inserts the object's asset, or is a content change when the ETag or size differs — unless the
///   catalog holds a version a listing showed to be newer than the entry (a full sync ran since).
/// - An `edit` change adopts the revision's manifest as read from `edits/<path>/<revision>.json`, not as the entry
///   describes it; one whose manifest is not there is skipped and reported.
/// - A `delete` removes the asset only if its ETag is the one deleted (a re-created object stays) and the bucket
///   does not still hold that very version (a HEAD: a delete the bucket contradicts is skipped and reported).
/// - A `metadata` change reads the asset's sidecar and merges what it holds (last writer wins per property): the
///   entry says that the sidecar changed, never what it holds.
/// - Everything read is validated first (``BucketInput``): an entry that cannot be read as one (another format,
///   garbage, larger than ``BucketInput/maxJournalEntryBytes`` — skipped by its listed size, and never read beyond
///   that cap) and every change that breaks a rule (a key outside the originals, a size out of range, an edit whose
///   files lie outside the asset's edits folder) are skipped and reported in ``SyncSummary/skipped``; the other
///   changes still apply. An entry deleted meanwhile is skipped.
///
/// Applied entries are remembered for the look-back window, so an entry listed again is not applied twice.
struct JournalSync {
    let sync: SyncEngine
    let remote: LibraryRemote

    /// The first listing pages of the journal from a position, with the bodies of the entries they name: read
    /// while a bootstrap restores its checkpoint, and applied by ``run(summary:readAhead:)`` after it.
    /// What a GET of one listed entry found.
    enum Fetched: Sendable {
        /// The entry's bytes.
        case body(Data)
        /// Deleted since the listing.
        case gone
        /// Larger than ``BucketInput/maxJournalEntryBytes`` (by its listed size, or by the bounded read itself): not
        /// read.
        case tooLarge(Int64?)
    }

    struct ReadAhead: Sendable {
        /// The key the first page was listed after.
        let startAfter: String
        /// Consecutive pages, each listed with the previous one's continuation token.
        let pages: [ListObjectsPage]
        /// What the GET of every entry on them found, by key.
        let bodies: [String: Fetched]
    }

    /// Lists the journal from `cursor` (less the look-back window, as ``run(summary:readAhead:)`` would), at most
    /// `pageLimit` pages of at most `maxKeys` keys (nil: the service's page, 1,000 on S3), and GETs every entry on
    /// them, applying nothing and reading nothing from the catalog.
    func readAhead(from cursor: Int64, pageLimit: Int = 4, maxKeys: Int? = nil) async throws -> ReadAhead {
        let prefix = sync.configuration.layout.journalPrefix
        let startAfter = JournalKey.start(
            prefix: prefix, time: cursor - Int64(sync.configuration.journalLookBack * 1000))
        var pages: [ListObjectsPage] = []
        var bodies: [String: Fetched] = [:]
        while pages.count < pageLimit {
            let page = try await remote.client.listObjectsV2(
                bucket: sync.configuration.bucket, prefix: prefix,
                continuationToken: pages.last?.nextContinuationToken, startAfter: pages.isEmpty ? startAfter : nil,
                maxKeys: maxKeys)
            pages.append(page)
            let listed = page.objects.filter { JournalKey.time(of: $0.key, prefix: prefix) != nil }
            bodies.merge(try await fetch(listed)) { _, new in new }
            guard page.isTruncated, page.nextContinuationToken != nil else { break }
        }
        return ReadAhead(startAfter: startAfter, pages: pages, bodies: bodies)
    }

    /// Applies the journal from this library's position on. `readAhead`, when it was listed from the same
    /// position, stands for its pages' listings and their entries' GETs; the pages after it are listed here.
    func run(summary: inout SyncSummary, readAhead: ReadAhead? = nil) async throws {
        let store = sync.catalog.store
        let prefix = sync.configuration.layout.journalPrefix
        let lookBack = Int64(sync.configuration.journalLookBack * 1000)
        let cursor = Int64(try store.setting(SyncEngine.JournalSetting.cursor) ?? "") ?? 0
        let startAfter = JournalKey.start(prefix: prefix, time: cursor - lookBack)
        var newest = cursor
        var continuation: String?
        let readAhead = readAhead?.startAfter == startAfter ? readAhead : nil
        var pagesRead = 0
        while true {
            try Task.checkCancellation()
            let page: ListObjectsPage
            if let pages = readAhead?.pages, pagesRead < pages.count {
                page = pages[pagesRead]
            } else {
                page = try await remote.client.listObjectsV2(
                    bucket: sync.configuration.bucket, prefix: prefix, continuationToken: continuation,
                    startAfter: continuation == nil ? startAfter : nil)
            }
            summary.pages += 1
            let timed = page.objects.compactMap { object in
                JournalKey.time(of: object.key, prefix: prefix).map { (key: object.key, time: $0) }
            }
            let applied = try store.appliedJournalKeys(among: timed.map(\.key))
            let fresh = timed.filter { !applied.contains($0.key) }
            // A key's time is a stranger's claim too: the position never moves past the service's clock (an entry
            // dated in the future would otherwise hide every entry written before that date).
            let clock = BucketInput.milliseconds(remote.client.correctedNow)
            let pageNewest = min(timed.map(\.time).max() ?? newest, max(clock, newest))
            if !fresh.isEmpty {
                let freshKeys = Set(fresh.map(\.key))
                let entries = try await confirmingEdits(
                    read(
                        page.objects.filter { freshKeys.contains($0.key) }, readAhead: readAhead?.bodies ?? [:],
                        summary: &summary), summary: &summary)
                let edits = entries.values.flatMap {
                    $0.changes.compactMap { change -> EditManifest? in
                        if case .edit(let manifest) = change { return manifest }
                        return nil
                    }
                }
                if !edits.isEmpty { await sync.edits.prefetchEditThumbnails(edits, remote: remote) }
                let sidecars = try await readSidecars(named: entries.values)
                summary.sidecarsRead += sidecars.count
                let contradicted = try await deletesTheBucketContradicts(in: entries.values)
                for key in contradicted.sorted() {
                    summary.skipped.append(
                        SyncSummary.SkippedObject(
                            key: key, reason: "a journal entry says it was deleted, but the bucket still holds it"))
                }
                // Albums and folders announced: the documents as the bucket holds them now, merged — unless the
                // page's last announcement of one names the version merged here already (this library's own, one
                // a checkpoint carried, one read before).
                var latest: [String: String?] = [:]
                var order: [String] = []
                var deltas: [(id: String, key: String)] = []
                for key in entries.keys.sorted() {
                    for case .collection(let id, let objectKey, let etag) in entries[key]!.changes {
                        guard objectKey == sync.configuration.layout.collectionKey(id) else {
                            deltas.append((id, objectKey))
                            continue
                        }
                        if latest.updateValue(etag, forKey: id) == nil { order.append(id) }
                    }
                }
                // The entries are applied (never read again) before the collections they announce are merged.
                let announces = !order.isEmpty || !deltas.isEmpty
                if announces { try await sync.catalog.setSetting(SyncEngine.JournalSetting.collectionsToPull, to: "1") }
                try await apply(
                    fresh, entries: entries, sidecars: sidecars, contradicted: contradicted,
                    newest: max(newest, pageNewest), summary: &summary)
                let known = latest.isEmpty ? [:] : try store.collectionDocumentETags()
                let collections = order.filter { id in
                    guard let announced = latest[id] ?? nil, let merged = known[id] ?? nil else { return true }
                    return !S3ETag.same(announced, merged)
                }
                summary.collectionsRead += try await sync.adoptCollections(
                    collections, remote: remote, skipped: &summary.skipped)
                // Deltas after the documents: one a fold deleted since is in a document read above or later.
                summary.collectionsRead += try await sync.adoptCollectionDeltas(
                    deltas, remote: remote, skipped: &summary.skipped)
                if announces { try await sync.catalog.setSetting(SyncEngine.JournalSetting.collectionsToPull, to: "0") }
            } else if pageNewest > newest {
                try await sync.catalog.setSetting(SyncEngine.JournalSetting.cursor, to: String(pageNewest))
            }
            newest = max(newest, pageNewest)
            pagesRead += 1
            if !page.isTruncated { break }
            guard let next = page.nextContinuationToken else {
                throw S3Error.malformedResponse("the listing is truncated but carries no continuation token")
            }
            continuation = next
        }
        try await sync.catalog.forgetAppliedJournalEntries(before: newest - lookBack)
    }

    /// The entries of the listed objects, those in `readAhead` as read there, the others fetched, each validated
    /// (``BucketInput/journalEntry(_:layout:now:learnedAt:)``). A missing entry maps to nothing; one too large or
    /// not an entry, and every change of an entry that breaks a rule, is reported as skipped.
    private func read(_ objects: [S3ObjectSummary], readAhead: [String: Fetched], summary: inout SyncSummary)
        async throws -> [String: BucketInput.Entry]
    {
        var bodies = try await fetch(objects.filter { readAhead.index(forKey: $0.key) == nil })
        for object in objects { if let body = readAhead[object.key] { bodies[object.key] = body } }
        summary.journalEntriesRead += objects.count
        let layout = sync.configuration.layout
        let now = remote.client.correctedNow
        let learnedAt = Date()
        var entries: [String: BucketInput.Entry] = [:]
        for (key, fetched) in bodies {
            let body: Data
            switch fetched {
            case .gone: continue
            case .tooLarge(let size):
                let shown = size.map { "of \($0) bytes " } ?? ""
                summary.skipped.append(
                    SyncSummary.SkippedObject(
                        key: key,
                        reason: "journal entry \(shown)larger than \(BucketInput.maxJournalEntryBytes) bytes: not read")
                )
                continue
            case .body(let data): body = data
            }
            switch BucketInput.journalEntry(body, layout: layout, now: now, learnedAt: learnedAt) {
            case .success(let entry):
                entries[key] = entry
                for rejection in entry.rejected {
                    summary.skipped.append(SyncSummary.SkippedObject(key: key, reason: rejection.reason))
                }
            case .failure(let rejection):
                summary.skipped.append(SyncSummary.SkippedObject(key: key, reason: rejection.reason))
            }
        }
        return entries
    }

    /// GETs entries, at most ``AssetLibrary/Configuration/maxConnections`` at a time, each read only up to
    /// ``BucketInput/maxJournalEntryBytes``: an object listed larger is not requested, and one that grew since the
    /// listing is cut off by the bounded read.
    private func fetch(_ objects: [S3ObjectSummary]) async throws -> [String: Fetched] {
        let client = remote.client
        let bucket = sync.configuration.bucket
        let limit = max(1, sync.configuration.maxConnections)
        let cap = BucketInput.maxJournalEntryBytes
        var result: [String: Fetched] = [:]
        var wanted: [String] = []
        for object in objects {
            if object.size > Int64(cap) || object.size < 0 {
                result[object.key] = .tooLarge(object.size)
            } else {
                wanted.append(object.key)
            }
        }
        let fetched = try await concurrentMap(wanted, limit: limit) { key -> (String, Fetched) in
            do {
                guard let (body, _) = try await client.getObject(bucket: bucket, key: key, maxBytes: cap)
                else { return (key, .tooLarge(nil)) }
                return (key, .body(body))
            } catch S3Error.noSuchKey {
                return (key, .gone)
            }
        }
        for (key, body) in fetched { result[key] = body }
        return result
    }

    /// `entries` with each `edit` change replaced by the revision's manifest as the bucket holds it
    /// (`edits/<path>/<revision>.json`: a bounded, validated read, a few at a time): an entry says *that* a revision
    /// was written, the manifest *what* it is. An edit whose manifest is not there (or is not a valid one for that
    /// original and revision) is dropped and reported, so every library — one that follows the journal, one that
    /// lists the edits — adopts the same revisions.
    private func confirmingEdits(_ entries: [String: BucketInput.Entry], summary: inout SyncSummary) async throws
        -> [String: BucketInput.Entry]
    {
        let layout = sync.configuration.layout
        var wanted: [String: String] = [:]  // manifest key → original key
        for entry in entries.values {
            for case .edit(let manifest) in entry.changes {
                if let folder = layout.editsFolder(forOriginalKey: manifest.original) {
                    wanted[folder + manifest.revision + ".json"] = manifest.original
                }
            }
        }
        guard !wanted.isEmpty else { return entries }
        let client = remote.client
        let bucket = sync.configuration.bucket
        let limit = max(1, sync.configuration.maxConnections)
        let reads = try await concurrentMap(wanted, limit: limit) { key, original -> (String, EditManifest?) in
            let read: (Data, S3ObjectHead)?
            do {
                read = try await client.getObject(bucket: bucket, key: key, maxBytes: BucketInput.maxDocumentBytes)
            } catch S3Error.noSuchKey {
                read = nil
            }
            return (
                key,
                // try?: refused input is absent, as every refused bucket read
                read.flatMap { try? BucketInput.editManifest($0.0, expectedOriginal: original, layout: layout).get() }
            )
        }
        let found = Dictionary(reads.compactMap { key, manifest in manifest.map { (key, $0) } }) { first, _ in first }
        var confirmed = entries
        for (entryKey, entry) in entries {
            confirmed[entryKey]?.changes = entry.changes.compactMap { change in
                guard case .edit(let claimed) = change else { return change }
                guard let folder = layout.editsFolder(forOriginalKey: claimed.original),
                    let manifest = found[folder + claimed.revision + ".json"], manifest.revision == claimed.revision
                else {
                    summary.skipped.append(
                        SyncSummary.SkippedObject(
                            key: entryKey,
                            reason:
                                "an edit of \(BucketInput.quoted(claimed.original)) whose manifest is not in the bucket"
                        ))
                    return nil
                }
                return .edit(manifest)
            }
        }
        return confirmed
    }

    /// The sidecars that `metadata` changes of these entries name, as the bucket holds them now (validated, bounded
    /// reads, at most ``AssetLibrary/Configuration/maxConnections`` at a time), by original key: (nil, nil) where
    /// there is none. A `metadata` change says only *that* a sidecar was written; what it holds is read from the
    /// sidecar itself, so an entry claiming properties no sidecar has changes nothing, and every library — one that
    /// follows the journal, one that lists the bucket — ends with the same state.
    private func readSidecars(named entries: some Collection<BucketInput.Entry>) async throws
        -> [String: (state: SharedMetadata?, etag: String?)]
    {
        let layout = sync.configuration.layout
        var keys = Set<String>()
        for entry in entries {
            for case .metadata(let key, _, _) in entry.changes { keys.insert(key) }
        }
        let wanted = keys.compactMap { key in layout.sidecarKey(forOriginalKey: key).map { (key, $0) } }
        guard !wanted.isEmpty else { return [:] }
        let sync = self.sync
        let remote = self.remote
        let limit = max(1, sync.configuration.maxConnections)
        let reads = try await concurrentMap(wanted, limit: limit) { original, sidecar in
            let (state, etag) = try await remote.readSidecar(sidecar)
            return (original, (state: state, etag: etag))
        }
        return Dictionary(reads) { first, _ in first }
    }

    /// The originals that `delete` changes of these entries name while the bucket still holds them, at the very
    /// version said to be deleted (one HEAD each, a few at a time): such a delete is not obeyed — the catalog
    /// keeps the asset and its local files. A delete of an object that is gone, or holds another version since,
    /// applies as written.
    private func deletesTheBucketContradicts(in entries: some Collection<BucketInput.Entry>) async throws
        -> Set<String>
    {
        var deletes: [String: String] = [:]
        for entry in entries {
            for case .delete(let key, let etag) in entry.changes { deletes[key] = etag }
        }
        guard !deletes.isEmpty else { return [] }
        let client = remote.client
        let bucket = sync.configuration.bucket
        let limit = max(1, sync.configuration.maxConnections)
        let live = try await concurrentMap(deletes, limit: limit) { key, etag -> String? in
            do {
                let head = try await client.headObject(bucket: bucket, key: key)
                return S3ETag.same(head.etag, etag) ? key : nil
            } catch S3Error.noSuchKey {
                return nil
            }
        }
        return Set(live.compactMap { $0 })
    }

    /// Applies a page's entries in key order, in one transaction that also records them as applied and moves the
    /// cursor to `newest`. `metadata` changes take the state of `sidecars` (``readSidecars(named:)``); deletes of
    /// `contradicted` keys are not applied (``deletesTheBucketContradicts(in:)``).
    private func apply(
        _ listed: [(key: String, time: Int64)], entries: [String: BucketInput.Entry],
        sidecars: [String: (state: SharedMetadata?, etag: String?)], contradicted: Set<String>, newest: Int64,
        summary: inout SyncSummary
    ) async throws {
        let store = sync.catalog.store
        let files = sync.files
        let clock = BucketInput.milliseconds(remote.client.correctedNow)
        let changes = listed.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.flatMap { item in
            (entries[item.key]?.changes ?? []).filter { change in
                if case .delete(let key, _) = change { return !contradicted.contains(key) }
                return true
            }.map { (change: $0, time: min(item.time, clock)) }
        }
        // Downloads of objects about to go stop first: a cancelled download writes no more files.
        let deleting = try changes.compactMap { item -> Int64? in
            guard case .delete(let key, _) = item.change else { return nil }
            return try store.record(key: key)?.id
        }
        if !deleting.isEmpty { sync.cache.cancelDownloads(forAssets: deleting) }
        let counts = try await sync.catalog.performWrite { tx -> ReconcileCounts in
            var counts = ReconcileCounts()
            var filesToRemove: [String] = []
            for (change, time) in changes {
                try Self.apply(
                    change, writtenAt: time, tx, sidecars: sidecars, counts: &counts, files: files,
                    removing: &filesToRemove)
            }
            for item in listed { try tx.markJournalEntryApplied(item.key, time: item.time) }
            try tx.setSetting(SyncEngine.JournalSetting.cursor, to: String(newest))
            // try?: a file left only takes room (no row names it)
            for path in filesToRemove { try? FileManager.default.removeItem(atPath: path) }
            return counts
        }
        counts.add(to: &summary)
        if counts.changed { summary.transactions += 1 }
    }

    private static func apply(
        _ change: BucketInput.Change, writtenAt time: Int64, _ tx: StoreTransaction,
        sidecars: [String: (state: SharedMetadata?, etag: String?)], counts: inout ReconcileCounts,
        files: LocalFiles, removing: inout [String]
    ) throws {
        let current = try tx.record(key: change.key)
        // An import of this library still going up: its own upload's commit records it.
        if let current, current.uploadState != .uploaded { return }
        switch change {
        case .put(let key, let size, let etag, let contentType, let metadata, let thumbnail):
            if let current, S3ETag.same(current.etag, etag), current.size == size { return }
            let written = Date(timeIntervalSince1970: Double(time) / 1000)
            if let current, current.lastModified != AssetRecord.notListedYet,
                current.lastModified.timeIntervalSince(written) > 1
            {
                return  // A listing showed a newer version than this entry's.
            }
            var row = RemoteMetadata.record(
                for: S3ObjectSummary(key: key, size: size, etag: S3ETag.unquoted(etag), lastModified: written),
                metadata: metadata, contentType: contentType, thumbnail: nil)
            // The listing's Last-Modified is not known yet: the next full sync adds it without a HEAD.
            row.lastModified = AssetRecord.notListedYet
            // The writer's thumbnail, uploaded with the original: the sync's thumbnail pass fetches it.
            row.thumbnailKey = thumbnail?.key ?? current?.thumbnailKey
            row.thumbnailSize = thumbnail?.size ?? current?.thumbnailSize
            row.thumbnailETag = thumbnail?.etag ?? current?.thumbnailETag
            try counts.upsert(row, tx, files: files, removing: &removing)
        case .delete(_, let etag):
            guard let current, let id = current.id, S3ETag.same(current.etag, etag) else { return }
            try counts.remove(id, tx, files: files, removing: &removing)
        case .edit(let manifest):
            if try EditEngine.adopt(manifest, tx, files: files, removing: &removing) { counts.meta += 1 }
        case .collection:
            return  // read and merged after the page (JournalSync.run)
        case .metadata(let key, _, _):
            // The sidecar as read now, not as the entry describes it (readSidecars(named:)).
            guard let current, let id = current.id, let read = sidecars[key], let state = read.state else { return }
            let before = current
            try SharedMetadata.adopt(state, sidecarETag: read.etag, into: id, tx)
            if let after = try tx.record(id), after != before { counts.meta += 1 }
        }
    }
}
