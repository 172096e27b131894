import AssetStore
import Essentials
import Foundation
import S3Transfer

#if canImport(Glibc)
    import Glibc
#endif

extension EditEngine {
    /// Sends every edit revision made here to the bucket, oldest first: the rendered file (resumable, created
    /// only if absent), its thumbnail, then the manifest — the commit point other libraries read — and a journal
    /// change. A revert, once its marker is in the bucket, deletes the rendered versions of the revisions it
    /// superseded that this library knows. Revisions of an import wait until its original is up (its key is
    /// final then). Failures leave the revision for the next round. A revision superseded here before it went up,
    /// whose rendering is gone, is settled without a request (forgotten: no other library ever saw it).
    ///
    /// One pass at a time per library (the background worker's, a sync's, a wait's): the pending revisions are
    /// read under the gate, so a revert's pass starts only once an edit an earlier pass was sending is in the
    /// bucket and marked shared — and deletes it.
    func shareEditRevisions() async {
        // try?: unbound: nothing may be sent; the open reported why
        guard let remote, network.policy != .offline, (try? remote.checkBinding()) != nil else { return }
        let shared: Bool =
            // try?: the gate's body does not throw; a cancelled wait sends nothing
            (try? await shareGate.run {
                // try?: unreadable now: the revisions stay unshared for the next round
                guard let pending = try? catalog.store.unsharedEditRevisions(), !pending.isEmpty else { return false }
                var shared = false
                for revision in pending where !Task.isCancelled && !catalog.isClosed {
                    do {
                        if try await share(revision, remote: remote) { shared = true }
                    } catch {
                        telemetry.failed(
                            "edit not sent; it stays unshared for the next round", asset: revision.assetID,
                            error: error)
                    }
                }
                return shared
            }) ?? false
        if shared { await journal.flush() }
    }

    private func share(_ stored: StoredEditRevision, remote: LibraryRemote) async throws -> Bool {
        let id = stored.assetID
        guard let record = try catalog.store.record(id: id) else { return false }
        guard record.uploadState == .uploaded, var manifest = EditManifest.decode(stored.manifest),
            let folder = configuration.layout.editsFolder(forOriginalKey: record.key)
        else { return false }
        let bucket = configuration.bucket
        manifest.original = record.key
        if let unsent = manifest.rendered, unsent.key.isEmpty {
            var rendered = unsent
            let file = files.rendered(id: id, revision: stored.revision)
            if record.editRevision != stored.revision, LocalFiles.regularFileSize(file.path) == nil {
                // Superseded here before it ever reached the bucket (two edits, then a sync), and its rendering
                // went with it: no library has seen it, none ever will. It is settled, not pending: forgotten.
                try await catalog.performWrite { tx in try tx.deleteEditRevisions(of: id, revisions: [stored.revision])
                }
                return false
            }
            rendered.key = folder + stored.revision + ".jpg"
            var request = UploadRequest(
                bucket: bucket, key: rendered.key, file: file, contentType: "image/jpeg",
                metadata: ["sha256": rendered.sha256, "original": record.key])
            request.createOnly = true
            request.isUserRequest = false
            let revision = stored.revision
            let outcome = try await remote.uploader.upload(
                request, resumingFrom: stored.uploadCheckpoint.flatMap(UploadCheckpoint.decode),
                checkpoint: { checkpoint in
                    try self.catalog.setEditUploadCheckpoint(checkpoint?.encoded, assetID: id, revision: revision)
                })
            switch outcome {
            case .created(let etag, _):
                rendered.etag = etag
            case .keyExists(let head):
                // An earlier attempt of this very revision finished before the process stopped.
                guard head.metadata["sha256"] == rendered.sha256 else { return false }
                rendered.etag = head.etag
            }
            manifest.rendered = rendered
            let thumbnailKey = folder + stored.revision + ".thumb.jpg"
            // try?: no rendered thumbnail: the manifest goes without one
            if let thumbnail = try? LocalFile.read(files.renderedThumbnail(id: id, revision: stored.revision)) {
                try await Self.putIfAbsent(
                    remote: remote, bucket: bucket, key: thumbnailKey, body: thumbnail, type: "image/jpeg")
                manifest.thumbnailKey = thumbnailKey
            }
        }
        try await Self.putIfAbsent(
            remote: remote, bucket: bucket, key: folder + stored.revision + ".json", body: manifest.encodedData,
            type: "application/json")
        var superseded: [(revision: String, manifest: EditManifest)] = []
        try await catalog.performWrite { tx in
            try tx.markEditRevisionShared(assetID: id, revision: stored.revision, manifest: manifest.encoded)
            try tx.appendJournalChange(JournalChange.edit(key: record.key, manifest: manifest).encoded)
            if manifest.reverted {
                superseded = try tx.editRevisions(of: id).filter {
                    $0.isShared && $0.revision < stored.revision
                }.compactMap { old in EditManifest.decode(old.manifest).map { (old.revision, $0) } }
            }
        }
        if manifest.reverted { await deleteRevisions(superseded, of: id, folder: folder, remote: remote) }
        return true
    }

