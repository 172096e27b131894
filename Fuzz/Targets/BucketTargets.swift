import AssetStore
import CloudAssets
import Foundation

/// What another library, another tool or anyone with write access puts in the bucket: journal entries, checkpoint
/// manifests and parts, sidecars, edit manifests. Each reader must refuse what breaks the rules of `BucketInput`
/// with a rejection, never trap, and what it accepts must keep those rules.
extension FuzzCatalog {
    static let layout = BucketLayout()
    /// The service's clock in these targets: stamps later than it (plus the lead) must come back clamped.
    static let now = Date(timeIntervalSince1970: 1_780_000_000)

    static let journalEntry = FuzzTarget(
        name: "journal-entry",
        summary: "BucketInput.journalEntry; accepted changes keep the key/size/stamp rules and re-encode to the same",
        maxLength: 8192,
        seeds: {
            let put = JournalChange.put(
                key: "originals/2026/05/a.jpg", size: 123, etag: "d41d8cd98f00b204e9800998ecf8427e",
                contentType: "image/jpeg", metadata: ["creation-date": "2026-05-01T12:00:00Z", "pixel-width": "4032"],
                thumbnail: ThumbnailObject(key: "thumbnails/2026/05/a.jpg.jpg", size: 5012, etag: "x"))
            let delete = JournalChange.delete(key: "originals/b.jpg", etag: "e")
            let sidecar = SharedMetadata.Sidecar(
                original: "originals/c.jpg", sha256: nil,
                properties: [
                    "favorite": .init(value: .flag(true), time: 1_763_900_000_000, device: "dev"),
                    "keywords": .init(value: .list(["sea", "2026"]), time: 1_763_900_000_001, device: "dev"),
                ])
            let metadata = JournalChange.metadata(key: "originals/c.jpg", sidecar: sidecar, sidecarETag: "s")
            let edit = JournalChange.edit(key: "originals/c.jpg", manifest: sampleManifest)
            let album = "0a1b2c3d-0000-4000-8000-000000000001"
            let document = JournalChange.collection(key: layout.collectionKey(album), etag: "c")
            let delta = JournalChange.collection(
                key: layout.collectionDeltaKey(album, name: "1763900000000-0123456789abcdef"), etag: "d")
            return [
                JournalEntry.encoded(
                    device: "dev", changes: [put, delete, metadata, edit, document, delta].map(\.encoded)),
                JournalEntry.encoded(device: "dev", changes: ["{\"op\":\"rename\",\"key\":\"originals/x\"}"]),
            ].map { Array($0) }
        },
        check: { bytes throws(FuzzFailure) in
            let data = Data(bytes)
            if case .success(let entry) = BucketInput.journalEntry(data, layout: layout, now: now, learnedAt: now) {
                for change in entry.changes {
                    if case .collection(let id, let key, _) = change {
                        // The collection's document, or one of its deltas (a name as libraries make them).
                        let delta = key.dropFirst(layout.collectionDeltaPrefix(id).count).dropLast(5)
                        try expect(
                            key == layout.collectionKey(id)
                                || (key.hasPrefix(layout.collectionDeltaPrefix(id)) && key.hasSuffix(".json")
                                    && CollectionDocument.isDeltaName(delta)
                                    && key == layout.collectionDeltaKey(id, name: String(delta))),
                            "accepted a collection change of key \(key)")
                        continue
                    }
                    try expect(
                        BucketInput.originalKeyProblem(change.key, layout: layout) == nil,
                        "accepted a change of key \(change.key.debugDescription)")
                    switch change {
                    case .put(_, let size, let etag, _, _, let thumbnail):
                        try expect((0...BucketInput.maxObjectSize).contains(size) && !etag.isEmpty, "put out of range")
                        if let thumbnail {
                            try expect(
                                thumbnail.key == layout.thumbnailKey(forOriginalKey: change.key),
                                "a put's thumbnail \(thumbnail.key) is not its original's")
                        }
                    case .metadata(_, let state, _):
                        try stampsClamped(state)
                    case .edit(let manifest):
                        try editKeysInFolder(manifest)
                    case .delete, .collection: break
                    }
                }
                // The outbox's hand-written encoding of the accepted puts and deletes reads back the same.
                let again = entry.changes.compactMap(journalChange)
                let reread = BucketInput.journalEntry(
                    JournalEntry.encoded(device: "d", changes: again.map(\.encoded)), layout: layout, now: now,
                    learnedAt: now)
                guard case .success(let second) = reread else { throw FuzzFailure("re-encoded entry refused") }
                try expect(
                    second.changes.compactMap(journalChange).map(\.encoded) == again.map(\.encoded),
                    "accepted changes do not survive a re-encoding")
            }
            try handEncodingMatchesDecoder(bytes)
        })

