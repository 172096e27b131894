import AssetStore
import CZlib
import Essentials
import Foundation
import S3Transfer

/// Checkpoints: a snapshot of the catalog's bucket state as of a journal position, so that a new library
/// bootstraps from the newest checkpoint plus the journal after it instead of listing (and HEADing) every object.
///
/// Layout, under ``BucketLayout/checkpointPrefix``:
///
///     checkpoints/<slot: 13-digit ms>/manifest.json           written last, with If-None-Match: the commit point
///     checkpoints/<slot>/<device>/part-<5 digits>.z           zlib streams of lines, one asset per line
///
/// A slot is a multiple of ``AssetLibrary/Configuration/checkpointInterval``: the first library to write a slot's
/// manifest wins it (the others delete the parts they wrote). The manifest names the journal position the
/// snapshot reflects (`time`, the writer's cursor), when the writer last listed the whole bucket, and the parts.
struct CheckpointManifest: Codable, Sendable {
    var format = 1
    var device: String
    /// The journal position (milliseconds, the service's clock) the snapshot reflects.
    var time: Int64
    /// When the writer last completed a full listing (milliseconds since 1970).
    var lastFullSync: Int64
    var assets: Int
    var parts: [Part]

    struct Part: Codable, Sendable {
        var key: String
        var assets: Int
        /// Uncompressed bytes (the room to inflate into).
        var bytes: Int
    }
}

/// One asset of a checkpoint: the bucket's state of its original and its shared properties.
///
/// A part holds one line per asset, 19 tab-separated fields in this order: key, size, ETag, Last-Modified (ms,
/// empty when no listing showed it yet), content type, creation and modification dates (ms), media type
/// (`image`, `video`, `audio` or empty), pixel width, height, orientation, thumbnail key, size and ETag, SHA-256,
/// sidecar ETag, the sidecar's JSON (empty without shared properties), the location (`lat,lon[,alt]`, empty when
/// unknown), `1` when the object's own headers were not read yet (else empty). Lines of 17 fields (written before
/// the last two existed) are read with neither. Text fields escape `\`, tab and newline
/// as `\\`, `\t`, `\n`; an empty text field is absent. (Lines, not JSON objects: a million of them parse in
/// about a second where a JSON decoder takes ten.)
struct CheckpointAsset: Sendable {
    var key: String
    var size: Int64
    var etag: String
    /// Milliseconds; nil when no listing showed the object yet.
    var lastModified: Int64?
    var contentType: String?
    var created: Int64
    var modified: Int64
    var mediaType: String?
    var width: Int
    var height: Int
    var orientation: Int
    var thumbnailKey: String?
    var thumbnailSize: Int64?
    var thumbnailETag: String?
    var sha256: String?
    var sidecarETag: String?
    var sidecar: SharedMetadata.Sidecar?
    var location: AssetLocation?
    var imageMetadataPending = false

    init(_ record: AssetRecord) {
        key = record.key
        size = record.size
        etag = record.etag
        lastModified =
            record.lastModified == AssetRecord.notListedYet
            ? nil : Int64(record.lastModified.timeIntervalSince1970 * 1000)
        contentType = record.contentType
        created = Int64((record.creationDate.timeIntervalSince1970 * 1000).rounded())
        modified = Int64((record.modificationDate.timeIntervalSince1970 * 1000).rounded())
        mediaType = record.mediaType.metadataValue
        width = record.pixelWidth
        height = record.pixelHeight
        orientation = record.orientation
        thumbnailKey = record.thumbnailKey
        thumbnailSize = record.thumbnailSize
        thumbnailETag = record.thumbnailETag
        sha256 = record.contentSHA256
        sidecarETag = record.sidecarETag
        location = record.location
        imageMetadataPending = record.imageMetadataPending
        let shared = SharedMetadata(record: record)
        sidecar = shared.stamps.isEmpty ? nil : shared.sidecar(originalKey: record.key, sha256: record.contentSHA256)
    }

    /// The asset's line, without its newline.
    var line: Data {
        var out = Data()
        out.reserveCapacity(160)
        func text(_ value: String?) {
            guard let value else { return }
            for byte in value.utf8 {
                switch byte {
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x09: out.append(contentsOf: [0x5C, 0x74])
                case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
                default: out.append(byte)
                }
            }
        }
        func number<N: BinaryInteger>(_ value: N?) {
            if let value { out.append(contentsOf: String(value).utf8) }
        }
        let sidecarJSON = sidecar.map { String(decoding: SharedMetadata.encode($0), as: UTF8.self) }
        text(key)
        out.append(0x09)
        number(size)
        out.append(0x09)
        text(etag)
        out.append(0x09)
        number(lastModified)
        out.append(0x09)
        text(contentType)
        out.append(0x09)
        number(created)
        out.append(0x09)
        number(modified)
        out.append(0x09)
        text(mediaType)
        out.append(0x09)
        number(width)
        out.append(0x09)
        number(height)
        out.append(0x09)
        number(orientation)
        out.append(0x09)
        text(thumbnailKey)
        out.append(0x09)
        number(thumbnailSize)
        out.append(0x09)
        text(thumbnailETag)
        out.append(0x09)
        text(sha256)
        out.append(0x09)
        text(sidecarETag)
        out.append(0x09)
        text(sidecarJSON)
        out.append(0x09)
        text(location?.serialized)
        out.append(0x09)
        text(imageMetadataPending ? "1" : nil)
        return out
    }

