import AssetStore
import Essentials
import Foundation
import S3Transfer

/// A new library's catalog filled from a checkpoint.
struct CheckpointBootstrap {
    /// The assets the checkpoint held (inserted, or found in the catalog already when an earlier bootstrap was
    /// stopped part way).
    let restored: Int
    /// The journal's first pages after the checkpoint, read during the restore; nil when reading them failed (the
    /// journal sync then reads them itself).
    let readAhead: JournalSync.ReadAhead?
}

extension SyncEngine {
    /// Assets per checkpoint part: about 6 MB of JSON each, 1–2 MB compressed.
    static let checkpointPartAssets = 25_000
    /// Uncompressed bytes after which a part of collection documents is closed (a document is at most
    /// ``BucketInput/maxCollectionDocumentBytes``, so a part stays under ``BucketInput/maxCheckpointPartBytes``).
    static let checkpointCollectionPartBytes = 16 << 20

    /// Writes this slot's checkpoint unless one exists (or this library wrote or saw it already): only a library
    /// that has listed the whole bucket once, after a sync, at most one HEAD per slot when there is nothing to do.
    /// - Returns: The journal position the checkpoint covers when this library wrote the slot's checkpoint; `nil`
    ///   when it did not.
    func writeCheckpointIfDue(remote: LibraryRemote) async throws -> Int64? {
        let interval = Int64(configuration.checkpointInterval * 1000)
        guard interval > 0, let lastFull = Int64(try catalog.store.setting(JournalSetting.lastFullSync) ?? ""),
            let cursor = Int64(try catalog.store.setting(JournalSetting.cursor) ?? "")
        else { return nil }
        let now = Int64(remote.client.correctedNow.timeIntervalSince1970 * 1000)
        let slot = now / interval * interval
        guard slot > Int64(try catalog.store.setting(JournalSetting.checkpointSlot) ?? "") ?? -1 else { return nil }
        let prefix = configuration.layout.checkpointPrefix
        let bucket = configuration.bucket
        let manifestKey = CheckpointKey.manifest(prefix: prefix, slot: slot)
        let existing: Result<Bool, S3Error>
        do {
            _ = try await remote.client.headObject(bucket: bucket, key: manifestKey)
            existing = .success(true)
        } catch {
            existing = error == .noSuchKey ? .success(false) : .failure(error)
        }
        if try existing.get() {
            try await catalog.setSetting(JournalSetting.checkpointSlot, to: String(slot))
            return nil
        }
        let device = try catalog.deviceIdentifier()
        var parts: [CheckpointManifest.Part] = []
        let encoder = JournalChange.encoder
        // Three parts at once: one is read (on a reading connection) while the one before is written out as lines,
        // and the one before that is compressed and goes up.
        let store = self.catalog.store
        let limit = Self.checkpointPartAssets
        var reading: Task<[AssetRecord], any Error>? = Task { try store.uploadedRecords(after: nil, limit: limit) }
        defer { reading?.cancel() }
        try await withThrowingTaskGroup(of: Void.self) { uploads in
            while let read = reading {
                let records = try await read.value
                guard let last = records.last else { break }
                reading =
                    records.count < limit
                    ? nil : Task { [after = last.key] in try store.uploadedRecords(after: after, limit: limit) }
                var lines = Data()
                for record in records {
                    lines.append(CheckpointAsset(record).line)
                    lines.append(0x0A)
                }
                let key = CheckpointKey.part(prefix: prefix, slot: slot, device: device, index: parts.count)
                try await uploads.next()
                uploads.addTask { [lines] in
                    _ = try await remote.client.putObject(
                        bucket: bucket, key: key, body: Zlib.compress(lines), contentType: "application/zlib")
                }
                parts.append(CheckpointManifest.Part(key: key, assets: records.count, bytes: lines.count))
            }
            try await uploads.waitForAll()
        }
        // The albums and folders as last merged from the bucket (one with changes of this library's still to send
        // is left out: a bootstrap reads its document, whose ETag it then does not know).
        var collectionParts: [CheckpointManifest.Part] = []
        var lines = Data()
        var count = 0
        var afterUUID: String?
        var exhausted = false
        while !exhausted {
            let page = try catalog.store.sharedCollectionDocuments(after: afterUUID, limit: 500)
            afterUUID = page.last?.uuid
            exhausted = page.isEmpty
            for entry in page where !entry.etag.utf8.contains(where: { $0 == 0x09 || $0 == 0x0A }) {
                // The members kept aside (keys no asset has here) are part of the state it carries.
                var document = Data(entry.document.utf8)
                if !entry.pending.isEmpty {
                    guard let stored = CollectionDocument(catalogText: entry.document) else { continue }
                    document = stored.adding(entry.pending).encoded
                }
                lines.append(contentsOf: entry.etag.utf8)
                lines.append(0x09)
                lines.append(contentsOf: document)
                // The deltas merged into it, by name: a bootstrap does not read them again.
                let prefix = configuration.layout.collectionDeltaPrefix(entry.uuid)
                let names = entry.deltaKeys.compactMap { key -> Substring? in
                    guard key.hasPrefix(prefix), key.hasSuffix(".json") else { return nil }
                    return key.dropFirst(prefix.count).dropLast(5)
                }
                if !names.isEmpty {
                    lines.append(0x09)
                    lines.append(contentsOf: names.joined(separator: " ").utf8)
                }
                lines.append(0x0A)
                count += 1
            }
            if count > 0, exhausted || lines.count >= Self.checkpointCollectionPartBytes {
                let key = CheckpointKey.collectionPart(
                    prefix: prefix, slot: slot, device: device, index: collectionParts.count)
                _ = try await remote.client.putObject(
                    bucket: bucket, key: key, body: Zlib.compress(lines), contentType: "application/zlib")
                collectionParts.append(CheckpointManifest.Part(key: key, assets: count, bytes: lines.count))
                lines = Data()
                count = 0
            }
        }
        let manifest = CheckpointManifest(
            device: device, time: cursor, lastFullSync: lastFull, assets: parts.reduce(0) { $0 + $1.assets },
            parts: parts, collectionParts: collectionParts)
        var won = true
        let manifestBody = try encoder.encode(manifest)
        do {
            _ = try await remote.client.putObject(
                bucket: bucket, key: manifestKey, body: manifestBody, contentType: "application/json",
                condition: .keyAbsent)
        } catch {
            guard error == .preconditionFailed else { throw error }
            won = false
        }
        if !won {
            // Another library wrote this slot's checkpoint first: its parts are the ones that count.
            for part in parts + collectionParts {
                do {
                    try await remote.client.deleteObject(bucket: bucket, key: part.key)
                } catch {
                    telemetry.failed("could not delete a superseded checkpoint part", key: part.key, error: error)
                }
            }
        }
        try await catalog.setSetting(JournalSetting.checkpointSlot, to: String(slot))
        return won ? cursor : nil
    }

