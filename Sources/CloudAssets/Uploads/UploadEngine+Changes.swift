import AssetStore
import Dispatch
import Essentials
import Foundation

extension UploadEngine {
    /// ``AssetLibrary/performChanges(_:)``: applies what its closure recorded.
    func performChanges(_ requests: AssetChangeRequests.Recorded) async throws -> [String] {
        let files = self.files
        let creations = requests.creations
        let staged = try await offCooperativePool {
            let results = LockedBox([Result<ImportedFile, any Error>?](repeating: nil, count: creations.count))
            let statuses = ImportedFile.statuses(of: creations.map(\.source))
            @Sendable func stage(_ index: Int) {
                let creation = creations[index]
                let result = Result {
                    try ImportedFile.stage(
                        creation.source, status: statuses[index], files: files,
                        moving: creation.options.movesFile)
                }
                results.withLock { $0[index] = result }
            }
            // Large files are read, hashed and copied on every core. Small ones go one after another on one
            // lane beside them: their cost is creating a file in the library's one folder, which the file
            // system does one at a time (two threads creating there spin on its lock: 2,000 × 16 KiB took
            // ~10 % more CPU and ~5 % more time on two threads than on one).
            let large = statuses.indices.filter { ImportedFile.isLarge(statuses[$0]) }
            let small = statuses.indices.filter { !ImportedFile.isLarge(statuses[$0]) }
            DispatchQueue.concurrentPerform(iterations: large.count + 1) { lane in
                if lane < large.count {
                    stage(large[lane])
                } else {
                    for index in small { stage(index) }
                }
            }
            let all = results.withLock { $0 }.compactMap { $0 }
            if let failure = all.first(where: { if case .failure = $0 { true } else { false } }),
                case .failure(let error) = failure
            {
                for case .success(let file) in all { file.discard() }
                throw error
            }
            // try?: every failure was thrown above; only successes remain
            return all.compactMap { try? $0.get() }
        }
        let contentChanges = requests.contentChanges
        let stagedEdits: [EditEngine.StagedEdit]
        do {
            stagedEdits = try await EditEngine.stageEdits(contentChanges, files: files)
        } catch {
            for file in staged { file.discard() }
            throw error
        }
        let device = try catalog.deviceIdentifier()
        let now = Date()
        let metadataEdits = requests.edits
        let collectionChanges = requests.collectionChanges
        var staleEditFiles: [String] = []
        let layout = configuration.layout
        var superseded: [ImportedFile] = []
        var uploadSources: [(Int64, UploadSourceHint)] = []
        let identifiers: [Int64]
        do {
            identifiers = try await catalog.performWrite { tx -> [Int64] in
                superseded = []
                uploadSources = []
                var ids: [Int64] = []
                var batchKeys = Set<String>()
                for (file, creation) in zip(staged, creations) {
                    if let existing = try tx.record(contentSHA256: file.sha256), let id = existing.id {
                        // The library holds these bytes already: no second asset, no second object.
                        ids.append(id)
                        superseded.append(file)
                        continue
                    }
                    let key = try Self.newKey(
                        for: file, options: creation.options, layout: layout, taken: &batchKeys, in: tx)
                    let id = try insertImport(file, key: key, options: creation.options, now: now, in: tx)
                    ids.append(id)
                    if let source = file.uploadSource { uploadSources.append((id, source)) }
                }
                for (id, edit) in metadataEdits {
                    try apply(edit, to: id, device: device, now: now, in: tx)
                }
                staleEditFiles = try self.edits.applyContentChanges(
                    contentChanges, staged: stagedEdits, device: device, now: now, in: tx)
                for change in collectionChanges { try change.apply(created: ids, now: now, in: tx) }
                try CollectionSharing.stampChanges(
                    of: Set(collectionChanges.map(\.collectionIdentifier)), device: device, now: now, tx)
                return ids
            }
        } catch {
            for file in staged { file.discard() }
            throw error
        }
        for (id, source) in uploadSources { queue.noteSource(source, for: id) }
        for path in staleEditFiles { unlink(path) }
        // try?: our own staged copy; one left only takes room (no row names it)
        for file in superseded { try? FileManager.default.removeItem(at: file.stagedURL) }
        for file in staged {
            // try?: the import is committed; a source left is the caller's file
            if let source = file.sourceToRemove { try? FileManager.default.removeItem(at: source) }
        }
        if (!staged.isEmpty || !metadataEdits.isEmpty || !contentChanges.isEmpty || !collectionChanges.isEmpty)
            && configuration.startsBackgroundTransfers
        {
            queue.wake(self)
        }
        return identifiers.map(String.init)
    }

