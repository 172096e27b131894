import AssetStore
import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension OriginalsCache {

    /// Makes every asset consistent with the files on disk: `full` only with its verified file, `partial`
    /// ranges only if their bytes are there, thumbnails only if present; removes orphan files; keeps `.part`
    /// files of known assets so their downloads resume. Runs in one transaction (one change, only if something
    /// was repaired). Called by ``init(configuration:)``.
    ///
    /// - Parameter afterCleanClose: The last library to have the folder open closed it, idle (``CleanClose``): no
    ///   crash state can be there, so only the imports not uploaded yet (their file is the only copy: one removed
    ///   by hand meanwhile is not coming back) and the partial originals (few; a read trusts its recorded ranges)
    ///   are checked. A full original or a thumbnail removed by hand while the library was closed is found when it
    ///   is used: a request checks the original's file and downloads it again; a thumbnail found missing is
    ///   forgotten, and fetched again by the next sync. Opening then costs nothing per local original or
    ///   thumbnail (the scan costs ~26 µs each: seconds for a library with a million thumbnails).
    func recoverLocalState(afterCleanClose: Bool = false) async throws -> AssetLibrary.RecoveryReport {
        // A bulk load (first listing, bootstrap) killed before it ended left the catalog's indexes suspended.
        try await catalog.restoreSuspendedIndexes()
        // The scan reads the file system (a stat per local file): a thread of its own, not the cooperative pool.
        return try await offCooperativePool { [self] in try repairLocalState(afterCleanClose: afterCleanClose) }
    }

    /// ``recoverLocalState(afterCleanClose:)``'s repairs, on the calling thread.
    private func repairLocalState(afterCleanClose: Bool) throws -> AssetLibrary.RecoveryReport {
        try files.createFolders()
        var report = AssetLibrary.RecoveryReport()
        let fm = FileManager.default
        let size = LocalFiles.regularFileSize
        // Only assets that claim something local can disagree with the disk: a cloud-only asset has no file to
        // miss. (Reading every row made opening a million-asset library take seconds.)
        let ids =
            afterCleanClose
            ? try Array(
                Set(
                    catalog.store.ids(inUploadStates: [.pendingUpload, .uploading, .uploadFailed])
                        + catalog.store.fetchIDs(StoreQuery(predicate: .availability([.partial])))))
            : try catalog.store.fetchIDs(StoreQuery(predicate: .availability([.full, .partial, .thumbnail])))
        let records = try catalog.store.records(ids: ids)

        var repairs: [Int64: (inout AssetRecord) -> Void] = [:]
        var lostImports: [Int64] = []
        for record in records {
            guard let id = record.id else { continue }
            var fixes: [(inout AssetRecord) -> Void] = []
            var thumbnailPresent = record.thumbnailPresent
            if record.thumbnailPresent, size(files.thumbnail(id: id).path) == nil {
                thumbnailPresent = false
                report.thumbnailsLost += 1
                fixes.append { $0.thumbnailPresent = false }
            }
            let fallback: StoredAvailability = thumbnailPresent ? .thumbnail : .cloudOnly
            switch record.availability {
            case .full:
                let expected = files.original(id: id, key: record.key)
                let stored = files.storedPath(ofOriginal: expected)
                if size(expected.path) != record.verifiedSize, record.uploadState != .uploaded {
                    // An import whose only copy is gone (removed by hand while the library was closed): nothing
                    // can bring it back, and an asset that is neither local nor in the bucket cannot stay.
                    report.importsLost += 1
                    lostImports.append(id)
                } else if size(expected.path) != record.verifiedSize {
                    report.fullDowngraded += 1
                    fixes.append { r in
                        r.availability = fallback
                        r.localFilePath = nil
                        r.verifiedSize = nil
                        r.verifiedETag = nil
                    }
                } else if record.localFilePath != stored {
                    // An absolute path written by an earlier version: the file is where the name says.
                    fixes.append { $0.localFilePath = stored }
                }
            case .partial:
                let end = record.partialRanges.ranges.last?.upperBound ?? 0
                if (size(files.partial(id: id).path) ?? -1) < end {
                    report.partialDowngraded += 1
                    fixes.append { r in
                        r.availability = fallback
                        r.partialRanges = ByteRangeSet()
                        r.partialETag = nil
                    }
                }
            case .thumbnail:
                if !thumbnailPresent { fixes.append { $0.availability = .cloudOnly } }
            case .cloudOnly:
                break
            }
            if !fixes.isEmpty {
                repairs[id] = { r in for fix in fixes { fix(&r) } }
            }
        }
        // Edited assets whose rendered version is gone from disk show their thumbnail (or nothing) until it is
        // fetched again.
        for id in try afterCleanClose ? [] : catalog.store.idsWithLocalRenderedVersion() where repairs[id] == nil {
            guard let record = try catalog.store.record(id: id), let revision = record.editRevision,
                size(files.rendered(id: id, revision: revision).path) == nil
            else { continue }
            let state = files.editAvailability(id: id, revision: revision, rendered: false)
            repairs[id] = { $0.editAvailability = state }
        }
        if !repairs.isEmpty || !lostImports.isEmpty {
            try catalog.performWrite { tx in
                for (id, fix) in repairs { _ = try tx.update(id, fix) }
                for id in lostImports { try tx.delete(id) }
            }
        }
        // After a clean close no file can be left over from an interrupted write.
        if afterCleanClose { return report }
        // The local assets as they are now, for the scan below (which reads the others, if it finds files of
        // theirs, one by one).
        var local: [Int64: AssetRecord] = [:]
        local.reserveCapacity(records.count)
        for record in records { if let id = record.id { local[id] = record } }
        for id in repairs.keys { local[id] = try catalog.store.record(id: id) }
        for id in lostImports { local[id] = nil }

        // Orphans: files the library named (by identifier) that belong to no asset or no longer match it.
        // A file or folder with any other name is not the library's and is never touched.
        for kind in LocalFiles.Folder.allCases {
            let folder = files.url(of: kind)
            // try?: a folder that cannot be read is scanned at the next recovery
            let names = (try? fm.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names {
                // Built as `LocalFiles` builds its names, so that the comparisons below are exact.
                let path = files.file(name, in: kind).path
                guard LocalFiles.isLibraryFileName(name, in: kind), Self.isRegularFile(path) else {
                    report.foreignFilesKept += 1
                    continue
                }
                if kind == .edits, LocalFiles.isEditOutputName(name) {
                    // An editor's output not committed: kept a day for an editor still at work (in any process).
                    // try?: no date: the file is kept, as a young one
                    let age = (try? fm.attributesOfItem(atPath: path)[.modificationDate] as? Date).flatMap { $0 }
                    if let age, Date().timeIntervalSince(age) > 24 * 3600 {
                        // try?: one that cannot be removed is tried at the next recovery
                        try? fm.removeItem(atPath: path)
                        report.orphanFilesRemoved += 1
                    }
                    continue
                }
                guard let id = LocalFiles.identifier(ofFileNamed: name),
                    let current = try local[id] ?? catalog.store.record(id: id)
                else {
                    // try?: one that cannot be removed is tried at the next recovery
                    try? fm.removeItem(atPath: path)
                    report.orphanFilesRemoved += 1
                    continue
                }
                let keep: Bool
                switch kind {
                case .originals:
                    let full = files.original(id: id, key: current.key).path
                    if path == full {
                        keep = current.availability == .full
                    } else if path == full + ".part" || path == full + ".part.json" {
                        keep = current.availability != .full
                        if keep && path.hasSuffix(".part") { report.partFilesKept += 1 }
                    } else {
                        keep = false
                    }
                case .partial:
                    keep = current.availability == .partial
                case .thumbnails:
                    keep = current.thumbnailPresent && path == files.thumbnail(id: id).path
                case .stripped:
                    // A copy is remade from the original when it is needed again.
                    keep = current.availability == .full && path == files.stripped(id: id, key: current.key).path
                case .edits:
                    // Only the current revision's files; its rendered version as the row says.
                    if let revision = current.editRevision {
                        let rendered = files.rendered(id: id, revision: revision).path
                        keep =
                            path == files.renderedThumbnail(id: id, revision: revision).path
                            || (path == rendered && current.renderedPresent)
                            || ((path == rendered + ".part" || path == rendered + ".part.json")
                                && !current.renderedPresent)
                    } else {
                        keep = false
                    }
                }
                if !keep {
                    // try?: one that cannot be removed is tried at the next recovery
                    try? fm.removeItem(atPath: path)
                    report.orphanFilesRemoved += 1
                }
            }
        }
        return report
    }

    /// A thumbnail its row says is local whose file is gone (removed by hand while the library was closed, which
    /// an open after a clean close does not look for): the row forgets it — `cloudOnly` when it was the only
    /// local part — so that the next sync fetches it again. Looked at again under the write lock.
    @available(*, noasync, message: "blocks its thread; async code awaits the async form")
    func forgetMissingThumbnail(_ id: Int64) {
        do {
            try catalog.performWrite(forgettingMissingThumbnail(id))
        } catch {
            // The row still says a thumbnail is local: it is looked for again at the next read.
            telemetry.failed("could not record a missing thumbnail", asset: id, error: error)
        }
    }

    /// ``forgetMissingThumbnail(_:)`` from async code: the commit runs on the catalog's writer.
    func forgetMissingThumbnail(_ id: Int64) async {
        do {
            try await catalog.performWrite(forgettingMissingThumbnail(id))
        } catch {
            // The row still says a thumbnail is local: it is looked for again at the next read.
            telemetry.failed("could not record a missing thumbnail", asset: id, error: error)
        }
    }

    /// The write that forgets a missing thumbnail (looked at again under the write lock).
    private func forgettingMissingThumbnail(_ id: Int64) -> @Sendable (StoreTransaction) throws -> Void {
        let path = files.thumbnail(id: id).path
        return { tx in
            guard let record = try tx.record(id), record.thumbnailPresent, LocalFiles.regularFileSize(path) == nil
            else { return }
            _ = try tx.update(id) { r in
                r.thumbnailPresent = false
                if r.availability == .thumbnail { r.availability = .cloudOnly }
            }
        }
    }

    /// A regular file, not a folder or a link (`lstat`: a link is never followed).
    static func isRegularFile(_ path: String) -> Bool { LocalFiles.regularFileSize(path) != nil }
}