    /// The change a validated put or delete came from (the others carry documents checked by their own targets).
    private static func journalChange(_ change: BucketInput.Change) -> JournalChange? {
        switch change {
        case .put(let key, let size, let etag, let contentType, let metadata, let thumbnail):
            .put(key: key, size: size, etag: etag, contentType: contentType, metadata: metadata, thumbnail: thumbnail)
        case .delete(let key, let etag): .delete(key: key, etag: etag)
        case .metadata, .edit, .collection: nil
        }
    }

    /// `JournalChange.encoded` writes JSON by hand for puts and deletes: for any texts (any Unicode, quotes,
    /// controls) JSONDecoder must read back exactly the values written.
    private static func handEncodingMatchesDecoder(_ bytes: [UInt8]) throws(FuzzFailure) {
        var reader = FuzzReader(bytes)
        var metadata: [String: String] = [:]
        for _ in 0..<Int(reader.byte() % 4) { metadata[reader.string(upTo: 24)] = reader.string(upTo: 40) }
        let size = Int64(bitPattern: reader.uint64())
        let change = JournalChange.put(
            key: reader.string(upTo: 64), size: size, etag: reader.string(upTo: 40),
            contentType: reader.byte() & 1 == 0 ? nil : reader.string(upTo: 20), metadata: metadata)
        let json = Data(change.encoded.utf8)
        guard let decoded = try? JSONDecoder().decode(JournalChange.self, from: json) else {
            throw FuzzFailure("the hand-written JSON \(change.encoded.debugDescription) does not decode")
        }
        try expect(
            decoded.key == change.key && decoded.etag == change.etag && decoded.size == change.size
                && decoded.contentType == change.contentType && decoded.metadata == change.metadata,
            "hand-written JSON \(change.encoded.debugDescription) decodes to other values")
    }