    /// Inserts an imported asset and moves its staged file to the asset's name. Under the write transaction.
    private func insertImport(
        _ file: ImportedFile, key: String, options: AssetCreationOptions, now: Date, in tx: StoreTransaction
    ) throws -> Int64 {
        let metadata = file.metadata
        // Until the bucket gives it an ETag the asset carries a local one, derived from its content.
        let localETag = "local-" + file.sha256.prefix(32)
        var record = AssetRecord(
            key: key, size: file.size, etag: localETag, lastModified: AssetRecord.notListedYet,
            contentType: metadata.contentType, creationDate: options.creationDate ?? metadata.creationDate,
            modificationDate: now, mediaType: metadata.mediaType, pixelWidth: metadata.pixelWidth,
            pixelHeight: metadata.pixelHeight, orientation: metadata.orientation)
        record.uploadState = .pendingUpload
        record.contentSHA256 = file.sha256
        record.location = metadata.location
        record.duration = metadata.duration
        record.videoCodec = metadata.videoCodec
        record.frameRate = metadata.frameRate
        // Inserted first as a placeholder to get its identifier, which names the file.
        var placeholder = record
        placeholder.uploadState = .uploaded
        let id = try tx.insert(placeholder)
        let destination = files.original(id: id, key: key)
        guard rename(file.stagedURL.path, destination.path) == 0 else {
            throw AssetLibraryError.cannotImport(
                path: file.renamedFrom?.path ?? file.stagedURL.path,
                reason: "cannot move it into the library: \(String(cString: strerror(errno)))")
        }
        do {
            try tx.update(id) { r in
                r = record
                r.id = id
                r.availability = .full
                r.localFilePath = files.storedPath(ofOriginal: destination)
                r.verifiedSize = file.size
                r.verifiedETag = localETag
            }
        } catch {
            _ = rename(destination.path, file.stagedURL.path)
            throw error
        }
        telemetry.transition("imported", asset: id, key: key, ["uploadState": "pendingUpload", "availability": "full"])
        return id
    }

    /// Applies one shared-property edit, stamped for the merge. Under the write transaction.
    private func apply(
        _ edit: AssetChangeRequests.Edit, to id: Int64, device: String, now: Date, in tx: StoreTransaction
    ) throws {
        guard let record = try tx.record(id) else { throw AssetLibraryError.noSuchAsset(localIdentifier: String(id)) }
        var shared = SharedMetadata(record: record)
        switch edit {
        case .favorite(let value): shared.change(.favorite, device: device, now: now) { $0.isFavorite = value }
        case .hidden(let value): shared.change(.hidden, device: device, now: now) { $0.isHidden = value }
        case .title(let value): shared.change(.title, device: device, now: now) { $0.title = value }
        case .keywords(let value): shared.change(.keywords, device: device, now: now) { $0.keywords = value }
        case .trash:
            guard !record.isTrashed else { return }
            shared.change(.trashed, device: device, now: now) { $0.trashedDate = now }
            // The stamp's time, as every library reads it from the sidecar: all hold the same date.
            shared.trashedDate = shared.stamps[.trashed].map { SharedMetadata.date(ofStamp: $0.time) }
        case .restore:
            guard record.isTrashed else { return }
            shared.change(.trashed, device: device, now: now) { $0.trashedDate = nil }
        }
        try tx.update(id) { r in
            shared.apply(to: &r)
            r.metadataDirty = true
        }
    }

    /// The key a new import gets: the requested path, or `<yyyy>/<mm>/<name>` of its creation date (UTC), under
    /// the originals prefix; when another asset (or another import of this change) has it, `-<8 hex of the
    /// content hash>` goes before the extension, then a counter.
    static func newKey(
        for file: ImportedFile, options: AssetCreationOptions, layout: BucketLayout, taken: inout Set<String>,
        in tx: StoreTransaction
    ) throws -> String {
        let path: String
        if let requested = options.bucketPath, !requested.isEmpty {
            path = requested.split(separator: "/").filter { $0 != "." && $0 != ".." }.joined(separator: "/")
        } else {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let parts = calendar.dateComponents(
                [.year, .month], from: options.creationDate ?? file.metadata.creationDate)
            let name = file.sourceName
            path = String(format: "%04d/%02d/", parts.year ?? 1970, parts.month ?? 1) + Self.safeObjectName(name)
        }
        let (stem, ext) = Self.splitExtension(path)
        let tag = String(file.sha256.prefix(8))
        for attempt in 0...1000 {
            let candidate =
                switch attempt {
                case 0: path
                case 1: stem + "-" + tag + ext
                default: stem + "-" + tag + "-\(attempt)" + ext
                }
            let key = layout.originalsPrefix + candidate
            if !taken.contains(key), try tx.record(key: key) == nil {
                taken.insert(key)
                return key
            }
        }
        throw AssetLibraryError.cannotImport(path: path, reason: "no free name in the bucket")
    }

    /// A file name as an object name: control characters and separators replaced, never empty.
    static func safeObjectName(_ name: String) -> String {
        let cleaned = String(
            name.unicodeScalars.map {
                $0.properties.generalCategory == .control || $0 == "/" || $0 == "\\" ? "_" : Character($0)
            })
        return cleaned.isEmpty || cleaned == "." || cleaned == ".." ? "asset" : cleaned
    }

    static func splitExtension(_ path: String) -> (stem: String, ext: String) {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/"), dot != path.startIndex,
            path[path.index(before: dot)] != "/"
        else { return (path, "") }
        return (String(path[..<dot]), String(path[dot...]))
    }
}