    /// Parses a line; nil when it is not one.
    init?(line: Data.SubSequence) {
        guard let parsed = line.withUnsafeBytes({ CheckpointAsset(line: $0) }) else { return nil }
        self = parsed
    }

    /// Parses a line held in raw bytes (the restore's path: no `Data` slice per line or per field).
    init?(line: UnsafeRawBufferPointer) {
        // Field boundaries as offsets, on the stack: at most 19 fields (17 in the first format).
        var starts = InlineArray<20, Int>(repeating: 0)
        var ends = InlineArray<20, Int>(repeating: 0)
        var count = 0
        var start = 0
        for index in 0..<line.count where line[index] == 0x09 {
            guard count < 19 else { return nil }
            starts[count] = start
            ends[count] = index
            count += 1
            start = index + 1
        }
        guard count < 19 else { return nil }
        starts[count] = start
        ends[count] = line.count
        count += 1
        guard count == 17 || count == 19 else { return nil }
        func field(_ i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: line[starts[i]..<ends[i]])
        }
        func text(_ i: Int) -> String? {
            let field = field(i)
            guard !field.isEmpty else { return nil }
            guard field.contains(0x5C) else { return String(decoding: field, as: UTF8.self) }
            var bytes: [UInt8] = []
            var escaped = false
            for byte in field {
                if escaped {
                    bytes.append(byte == 0x74 ? 0x09 : byte == 0x6E ? 0x0A : byte)
                    escaped = false
                } else if byte == 0x5C {
                    escaped = true
                } else {
                    bytes.append(byte)
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        func number(_ i: Int) -> Int64? {
            let field = field(i)
            guard !field.isEmpty, field.count <= 19 else { return nil }
            var value: Int64 = 0
            var negative = false
            for (offset, byte) in field.enumerated() {
                if offset == 0 && byte == 0x2D {
                    negative = true
                    continue
                }
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return negative ? -value : value
        }
        guard let key = text(0), let size = number(1), let created = number(5), let modified = number(6) else {
            return nil
        }
        self.key = key
        self.size = size
        etag = text(2) ?? ""
        lastModified = number(3)
        contentType = text(4)
        self.created = created
        self.modified = modified
        mediaType = text(7)
        width = Int(number(8) ?? 0)
        height = Int(number(9) ?? 0)
        orientation = Int(number(10) ?? 1)
        thumbnailKey = text(11)
        thumbnailSize = number(12)
        thumbnailETag = text(13)
        sha256 = text(14)
        sidecarETag = text(15)
        if let json = text(16) {
            guard let decoded = SharedMetadata.decode(Data(json.utf8)) else { return nil }
            sidecar = decoded
        } else {
            sidecar = nil
        }
        if count == 19 {
            location = text(17).flatMap(AssetLocation.init(serialized:))
            imageMetadataPending = text(18) == "1"
        }
    }

    /// The catalog row for this asset (cloud only).
    var record: AssetRecord {
        let date = { (ms: Int64) in Date(timeIntervalSince1970: Double(ms) / 1000) }
        var record = AssetRecord(
            key: key, size: size, etag: etag, lastModified: lastModified.map(date) ?? AssetRecord.notListedYet,
            contentType: contentType, creationDate: date(created), modificationDate: date(modified),
            mediaType: mediaType.flatMap(MediaType.init(metadataValue:)) ?? MediaType(guessingFrom: key),
            pixelWidth: max(0, width), pixelHeight: max(0, height),
            orientation: (1...8).contains(orientation) ? orientation : 1,
            thumbnailKey: thumbnailKey, thumbnailSize: thumbnailSize, thumbnailETag: thumbnailETag)
        record.contentSHA256 = sha256
        record.sidecarETag = sidecarETag
        record.location = location
        record.imageMetadataPending = imageMetadataPending
        if let sidecar { SharedMetadata(sidecar: sidecar, learnedAt: Date()).apply(to: &record) }
        return record
    }
}

/// Checkpoint keys.
enum CheckpointKey {
    static func slotFolder(prefix: String, slot: Int64) -> String { JournalKey.start(prefix: prefix, time: slot) + "/" }

    static func manifest(prefix: String, slot: Int64) -> String {
        slotFolder(prefix: prefix, slot: slot) + "manifest.json"
    }

    static func part(prefix: String, slot: Int64, device: String, index: Int) -> String {
        let number = String(index)
        return slotFolder(prefix: prefix, slot: slot) + device + "/part-"
            + String(repeating: "0", count: max(0, 5 - number.count)) + number + ".z"
    }
}

/// zlib streams (compress2 / uncompress2).
enum Zlib {
    static func compress(_ data: Data) -> Data {
        var out = Data(count: czlib_compress_bound(data.count))
        var length = out.count
        let rc = out.withUnsafeMutableBytes { output in
            data.withUnsafeBytes { input in
                czlib_compress(output.baseAddress, &length, input.baseAddress, input.count, 6)
            }
        }
        precondition(rc == 0, "compress2 cannot fail with a bound-sized buffer")
        out.count = length
        return out
    }

    /// Inflates a whole stream of `size` bytes; nil when it is not one.
    static func uncompress(_ data: Data, size: Int) -> Data? {
        guard size >= 0, size < 1 << 31 else { return nil }
        var out = Data(count: size)
        var length = size
        let rc = out.withUnsafeMutableBytes { output in
            data.withUnsafeBytes { input in
                czlib_uncompress(output.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        guard rc == 0, length == size else { return nil }
        return out
    }
}

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

    /// Writes this slot's checkpoint unless one exists (or this library wrote or saw it already): only a library
    /// that has listed the whole bucket once, after a sync, at most one HEAD per slot when there is nothing to do.
    /// - Returns: The journal position the checkpoint covers when this library wrote the slot's checkpoint; `nil`
    ///   when it did not.
    func writeCheckpointIfDue(remote: LibraryRemote) async throws -> Int64? {
        let interval = Int64(configuration.checkpointInterval * 1000)
        guard interval > 0, let lastFull = Int64(try store.setting(JournalSetting.lastFullSync) ?? ""),
            let cursor = Int64(try store.setting(JournalSetting.cursor) ?? "")
        else { return nil }
        let now = Int64(remote.client.correctedNow.timeIntervalSince1970 * 1000)
        let slot = now / interval * interval
        guard slot > Int64(try store.setting(JournalSetting.checkpointSlot) ?? "") ?? -1 else { return nil }
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
            try store.setSetting(JournalSetting.checkpointSlot, to: String(slot))
            return nil
        }
        let device = try deviceIdentifier()
        var parts: [CheckpointManifest.Part] = []
        var after: String?
        let encoder = JournalChange.encoder
        while true {
            let records = try store.uploadedRecords(after: after, limit: Self.checkpointPartAssets)
            guard let last = records.last else { break }
            after = last.key
            var lines = Data()
            for record in records {
                lines.append(CheckpointAsset(record).line)
                lines.append(0x0A)
            }
            let key = CheckpointKey.part(prefix: prefix, slot: slot, device: device, index: parts.count)
            _ = try await remote.client.putObject(
                bucket: bucket, key: key, body: Zlib.compress(lines), contentType: "application/zlib")
            parts.append(CheckpointManifest.Part(key: key, assets: records.count, bytes: lines.count))
        }
        let manifest = CheckpointManifest(
            device: device, time: cursor, lastFullSync: lastFull, assets: parts.reduce(0) { $0 + $1.assets },
            parts: parts)
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
            for part in parts { try? await remote.client.deleteObject(bucket: bucket, key: part.key) }
        }
        try store.setSetting(JournalSetting.checkpointSlot, to: String(slot))
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
                try store.setSetting(JournalSetting.cursor, to: String(manifest.time))
                try store.setSetting(JournalSetting.lastFullSync, to: String(manifest.lastFullSync))
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
        let wasEmpty = try store.count == 0
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
                    // Never allocated from the claimed count alone: it is capped, and so is this.
                    var records: [AssetRecord] = []
                    records.reserveCapacity(min(part.assets, SyncEngine.checkpointPartAssets))
                    var skipped: [SyncSummary.SkippedObject] = []
                    let parsed = lines.withUnsafeBytes { buffer -> Int? in
                        // Lines found in the raw bytes, each parsed where it lies.
                        var start = 0
                        var count = 0
                        for index in 0...buffer.count where index == buffer.count || buffer[index] == 0x0A {
                            defer { start = index + 1 }
                            guard index > start else { continue }
                            let line = UnsafeRawBufferPointer(rebasing: buffer[start..<index])
                            guard let asset = CheckpointAsset(line: line) else { return nil }
                            count += 1
                            switch BucketInput.checkpointAsset(asset, layout: layout, now: now, learnedAt: learnedAt) {
                            case .success(let record): records.append(record)
                            case .failure(let rejection):
                                skipped.append(
                                    SyncSummary.SkippedObject(
                                        key: part.key, reason: "line \(count): \(rejection.reason)"))
                            }
                        }
                        return count
                    }
                    guard let parsed else { throw corrupt("holds a line that is not an asset") }
                    guard parsed == part.assets else {
                        throw corrupt("holds \(parsed) lines where its manifest says \(part.assets)")
                    }
                    return (records, skipped)
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
                let counts = try performWrite { tx -> ReconcileCounts in
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