    /// Fills an empty catalog from the newest checkpoint in the bucket, and sets the journal position and the
    /// time of the last full listing to the checkpoint's. Parts are fetched three at a time (at most
    /// `maxConnections`) and each is committed in one transaction; meanwhile the journal's first pages after the
    /// checkpoint are read ahead. A slot without a manifest (a checkpoint being written, or a lost race) is passed
    /// over for the one before it.
    ///
    /// Everything is validated first (``BucketInput``): manifests and parts are read only up to their caps, a
    /// manifest whose counts, sizes or part keys are out of range is passed over (reported in
    /// ``SyncSummary/skipped``) for an older one, a line that is an asset but breaks a rule (a key outside the
    /// originals, a negative size) is skipped and reported. A part that cannot be read (not a zlib stream, a line
    /// that is not an asset, counts that disagree with the manifest) makes the checkpoint corrupt: reported, and
    /// the one before it is used when nothing was committed yet — else (and when no checkpoint is usable) the
    /// caller lists the bucket, which sets right whatever the corrupt one put in.
    /// - Returns: What was restored, or nil when the bucket holds no usable checkpoint (then list it all).
    func bootstrapFromCheckpoint(remote: LibraryRemote, summary: inout SyncSummary) async throws
        -> CheckpointBootstrap?
    {
        let bucket = configuration.bucket
        let slots = try await checkpointSlots(remote: remote)
        summary.pages += 1
        for slot in slots.reversed() {
            let manifestKey = slot + "manifest.json"
            // (A `catch` pattern ending in `continue` crashes Swift 6.3 in async code: a Result instead.)
            let read = await Self.optionalObject(
                remote: remote, bucket: bucket, key: manifestKey, maxBytes: BucketInput.maxCheckpointManifestBytes)
            let manifestData: Data
            switch try read.get() {
            case .gone: continue
            case .tooLarge:
                summary.skipped.append(
                    SyncSummary.SkippedObject(
                        key: manifestKey,
                        reason:
                            "checkpoint manifest larger than \(BucketInput.maxCheckpointManifestBytes) bytes: not read")
                )
                continue
            case .body(let data): manifestData = data
            }
            let manifest: CheckpointManifest
            switch BucketInput.checkpointManifest(manifestData, slot: slot, now: remote.client.correctedNow) {
            case .success(let valid): manifest = valid
            case .failure(let rejection):
                summary.skipped.append(SyncSummary.SkippedObject(key: manifestKey, reason: rejection.reason))
                continue
            }
            // The journal's tail costs round trips, the restore the catalog's writer: one runs during the other.
            async let readAhead = JournalSync(sync: self, remote: remote).readAhead(from: manifest.time)
            switch try await restoreOutcome(manifest, remote: remote, summary: &summary) {
            case .success(let restored):
                await restoreCollections(manifest, remote: remote, summary: &summary)
                try await catalog.setSetting(JournalSetting.cursor, to: String(manifest.time))
                try await catalog.setSetting(JournalSetting.lastFullSync, to: String(manifest.lastFullSync))
                // try?: a failed read-ahead is read again by the journal pass
                return CheckpointBootstrap(restored: restored, readAhead: try? await readAhead)
            case .failure(let corrupt):
                let next = corrupt.committed == 0 ? "an older checkpoint is tried" : "the bucket is listed instead"
                summary.skipped.append(
                    SyncSummary.SkippedObject(
                        key: manifestKey, reason: "corrupt checkpoint (\(corrupt.reason)): \(next)"))
                if corrupt.committed > 0 { return nil }
            }
        }
        return nil
    }