    static let checkpointPart = FuzzTarget(
        name: "checkpoint-part",
        summary: "A checkpoint part's lines (CheckpointAsset codec, BucketInput.checkpointAsset); lines round-trip",
        maxLength: 8192,
        seeds: {
            var record = AssetRecord(
                key: "originals/2026/a\tb\\c.jpg", size: 10, etag: "e", lastModified: now, contentType: "image/jpeg",
                creationDate: now, modificationDate: now, mediaType: .image, pixelWidth: 4032, pixelHeight: 3024,
                orientation: 6, thumbnailKey: "thumbnails/2026/a\tb\\c.jpg.jpg", thumbnailSize: 10,
                thumbnailETag: "t")
            record.isFavorite = true
            record.metadataStamps = "favorite:1763900000000:dev"
            let lines = [CheckpointAsset(record).line, CheckpointAsset(record).line.prefix(40)]
            return [Array(lines[0]), Array(lines.joined(separator: Data([0x0A])))]
        },
        check: { bytes throws(FuzzFailure) in
            let part = CheckpointManifest.Part(key: "checkpoints/0000000000000/dev/part-00000.z", assets: 0, bytes: 0)
            if let read = CheckpointPartReader.read(Data(bytes), part: part, layout: layout, now: now, learnedAt: now) {
                try expect(read.records.count + read.skipped.count == read.lines, "lines lost between the counts")
                try expect(
                    read.records.allSatisfy { BucketInput.originalKeyProblem($0.key, layout: layout) == nil },
                    "accepted an asset whose key is not an original's")
            }
            for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true) {
                guard let asset = CheckpointAsset(line: Data(line)[...]) else { continue }
                let written = asset.line
                guard let again = CheckpointAsset(line: written[...]) else {
                    throw FuzzFailure("a parsed line, written again, does not parse: \(written as NSData)")
                }
                try expect(again.line == written, "a line does not survive parse → write → parse")
                _ = BucketInput.checkpointAsset(asset, layout: layout, now: now, learnedAt: now)
            }
            // zlib both ways: what compresses inflates to the same bytes; garbage inflates to nothing.
            let data = Data(bytes)
            try expect(Zlib.uncompress(Zlib.compress(data), size: data.count) == data, "zlib round trip")
            _ = Zlib.uncompress(data, size: bytes.count * 4)
        })

    static let checkpointManifest = FuzzTarget(
        name: "checkpoint-manifest",
        summary: "BucketInput.checkpointManifest; accepted parts lie in their slot, counts add up, times clamped",
        maxLength: 4096,
        seeds: {
            let manifest = """
                {"format":1,"device":"dev","time":1763900000000,"lastFullSync":1763800000000,"assets":3,\
                "parts":[{"key":"checkpoints/1763900000000/dev/part-00000.z","assets":3,"bytes":400}]}
                """
            return [Array(manifest.utf8)]
        },
        check: { bytes throws(FuzzFailure) in
            let slot = "checkpoints/1763900000000/"
            guard case .success(let manifest) = BucketInput.checkpointManifest(Data(bytes), slot: slot, now: now)
            else { return }
            try expect(manifest.parts.allSatisfy { $0.key.hasPrefix(slot) }, "a part outside its slot")
            try expect(manifest.parts.allSatisfy { BucketInput.keyProblem($0.key) == nil }, "a part's key is unsafe")
            try expect(manifest.assets == manifest.parts.reduce(0) { $0 + $1.assets }, "counts do not add up")
            let limit = BucketInput.milliseconds(now)
            try expect(
                (0...limit).contains(manifest.time) && (0...limit).contains(manifest.lastFullSync),
                "a time beyond the service's clock")
        })

    static let sidecar = FuzzTarget(
        name: "sidecar",
        summary: "BucketInput.sidecar; accepted states have clamped stamps and survive sidecar → bytes → state",
        maxLength: 4096,
        seeds: {
            let sidecar = SharedMetadata.Sidecar(
                original: "originals/c.jpg", sha256: "ab",
                properties: [
                    "favorite": .init(value: .flag(true), time: 1_763_900_000_000, device: "dev"),
                    "title": .init(value: .text("Beach \"\\\n"), time: 1_763_900_000_000, device: "dev"),
                    "keywords": .init(value: .list(["sea", "Sea ", "2026"]), time: 1_763_900_000_001, device: "d"),
                    "trashed": .init(value: .flag(true), time: 9_999_999_999_999, device: "dev"),
                    "hidden": .init(value: .none, time: 1, device: "dev"),
                ])
            return [Array(SharedMetadata.encode(sidecar))]
        },
        check: { bytes throws(FuzzFailure) in
            let original = "originals/c.jpg"
            guard
                case .success(let state) = BucketInput.sidecar(
                    Data(bytes), originalKey: original, now: now, learnedAt: now)
            else { return }
            try stampsClamped(state)
            let written = SharedMetadata.encode(state.sidecar(originalKey: original, sha256: nil))
            guard
                case .success(let again) = BucketInput.sidecar(
                    written, originalKey: original, now: now, learnedAt: now)
            else { throw FuzzFailure("the sidecar of an accepted state is refused") }
            try expect(again == state, "state → sidecar → state changes it")
        })

    /// An album's shared state as another library (or anyone) wrote it.
    static let collectionDocument = FuzzTarget(
        name: "collection-document",
        summary:
            "BucketInput.collectionDocument; accepted states name originals only, keep their bytes, merge lawfully",
        maxLength: 4096,
        seeds: {
            let id = "0a1b2c3d-0000-4000-8000-000000000001"
            var document = CollectionDocument(
                id: id, kind: .album, title: "Rome \"\\ ä", parent: "0a1b2c3d-0000-4000-8000-000000000002",
                stamp: .init(time: 1_763_900_000_000, device: "dev"))
            document.members["originals/a.jpg"] = .init(
                added: .init(time: 1, device: "a"), removed: .init(time: 2, device: "b"), position: 1 << 20,
                placed: .init(time: 1, device: "a"))
            document.members["originals/b c.jpg"] = .init(
                added: .init(time: 3, device: "a"), removed: nil, position: -5,
                placed: .init(time: 9_999_999_999_999, device: "z"))
            var folder = CollectionDocument(
                id: id, kind: .folder, title: "Trips", parent: nil, stamp: .init(time: 5, device: "d"))
            folder.deleted = .init(time: 6, device: "d")
            return [Array(document.encoded), Array(folder.encoded)]
        },
        check: { bytes throws(FuzzFailure) in
            let id = "0a1b2c3d-0000-4000-8000-000000000001"
            guard
                case .success(let document) = BucketInput.collectionDocument(
                    Data(bytes), id: id, layout: layout, now: now)
            else { return }
            let limit = BucketInput.milliseconds(now.addingTimeInterval(BucketInput.maxStampLead))
            for (key, member) in document.members {
                try expect(BucketInput.originalKeyProblem(key, layout: layout) == nil, "accepted member \(key)")
                try expect(
                    [member.added, member.placed].allSatisfy { $0.time <= limit }
                        && (member.removed?.time ?? 0) <= limit, "a member's stamp past the clamp")
            }
            try expect(document.kind == .album || document.members.isEmpty, "a folder with members")
            guard
                case .success(let again) = BucketInput.collectionDocument(
                    document.encoded, id: id, layout: layout, now: now)
            else { throw FuzzFailure("the bytes of an accepted document are refused") }
            try expect(again == document, "document → bytes → document changes it")
            try expect(document.merged(with: document) == document, "merging a document with itself changes it")
        })

    static let editManifest = FuzzTarget(
        name: "edit-manifest",
        summary: "BucketInput.editManifest; accepted files lie in the asset's own edits folder; JSON round trip",
        maxLength: 4096,
        seeds: { [Array(sampleManifest.encodedData)] },
        check: { bytes throws(FuzzFailure) in
            guard
                case .success(let manifest) = BucketInput.editManifest(
                    Data(bytes), expectedOriginal: "originals/c.jpg", layout: layout)
            else { return }
            try editKeysInFolder(manifest)
            try expect(EditManifest.decode(manifest.encodedData) == manifest, "manifest → JSON → manifest changes it")
        })

    static let sampleManifest = EditManifest(
        original: "originals/c.jpg", revision: "1764160000000-6f1", reverted: false,
        adjustment: .init(formatIdentifier: "com.cloudassets.basic", formatVersion: "1", data: Data("{}".utf8)),
        basedOn: nil,
        rendered: .init(
            key: "edits/c.jpg/1764160000000-6f1.jpg", size: 10, etag: "e", sha256: "ab", pixelWidth: 30,
            pixelHeight: 40),
        thumbnailKey: "edits/c.jpg/1764160000000-6f1.thumb.jpg")

    private static func stampsClamped(_ state: SharedMetadata) throws(FuzzFailure) {
        let limit = BucketInput.milliseconds(now.addingTimeInterval(BucketInput.maxStampLead))
        try expect(state.stamps.values.allSatisfy { $0.time <= limit }, "a stamp later than the clock allows")
    }

    private static func editKeysInFolder(_ manifest: EditManifest) throws(FuzzFailure) {
        guard let folder = layout.editsFolder(forOriginalKey: manifest.original) else {
            throw FuzzFailure("accepted an edit of \(manifest.original.debugDescription), which has no edits folder")
        }
        for key in [manifest.rendered?.key, manifest.thumbnailKey].compactMap({ $0 }) {
            let name = key.dropFirst(folder.count)
            try expect(
                key.hasPrefix(folder) && !name.isEmpty && !name.contains("/") && BucketInput.keyProblem(key) == nil,
                "accepted a file \(key.debugDescription) outside \(folder)")
        }
    }
}
