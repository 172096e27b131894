package import AssetStore
package import Foundation

/// Everything read from the bucket, validated into typed, bounded values before any sync code sees it.
///
/// The bucket is shared: another library, another tool, a buggy device or anyone holding a key can write journal
/// entries, checkpoints, sidecars and edit manifests. Nothing read from them names what a library deletes or
/// overwrites until it has passed these rules:
/// - an original's key lies under the layout's originals prefix (and under no other prefix of the layout), has
///   no empty, `.` or `..` segment, does not start with `/`, holds no control character and is at most
///   ``maxKeyBytes`` bytes of UTF-8 (S3's limit);
/// - sizes are in `0...`\ ``maxObjectSize``; counts and lengths are within the caps below, and nothing is
///   allocated from a count a stranger claims;
/// - stamps later than the service's clock (plus ``maxStampLead``, for devices whose clocks run a little ahead) are
///   clamped to it, so a stamp from the future cannot pin a property for ever; a trash learned from the bucket is
///   dated when this library learned of it, so the trash retention never counts from a stranger's stamp;
/// - an edit's rendered file and thumbnail lie in the asset's own edits folder (`edits/<path>/`).
///
/// What fails a rule is a ``Rejection``: the caller skips it and reports it (``SyncSummary/skipped``); it never
/// deletes anything, never stops other input from applying, and never crashes.
package enum BucketInput {
    /// The longest key S3 accepts, in bytes of UTF-8.
    package static let maxKeyBytes = 1024
    /// The largest object S3 stores: 5 TiB.
    package static let maxObjectSize: Int64 = 5 << 40
    /// The largest journal entry read (a library writes at most 500 changes, well under 1 MiB). Larger objects
    /// under the journal prefix are skipped by their listed size, and never read beyond this.
    package static let maxJournalEntryBytes = 16 << 20
    /// The most changes one journal entry may carry.
    package static let maxJournalChanges = 10_000
    /// The largest checkpoint manifest read.
    package static let maxCheckpointManifestBytes = 4 << 20
    /// The most parts a checkpoint manifest may name.
    package static let maxCheckpointParts = 10_000
    /// The most assets one checkpoint part may hold (a library writes ``AssetLibrary/checkpointPartAssets``).
    package static let maxCheckpointPartAssets = 100_000
    /// The largest checkpoint part, compressed or not.
    package static let maxCheckpointPartBytes = 64 << 20
    /// The largest sidecar or edit manifest read.
    package static let maxDocumentBytes = 1 << 20
    /// The largest thumbnail read (of an original or of an edit).
    package static let maxThumbnailBytes = 32 << 20
    /// Longest texts: an ETag, a content type, a device, a title, a keyword.
    package static let maxETagBytes = 256
    package static let maxContentTypeBytes = 256
    package static let maxDeviceBytes = 128
    package static let maxTitleBytes = 4096
    package static let maxKeywordBytes = 256
    package static let maxKeywords = 1000
    /// The most `x-amz-meta-*` fields a `put` change may carry, and the bytes of all of them (S3 keeps 2 KB).
    package static let maxMetadataFields = 64
    package static let maxMetadataBytes = 8192
    /// How far past the service's clock a stamp may lie before it is clamped: stamps are made with each device's
    /// own clock, and a change of a device whose clock runs ahead by less than this keeps its stamp (so a change
    /// made after seeing it still stamps later, and wins).
    package static let maxStampLead: TimeInterval = 3600
    /// The largest pixel side an asset or a rendering may claim.
    package static let maxPixelSide = 1 << 20

    /// Why a piece of input was refused: one line, for ``SyncSummary/SkippedObject/reason``.
    package struct Rejection: Error, Sendable, Equatable {
        package let reason: String
        package init(_ reason: String) { self.reason = reason }
    }

    // MARK: Keys and plain values

    /// Why `key` is not an original's key in `layout`; nil when it is one.
    package static func originalKeyProblem(_ key: String, layout: BucketLayout) -> String? {
        if let problem = keyProblem(key) { return problem }
        let bytes = key.utf8
        let originals = layout.originalsPrefix.utf8
        guard bytes.count > originals.count, bytes.starts(with: originals) else {
            return "key \(quoted(key)) is not under \(quoted(layout.originalsPrefix))"
        }
        // With an empty (or short) originals prefix, the layout's other folders still are not originals.
        for prefix in [
            layout.thumbnailsPrefix, layout.metadataPrefix, layout.journalPrefix, layout.checkpointPrefix,
            layout.editsPrefix, layout.collectionsPrefix,
        ] where prefix.utf8.count > originals.count && bytes.starts(with: prefix.utf8) {
            return "key \(quoted(key)) lies under \(quoted(prefix)), not among the originals"
        }
        return nil
    }

    /// Why `key` cannot name an object the library acts on; nil when it can. One pass over its bytes, no
    /// allocation (a checkpoint restore checks a million keys).
    package static func keyProblem(_ key: String) -> String? {
        var count = 0
        var segmentLength = 0
        var onlyDots = true
        for byte in key.utf8 {
            count += 1
            if byte < 0x20 || byte == 0x7F { return "key \(quoted(key)) holds a control character" }
            if byte == UInt8(ascii: "/") {
                if count == 1 { return "key \(quoted(key)) starts with /" }
                if segmentLength == 0 { return "key \(quoted(key)) has an empty segment" }
                if onlyDots && segmentLength <= 2 { return "key \(quoted(key)) has a . or .. segment" }
                segmentLength = 0
                onlyDots = true
            } else {
                segmentLength += 1
                if byte != UInt8(ascii: ".") { onlyDots = false }
            }
        }
        guard count > 0 else { return "empty key" }
        guard count <= maxKeyBytes else { return "key of \(count) bytes (at most \(maxKeyBytes))" }
        if segmentLength == 0 || (onlyDots && segmentLength <= 2) { return "key \(quoted(key)) does not name a file" }
        return nil
    }

    package static func sizeProblem(_ size: Int64, of what: String) -> String? {
        (0...maxObjectSize).contains(size) ? nil : "\(what) size \(size) is out of range"
    }

    package static func textProblem(_ text: String?, _ what: String, max: Int, empty: Bool = true) -> String? {
        guard let text else { return nil }
        if !empty && text.isEmpty { return "empty \(what)" }
        return text.utf8.count <= max ? nil : "\(what) of \(text.utf8.count) bytes (at most \(max))"
    }

    /// A key shortened for a message.
    package static func quoted(_ key: String) -> String {
        let shown = key.utf8.count > 120 ? String(key.prefix(100)) + "…" : key
        return "\"" + shown.map { ($0.asciiValue ?? 0x20) < 0x20 ? "?" : String($0) }.joined() + "\""
    }

    package static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    // MARK: Journal entries

    /// One change of a journal entry, validated.
    package enum Change: Sendable {
        /// An original was written.
        case put(
            key: String, size: Int64, etag: String, contentType: String?, metadata: [String: String],
            thumbnail: ThumbnailObject?)
        /// An original was deleted.
        case delete(key: String, etag: String)
        /// An original's shared properties, as a sidecar held them (stamps clamped; a trash dated when learned).
        case metadata(key: String, state: SharedMetadata, sidecarETag: String?)
        /// An edit revision (its keys in the asset's own edits folder).
        case edit(EditManifest)
        /// An album's or folder's shared state was written (what it holds is read from the bucket), with the
        /// ETag the writer got (nil when the entry names none).
        case collection(id: String, key: String, etag: String?)

        package var key: String {
            switch self {
            case .put(let key, _, _, _, _, _), .delete(let key, _), .metadata(let key, _, _): key
            case .edit(let manifest): manifest.original
            case .collection(_, let key, _): key
            }
        }
    }

    /// A journal entry read from the bucket: its valid changes, in order, and why each other one was refused.
    package struct Entry: Sendable {
        package var changes: [Change]
        package var rejected: [Rejection]
    }

    /// Reads a journal entry's bytes.
    /// - Parameters:
    ///   - now: The service's clock (``S3Client/correctedNow``): later stamps are clamped to it.
    ///   - learnedAt: This library's clock: the date a trash learned here is given.
    /// - Returns: The entry, or a rejection when the bytes are not an entry at all (too large, not JSON, another
    ///   format, too many changes).
    package static func journalEntry(_ data: Data, layout: BucketLayout, now: Date, learnedAt: Date) -> Result<
        Entry, Rejection
    > {
        guard data.count <= maxJournalEntryBytes else {
            return .failure(Rejection("journal entry of \(data.count) bytes (at most \(maxJournalEntryBytes))"))
        }
        // try?: refused with a reason below
        guard let entry = try? JSONDecoder().decode(LenientEntry.self, from: data), entry.format == 1 else {
            return .failure(Rejection("not a journal entry"))
        }
        guard entry.changes.count <= maxJournalChanges else {
            return .failure(Rejection("journal entry of \(entry.changes.count) changes (at most \(maxJournalChanges))"))
        }
        var result = Entry(changes: [], rejected: [])
        if let problem = textProblem(entry.device, "device", max: maxDeviceBytes) {
            return .failure(Rejection(problem))
        }
        for (index, lenient) in entry.changes.enumerated() {
            guard let change = lenient.change else {
                result.rejected.append(Rejection("change \(index): not a change this version understands"))
                continue
            }
            switch journalChange(change, layout: layout, now: now, learnedAt: learnedAt) {
            case .success(let valid): result.changes.append(valid)
            case .failure(let rejection): result.rejected.append(Rejection("change \(index): \(rejection.reason)"))
            }
        }
        return .success(result)
    }

    /// A journal entry whose changes decode one by one: a change that is not one (an unknown operation, a field of
    /// the wrong type) is refused alone, and its siblings still apply.
    private struct LenientEntry: Decodable {
        package var format: Int
        package var device: String
        package var changes: [LenientChange]
    }

    private struct LenientChange: Decodable {
        package var change: JournalChange?
        // try?: an unknown change is skipped, the entry's others kept
        package init(from decoder: any Decoder) throws { change = try? JournalChange(from: decoder) }
    }

    /// Validates one change of a journal entry.
    package static func journalChange(_ change: JournalChange, layout: BucketLayout, now: Date, learnedAt: Date)
        -> Result<
            Change, Rejection
        >
    {
        if change.op != .collection, let problem = originalKeyProblem(change.key, layout: layout) {
            return .failure(Rejection(problem))
        }
        switch change.op {
        case .collection:
            // A collection's document, or one of its deltas.
            guard
                let id = layout.collectionID(forKey: change.key).flatMap({
                    change.key == layout.collectionKey($0) ? $0 : nil
                }) ?? layout.collectionID(forDeltaKey: change.key)
            else {
                return .failure(Rejection("collection change of \(quoted(change.key)), not a collection's key"))
            }
            if let problem = textProblem(change.etag, "ETag", max: maxETagBytes, empty: false) {
                return .failure(Rejection(problem))
            }
            return .success(.collection(id: id, key: change.key, etag: change.etag))
        case .put:
            guard let size = change.size, let etag = change.etag else {
                return .failure(Rejection("put without a size or an ETag"))
            }
            if let problem = sizeProblem(size, of: "object")
                ?? textProblem(etag, "ETag", max: maxETagBytes, empty: false)
                ?? textProblem(change.contentType, "content type", max: maxContentTypeBytes)
                ?? metadataProblem(change.metadata ?? [:])
            {
                return .failure(Rejection(problem))
            }
            // A thumbnail only where the layout puts the original's, of a thumbnail's size; else none (the change
            // still applies: the listing finds a thumbnail that is there).
            var thumbnail: ThumbnailObject?
            if let key = change.thumbnailKey, let size = change.thumbnailSize, let etag = change.thumbnailETag,
                key == layout.thumbnailKey(forOriginalKey: change.key), size >= 0, size <= maxThumbnailBytes,
                textProblem(etag, "ETag", max: maxETagBytes, empty: false) == nil
            {
                thumbnail = ThumbnailObject(key: key, size: size, etag: etag)
            }
            return .success(
                .put(
                    key: change.key, size: size, etag: etag, contentType: change.contentType,
                    metadata: change.metadata ?? [:], thumbnail: thumbnail))
        case .delete:
            guard let etag = change.etag else { return .failure(Rejection("delete without an ETag")) }
            if let problem = textProblem(etag, "ETag", max: maxETagBytes, empty: false) {
                return .failure(Rejection(problem))
            }
            return .success(.delete(key: change.key, etag: etag))
        case .metadata:
            guard let sidecar = change.sidecar else { return .failure(Rejection("metadata without a sidecar")) }
            if let problem = textProblem(change.sidecarETag, "sidecar ETag", max: maxETagBytes) {
                return .failure(Rejection(problem))
            }
            return sharedMetadata(sidecar, originalKey: change.key, now: now, learnedAt: learnedAt).map {
                .metadata(key: change.key, state: $0, sidecarETag: change.sidecarETag)
            }
        case .edit:
            guard let manifest = change.edit else { return .failure(Rejection("edit without a manifest")) }
            guard manifest.original == change.key else {
                return .failure(Rejection("edit manifest of \(quoted(manifest.original)) under \(quoted(change.key))"))
            }
            return editManifest(manifest, layout: layout).map { .edit($0) }
        }
    }

    package static func metadataProblem(_ metadata: [String: String]) -> String? {
        guard metadata.count <= maxMetadataFields else { return "\(metadata.count) metadata fields" }
        let bytes = metadata.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        return bytes <= maxMetadataBytes ? nil : "metadata of \(bytes) bytes (at most \(maxMetadataBytes))"
    }

    // MARK: Sidecars

    /// Reads a sidecar's bytes (from its object) for the original `originalKey`.
    package static func sidecar(_ data: Data, originalKey: String, now: Date, learnedAt: Date) -> Result<
        SharedMetadata, Rejection
    > {
        guard data.count <= maxDocumentBytes else { return .failure(Rejection("sidecar of \(data.count) bytes")) }
        guard let sidecar = SharedMetadata.decode(data) else { return .failure(Rejection("not a sidecar")) }
        return sharedMetadata(sidecar, originalKey: originalKey, now: now, learnedAt: learnedAt)
    }

    /// A sidecar's state, validated: it names `originalKey`, its texts and lists are bounded, its stamps are no
    /// later than `now` plus ``maxStampLead``, and a trash it holds is dated `learnedAt` (the retention counts from
    /// there).
    package static func sharedMetadata(
        _ sidecar: SharedMetadata.Sidecar, originalKey: String, now: Date, learnedAt: Date
    )
        -> Result<SharedMetadata, Rejection>
    {
        guard sidecar.original == originalKey else {
            return .failure(Rejection("sidecar names \(quoted(sidecar.original)), not \(quoted(originalKey))"))
        }
        if let problem = textProblem(sidecar.sha256, "SHA-256", max: 128) { return .failure(Rejection(problem)) }
        for (name, entry) in sidecar.properties {
            if let problem = textProblem(entry.device, "device", max: maxDeviceBytes)
                ?? textProblem(name, "property name", max: 64)
            {
                return .failure(Rejection(problem))
            }
            switch entry.value {
            case .text(let text):
                if let problem = textProblem(text, "title", max: maxTitleBytes) { return .failure(Rejection(problem)) }
            case .list(let list):
                guard list.count <= maxKeywords, list.allSatisfy({ $0.utf8.count <= maxKeywordBytes }) else {
                    return .failure(Rejection("keywords beyond \(maxKeywords) of \(maxKeywordBytes) bytes"))
                }
            case .flag, .none: break
            }
        }
        var state = SharedMetadata(sidecar: sidecar, learnedAt: learnedAt)
        let limit = milliseconds(now.addingTimeInterval(maxStampLead))
        for (property, stamp) in state.stamps where stamp.time > limit {
            state.stamps[property] = SharedMetadata.Stamp(time: limit, device: stamp.device)
        }
        return .success(state)
    }

    // MARK: Edit manifests

    /// Reads an edit manifest's bytes (from its object); `expectedOriginal` is the original its key names.
    package static func editManifest(_ data: Data, expectedOriginal: String, layout: BucketLayout) -> Result<
        EditManifest, Rejection
    > {
        guard data.count <= maxDocumentBytes else {
            return .failure(Rejection("edit manifest of \(data.count) bytes"))
        }
        guard let manifest = EditManifest.decode(data) else { return .failure(Rejection("not an edit manifest")) }
        guard manifest.original == expectedOriginal else {
            return .failure(Rejection("edit manifest names \(quoted(manifest.original))"))
        }
        return editManifest(manifest, layout: layout)
    }

    /// An edit manifest, validated: a well-formed revision of an original's key, its rendered file and thumbnail
    /// in that original's own edits folder (`edits/<path>/<name>`, no deeper), sizes and dimensions in range.
    package static func editManifest(_ manifest: EditManifest, layout: BucketLayout) -> Result<EditManifest, Rejection>
    {
        if let problem = originalKeyProblem(manifest.original, layout: layout) { return .failure(Rejection(problem)) }
        guard manifest.format == 1, EditRevisionID.isValid(manifest.revision) else {
            return .failure(Rejection("edit revision \(quoted(manifest.revision)) is not well formed"))
        }
        guard let folder = layout.editsFolder(forOriginalKey: manifest.original) else {
            return .failure(Rejection("no edits folder for \(quoted(manifest.original))"))
        }
        if let basedOn = manifest.basedOn, !EditRevisionID.isValid(basedOn) {
            return .failure(Rejection("edit based on a revision that is not well formed"))
        }
        if let adjustment = manifest.adjustment,
            adjustment.data.count > AdjustmentData.maximumSize || adjustment.formatIdentifier.utf8.count > 256
                || adjustment.formatVersion.utf8.count > 256
        {
            return .failure(Rejection("edit adjustment data beyond \(AdjustmentData.maximumSize) bytes"))
        }
        func inFolder(_ key: String, _ what: String) -> String? {
            if let problem = keyProblem(key) { return "\(what): \(problem)" }
            let name = key.utf8.dropFirst(folder.utf8.count)
            guard key.hasPrefix(folder), !name.isEmpty, !name.contains(UInt8(ascii: "/")) else {
                return "\(what) \(quoted(key)) is not in the asset's edits folder \(quoted(folder))"
            }
            return nil
        }
        if manifest.reverted {
            guard manifest.rendered == nil, manifest.thumbnailKey == nil else {
                return .failure(Rejection("a revert that names files"))
            }
            return .success(manifest)
        }
        guard let rendered = manifest.rendered else { return .failure(Rejection("an edit without a rendering")) }
        if let problem = inFolder(rendered.key, "rendering") ?? manifest.thumbnailKey.flatMap({
            inFolder($0, "thumbnail")
        })
            ?? sizeProblem(rendered.size, of: "rendering")
            ?? textProblem(rendered.etag, "ETag", max: maxETagBytes)
            ?? textProblem(rendered.sha256, "SHA-256", max: 128, empty: false)
        {
            return .failure(Rejection(problem))
        }
        guard (0...maxPixelSide).contains(rendered.pixelWidth), (0...maxPixelSide).contains(rendered.pixelHeight)
        else { return .failure(Rejection("rendering of \(rendered.pixelWidth)×\(rendered.pixelHeight) pixels")) }
        return .success(manifest)
    }

    // MARK: The journal's horizon

    /// Reads the horizon's bytes (`{"format":1,"time":<ms>}`): its time, clamped to the service's clock; 0 (no
    /// horizon) for bytes that are not one.
    package static func horizon(_ data: Data, now: Date) -> Int64 {
        guard data.count <= maxDocumentBytes,
            // try?: not a horizon reads as none (documented)
            let horizon = try? JSONDecoder().decode(SyncEngine.JournalHorizon.self, from: data),
            horizon.format == 1, horizon.time > 0
        else { return 0 }
        return min(horizon.time, milliseconds(now))
    }

    // MARK: Checkpoints

    /// Reads a checkpoint manifest's bytes, found in the slot folder `slot` (`checkpoints/<time>/`).
    /// - Parameter now: The service's clock: a position or a listing time later than it is clamped to it.
    package static func checkpointManifest(_ data: Data, slot: String, now: Date) -> Result<
        CheckpointManifest, Rejection
    > {
        guard data.count <= maxCheckpointManifestBytes else {
            return .failure(Rejection("checkpoint manifest of \(data.count) bytes"))
        }
        // try?: refused with a reason below
        guard var manifest = try? JSONDecoder().decode(CheckpointManifest.self, from: data), manifest.format == 1
        else { return .failure(Rejection("not a checkpoint manifest")) }
        for (parts, what) in [(manifest.parts, "assets"), (manifest.collectionParts ?? [], "collections")] {
            if let problem = partsProblem(parts, slot: slot, holding: what) { return .failure(Rejection(problem)) }
        }
        let total = manifest.parts.reduce(0) { $0 + $1.assets }
        guard manifest.assets == total else {
            return .failure(Rejection("checkpoint claims \(manifest.assets) assets, its parts hold \(total)"))
        }
        let limit = milliseconds(now)
        guard manifest.time >= 0, manifest.lastFullSync >= 0 else {
            return .failure(Rejection("checkpoint with a negative time"))
        }
        manifest.time = min(manifest.time, limit)
        manifest.lastFullSync = min(manifest.lastFullSync, limit)
        return .success(manifest)
    }

    /// What is wrong with a manifest's list of parts holding `what` (assets, collections), or nil: too many, a key
    /// that is not one or lies outside the slot, a count or size out of range.
    private static func partsProblem(_ parts: [CheckpointManifest.Part], slot: String, holding what: String)
        -> String?
    {
        guard parts.count <= maxCheckpointParts else {
            return "checkpoint of \(parts.count) parts of \(what) (at most \(maxCheckpointParts))"
        }
        for part in parts {
            if let problem = keyProblem(part.key) { return "checkpoint part: \(problem)" }
            guard part.key.hasPrefix(slot) else {
                return "checkpoint part \(quoted(part.key)) lies outside its slot \(quoted(slot))"
            }
            guard (0...maxCheckpointPartAssets).contains(part.assets), (0...maxCheckpointPartBytes).contains(part.bytes)
            else { return "checkpoint part of \(part.assets) \(what) in \(part.bytes) bytes is out of range" }
        }
        return nil
    }

    /// Validates one asset of a checkpoint: its key is an original's, its sizes are in range, its thumbnail key
    /// is the layout's for it (else dropped), its sidecar names it and is bounded (stamps clamped, a trash dated
    /// `learnedAt`).
    package static func checkpointAsset(_ asset: CheckpointAsset, layout: BucketLayout, now: Date, learnedAt: Date)
        -> Result<
            AssetRecord, Rejection
        >
    {
        if let problem = originalKeyProblem(asset.key, layout: layout) ?? sizeProblem(asset.size, of: "object")
            ?? textProblem(asset.etag, "ETag", max: maxETagBytes, empty: false)
            ?? textProblem(asset.contentType, "content type", max: maxContentTypeBytes)
            ?? textProblem(asset.sidecarETag, "sidecar ETag", max: maxETagBytes)
            ?? textProblem(asset.sha256, "SHA-256", max: 128)
        {
            return .failure(Rejection(problem))
        }
        var shared: SharedMetadata?
        if let sidecar = asset.sidecar {
            switch sharedMetadata(sidecar, originalKey: asset.key, now: now, learnedAt: learnedAt) {
            case .success(let state): shared = state
            case .failure(let rejection): return .failure(rejection)
            }
        }
        var valid = asset
        valid.sidecar = nil
        valid.width = min(max(0, asset.width), maxPixelSide)
        valid.height = min(max(0, asset.height), maxPixelSide)
        if asset.thumbnailKey != nil,
            asset.thumbnailKey != layout.thumbnailKey(forOriginalKey: asset.key)
                || asset.thumbnailSize.map({ sizeProblem($0, of: "thumbnail") != nil }) == true
                || textProblem(asset.thumbnailETag, "ETag", max: maxETagBytes) != nil
        {
            valid.thumbnailKey = nil
            valid.thumbnailSize = nil
            valid.thumbnailETag = nil
        }
        var record = valid.record
        shared?.apply(to: &record)
        return .success(record)
    }
}