    /// Merges the albums and folders a checkpoint carries (after its assets, so that albums show them), each
    /// with the ETag of the bucket's document it is: the full listing of `collections/` that follows reads only
    /// the documents changed since. Every line is input from a stranger: a part that cannot be read whole (missing,
    /// too large, not zlib, a line that is not an ETag and a valid document, counts that disagree) is reported
    /// and nothing of it is used — its documents are then read from `collections/` as without a checkpoint.
    func restoreCollections(_ manifest: CheckpointManifest, remote: LibraryRemote, summary: inout SyncSummary) async {
        let layout = configuration.layout
        for part in manifest.collectionParts ?? [] {
            do {
                guard
                    let (compressed, _) = try await remote.client.getObject(
                        bucket: configuration.bucket, key: part.key, maxBytes: BucketInput.maxCheckpointPartBytes)
                else { throw CheckpointCorrupt(reason: "is too large", committed: 0) }
                guard let lines = Zlib.uncompress(compressed, size: part.bytes) else {
                    throw CheckpointCorrupt(reason: "is not a zlib stream of \(part.bytes) bytes", committed: 0)
                }
                let documents = try Self.collectionLines(
                    lines, expected: part.assets, layout: layout, now: remote.client.correctedNow)
                let device = try catalog.deviceIdentifier()
                try await catalog.performWrite { tx in
                    for (document, etag, deltas) in documents {
                        try CollectionSharing.adopt(
                            document.id, incoming: document, etag: etag, device: device, now: Date(), tx)
                        for name in deltas {
                            try tx.recordCollectionDelta(
                                key: layout.collectionDeltaKey(document.id, name: name), uuid: document.id, size: 0)
                        }
                    }
                }
            } catch {
                let reason = (error as? CheckpointCorrupt)?.reason ?? "cannot be read (\(error))"
                summary.skipped.append(
                    SyncSummary.SkippedObject(
                        key: part.key, reason: "checkpoint collections \(reason): the documents are read instead"))
            }
        }
    }