    /// Writes an object of a revision unless the key holds one: a revision's objects are immutable, so an object
    /// already there was written by an earlier attempt of the same revision.
    private static func putIfAbsent(remote: LibraryRemote, bucket: String, key: String, body: Data, type: String)
        async throws
    {
        do {
            _ = try await remote.client.putObject(
                bucket: bucket, key: key, body: body, contentType: type, condition: .keyAbsent)
        } catch {
            guard error == .preconditionFailed else { throw error }
        }
    }

    /// Deletes superseded revisions from the bucket (rendered file, thumbnail, manifest) and forgets them here.
    /// A rendered file another revision still names (a restored one) is kept. Only keys directly in the asset's own
    /// edits folder (`folder`) are ever deleted, whatever a manifest names.
    private func deleteRevisions(
        _ revisions: [(revision: String, manifest: EditManifest)], of id: Int64, folder: String, remote: LibraryRemote
    ) async {
        guard !revisions.isEmpty else { return }
        let bucket = configuration.bucket
        // try?: unreadable: nothing counts as kept; deletion stays conditional
        let remaining = ((try? catalog.store.editRevisions(of: id)) ?? []).filter { kept in
            !revisions.contains { $0.revision == kept.revision }
        }
        let stillNamed = Set(remaining.compactMap { EditManifest.decode($0.manifest)?.rendered?.key })
        var forgotten: [String] = []
        for (revision, manifest) in revisions {
            var keys = [folder + revision + ".json"]
            if let key = manifest.rendered?.key, Self.isDirectlyIn(folder, key), !stillNamed.contains(key) {
                keys.append(key)
            }
            if let key = manifest.thumbnailKey, key.hasPrefix(folder + revision), Self.isDirectlyIn(folder, key) {
                keys.append(key)
            }
            var ok = true
            for key in keys {
                do {
                    try await remote.client.deleteObject(bucket: bucket, key: key)
                } catch {
                    if error != .noSuchKey { ok = false }
                }
            }
            if ok { forgotten.append(revision) }
        }
        do {
            try await catalog.performWrite { tx in try tx.deleteEditRevisions(of: id, revisions: forgotten) }
        } catch {
            // Their objects are gone from the bucket: rows kept would be offered again as revisions.
            telemetry.failed(
                "could not forget deleted edit revisions", asset: id, count: forgotten.count, error: error)
        }
    }

    /// Whether `key` names an object directly in `folder` (no deeper, no `..`).
    static func isDirectlyIn(_ folder: String, _ key: String) -> Bool {
        guard key.hasPrefix(folder), BucketInput.keyProblem(key) == nil else { return false }
        let name = key.utf8.dropFirst(folder.utf8.count)
        return !name.isEmpty && !name.contains(UInt8(ascii: "/"))
    }

    // MARK: Adopting other libraries' edits

    /// Downloads the thumbnails of edit revisions about to be adopted (before the transaction that announces
    /// them, so the change arrives with its thumbnail). Revisions of unknown assets, reverts and revisions whose
    /// thumbnail is already here are skipped; a failed download leaves the edit without a thumbnail.
    func prefetchEditThumbnails(_ manifests: [EditManifest], remote: LibraryRemote) async {
        let bucket = configuration.bucket
        var jobs: [(key: String, file: URL)] = []
        for manifest in manifests where !manifest.reverted {
            // try?: no asset (yet): its thumbnail is fetched when it is needed
            guard let key = manifest.thumbnailKey, let record = try? catalog.store.record(key: manifest.original),
                let id = record.id
            else { continue }
            let file = files.renderedThumbnail(id: id, revision: manifest.revision)
            if LocalFiles.regularFileSize(file.path) == nil { jobs.append((key, file)) }
        }
        await concurrentForEach(jobs, limit: configuration.thumbnailConcurrency) { job in
            guard
                // try?: a prefetch: what fails is fetched when it is needed
                let (data, _) = try? await remote.client.getObject(
                    bucket: bucket, key: job.key, maxBytes: BucketInput.maxThumbnailBytes) ?? nil
            else { return }
            // try?: a prefetch: what fails is fetched when it is needed
            try? LocalFile.write(data, to: job.file)
        }
    }

    /// Records another library's revision and makes the latest known revision of the asset current (a revert:
    /// the original). Under the write transaction. Returns whether the asset row changed; files of revisions no
    /// longer current are added to `removing`.
    static func adopt(_ manifest: EditManifest, _ tx: StoreTransaction, files: LocalFiles, removing: inout [String])
        throws -> Bool
    {
        guard let record = try tx.record(key: manifest.original), let id = record.id else { return false }
        try tx.insertEditRevision(
            StoredEditRevision(assetID: id, revision: manifest.revision, manifest: manifest.encoded, isShared: true))
        let known = try tx.editRevisions(of: id)
        guard let latest = known.last, let latestManifest = EditManifest.decode(latest.manifest) else { return false }
        let current = latestManifest.reverted ? nil : latest.revision
        guard current != record.editRevision else { return false }
        if let previous = record.editRevision { removing += files.editPaths(id: id, revision: previous) }
        _ = try tx.update(id) { r in
            r.editRevision = current
            r.editAvailability = current.map { files.editAvailability(id: id, revision: $0) } ?? .cloudOnly
        }
        return true
    }

    /// Reads the edit revisions in the bucket this library does not know (one listing of the edits prefix, a GET
    /// per unknown manifest, each read only up to ``BucketInput/maxDocumentBytes``) and adopts them in one
    /// transaction. Part of a full sync and of a bootstrap from a checkpoint; incremental syncs learn of edits from
    /// the journal. A manifest that fails ``BucketInput/editManifest(_:expectedOriginal:layout:)`` (another
    /// asset's original, files outside the asset's edits folder) is left out.
    /// - Returns: How many manifests were read.
    func pullEdits(remote: LibraryRemote) async throws -> Int {
        let layout = configuration.layout
        var listed: [String: [String]] = [:]  // original key → revisions
        for try await page in remote.client.listAllObjects(bucket: configuration.bucket, prefix: layout.editsPrefix) {
            for object in page.objects {
                guard let (original, revision) = layout.editManifest(key: object.key) else { continue }
                listed[original, default: []].append(revision)
            }
        }
        guard !listed.isEmpty else { return 0 }
        var unknown: [(key: String, original: String)] = []
        for (original, revisions) in listed {
            guard let record = try catalog.store.record(key: original), let id = record.id else { continue }
            let known = Set(try catalog.store.editRevisions(of: id).map(\.revision))
            guard let folder = layout.editsFolder(forOriginalKey: original) else { continue }
            for revision in revisions where !known.contains(revision) {
                unknown.append((folder + revision + ".json", original))
            }
        }
        guard !unknown.isEmpty else { return 0 }
        let bucket = configuration.bucket
        let manifests = try await concurrentMap(unknown, limit: configuration.maxConnections) { job -> EditManifest? in
            let (key, original) = job
            guard
                // try?: a prefetch: what fails is fetched when it is needed
                let (data, _) = try? await remote.client.getObject(
                    bucket: bucket, key: key, maxBytes: BucketInput.maxDocumentBytes) ?? nil
            else { return nil }
            // try?: refused input is absent, as every refused bucket read
            return try? BucketInput.editManifest(data, expectedOriginal: original, layout: layout).get()
        }.compactMap { $0 }
        await prefetchEditThumbnails(manifests, remote: remote)
        let ordered = manifests.sorted { $0.revision < $1.revision }
        let files = self.files
        try await catalog.performWrite { tx in
            var removing: [String] = []
            for manifest in ordered { _ = try Self.adopt(manifest, tx, files: files, removing: &removing) }
            for path in removing { unlink(path) }
        }
        return manifests.count
    }
}