    /// The documents of a checkpoint's collection part: `ETag<tab>document[<tab>delta names]` lines (the names
    /// of the deltas merged into the document, space-separated), each document valid
    /// (``BucketInput/collectionDocument(_:id:layout:now:)``), each name a delta's, each collection once,
    /// `expected` of them.
    static func collectionLines(_ lines: Data, expected: Int, layout: BucketLayout, now: Date) throws
        -> [(CollectionDocument, String, [String])]
    {
        var documents: [(CollectionDocument, String, [String])] = []
        var seen = Set<String>()
        for line in lines.split(separator: 0x0A, omittingEmptySubsequences: true) {
            guard let tab = line.firstIndex(of: 0x09) else {
                throw CheckpointCorrupt(reason: "holds a line without an ETag", committed: 0)
            }
            let etag = String(decoding: line[line.startIndex..<tab], as: UTF8.self)
            if let problem = BucketInput.textProblem(etag, "ETag", max: BucketInput.maxETagBytes, empty: false) {
                throw CheckpointCorrupt(reason: "holds a line whose \(problem)", committed: 0)
            }
            // A JSON document holds no tab: one after it starts the names of the deltas merged into it.
            let rest = line[(tab + 1)...]
            let end = rest.firstIndex(of: 0x09) ?? rest.endIndex
            var names: [String] = []
            if end < rest.endIndex {
                for name in rest[(end + 1)...].split(separator: 0x20) {
                    let text = String(decoding: name, as: UTF8.self)
                    guard CollectionDocument.isDeltaName(Substring(text)) else {
                        throw CheckpointCorrupt(reason: "holds a line with a delta name that is not one", committed: 0)
                    }
                    names.append(text)
                }
            }
            switch BucketInput.collectionDocument(Data(rest[..<end]), id: nil, layout: layout, now: now) {
            case .success(let document):
                guard seen.insert(document.id).inserted else {
                    throw CheckpointCorrupt(reason: "names collection \(document.id) twice", committed: 0)
                }
                documents.append((document, etag, names))
            case .failure(let rejection):
                throw CheckpointCorrupt(
                    reason: "holds a document that breaks a rule (\(rejection.reason))", committed: 0)
            }
        }
        guard documents.count == expected else {
            throw CheckpointCorrupt(
                reason: "holds \(documents.count) documents where its manifest says \(expected)", committed: 0)
        }
        return documents
    }

    /// A checkpoint that could not be restored whole, and how many assets it had committed by then.
    struct CheckpointCorrupt: Error {
        var reason: String
        var committed: Int
    }

    /// ``restore(_:remote:summary:)``, with a corrupt checkpoint as a value (other errors throw).
    private func restoreOutcome(_ manifest: CheckpointManifest, remote: LibraryRemote, summary: inout SyncSummary)
        async throws -> Result<Int, CheckpointCorrupt>
    {
        do {
            return .success(try await restore(manifest, remote: remote, summary: &summary))
        } catch let corrupt as CheckpointCorrupt {
            return .failure(corrupt)
        }
    }

    /// An object's bytes, read only up to `maxBytes`.
    private static func optionalObject(remote: LibraryRemote, bucket: String, key: String, maxBytes: Int) async
        -> Result<JournalSync.Fetched, S3Error>
    {
        do {
            guard let (data, _) = try await remote.client.getObject(bucket: bucket, key: key, maxBytes: maxBytes)
            else { return .success(.tooLarge(nil)) }
            return .success(.body(data))
        } catch {
            return error == .noSuchKey ? .success(.gone) : .failure(error)
        }
    }

    private func restore(_ manifest: CheckpointManifest, remote: LibraryRemote, summary: inout SyncSummary)
        async throws -> Int
    {
        let client = remote.client
        let bucket = configuration.bucket
        let files = self.files
        // A few parts at a time keep the catalog's one writer busy (each part takes it longer to insert than to
        // fetch and parse); more would only hold more parsed rows in memory and delay the first part.
        let limit = max(1, min(configuration.maxConnections, 3))
        // Into an empty catalog (the usual bootstrap) rows are inserted without a look-up of what is there.
        let wasEmpty = try catalog.store.count == 0
        let layout = configuration.layout
        let now = remote.client.correctedNow
        let learnedAt = Date()
        return try await withThrowingTaskGroup(of: (records: [AssetRecord], skipped: [SyncSummary.SkippedObject]).self)
        { group in
            var iterator = manifest.parts.makeIterator()
            func addNext() -> Bool {
                guard let part = iterator.next() else { return false }
                group.addTask {
                    func corrupt(_ reason: String) -> CheckpointCorrupt {
                        CheckpointCorrupt(reason: "part \(part.key) \(reason)", committed: 0)
                    }
                    let fetched: (Data, S3ObjectHead)?
                    do {
                        fetched = try await client.getObject(
                            bucket: bucket, key: part.key, maxBytes: BucketInput.maxCheckpointPartBytes)
                    } catch S3Error.noSuchKey {
                        throw corrupt("is missing")
                    }
                    guard let (compressed, _) = fetched else {
                        throw corrupt("is larger than \(BucketInput.maxCheckpointPartBytes) bytes")
                    }
                    guard let lines = Zlib.uncompress(compressed, size: part.bytes) else {
                        throw corrupt("is not a zlib stream of \(part.bytes) bytes")
                    }
                    guard
                        let read = CheckpointPartReader.read(
                            lines, part: part, layout: layout, now: now, learnedAt: learnedAt)
                    else { throw corrupt("holds a line that is not an asset") }
                    guard read.lines == part.assets else {
                        throw corrupt("holds \(read.lines) lines where its manifest says \(part.assets)")
                    }
                    return (read.records, read.skipped)
                }
                return true
            }
            for _ in 0..<limit where !addNext() { break }
            var restored = 0
            while true {
                let next: (records: [AssetRecord], skipped: [SyncSummary.SkippedObject])?
                do {
                    next = try await group.next()
                } catch var corrupt as CheckpointCorrupt {
                    corrupt.committed = restored
                    throw corrupt
                }
                guard let (records, skipped) = next else { break }
                summary.skipped += skipped
                let counts = try await catalog.performWrite { tx -> ReconcileCounts in
                    tx.reserveCapacity(records.count, upserting: !wasEmpty)
                    var counts = ReconcileCounts()
                    var unused: [String] = []
                    for record in records {
                        let id: Int64
                        if wasEmpty, let inserted = try tx.insertIfNew(record) {
                            // Into an empty catalog almost every row is new: no look-up of its key first.
                            counts.inserted += 1
                            id = inserted
                        } else {
                            // An import of this library still going up keeps its row.
                            if let current = try tx.record(key: record.key), current.uploadState != .uploaded {
                                continue
                            }
                            id = try counts.upsert(record, tx, files: files, removing: &unused)
                        }
                        // An upsert takes the bucket's facts only; the shared properties merge as a sidecar read.
                        if record.metadataStamps != nil || record.sidecarETag != nil {
                            try SharedMetadata.adopt(
                                SharedMetadata(record: record), sidecarETag: record.sidecarETag, into: id, tx)
                        }
                    }
                    return counts
                }
                counts.add(to: &summary)
                if counts.changed { summary.transactions += 1 }
                restored += records.count
                _ = addNext()
            }
            return restored
        }
    }
}
