import AssetStore
import Foundation

extension AssetLibrary {
    /// Applies the change requests `body` makes — imports, trash and restore, favourite, hidden, title, keywords,
    /// content edits and reverts — in one transaction, delivered to observers as one ``LibraryChange`` (PhotoKit's `performChanges`).
    ///
    /// Local first: an imported asset is in the catalog at once, `full` (its original is local) and
    /// ``UploadState/pendingUpload``; the library uploads it in the background when the network policy allows
    /// (``uploads``). Edits go to the bucket in the background too, and every library on the bucket merges them
    /// property by property: the last change of each property wins, whichever library made it. Works offline.
    ///
    /// `body` runs on the caller's actor, so main-actor code may call this with a closure that reads its state or
    /// keeps a placeholder in one of its variables (as in PhotoKit's album examples). The rest does not run there:
    /// imported files are read (hashed and copied) off the caller's thread before the transaction. If anything
    /// fails — an unreadable file, an asset that no longer exists — nothing is committed, no file is left behind
    /// and a moved file is put back.
    /// - Parameter body: Records the changes; called once, synchronously, before this function suspends. Nothing
    ///   is committed when it throws.
    /// - Returns: The local identifiers of the created assets, one per ``AssetChangeRequests/createAsset(fromFileAt:options:)``
    ///   call, in call order (an existing asset's when the bytes were already in the library).
    /// - Throws: ``CloudAssetsError/Code/cannotImport``, ``CloudAssetsError/Code/noSuchAsset``,
    ///   ``CloudAssetsError/Code/libraryClosed``, or what `body` throws.
    @discardableResult
    public nonisolated(nonsending) func performChanges(_ body: (AssetChangeRequests) throws -> Void) async throws
        -> [String]
    {
        let requests = AssetChangeRequests()
        try entry { try body(requests) }
        let recorded = requests.recorded
        return try await entry { try await uploadEngine.performChanges(recorded) }
    }

    /// Purges every asset in the trash now: its objects (original, thumbnail, metadata sidecar, and the edits of an
    /// asset with edit revisions) are deleted from the bucket, then the asset leaves the catalog (one change) and its local files are removed. Other libraries on
    /// the bucket remove it at their next sync. An import that never went up is only removed locally (an upload of
    /// it in progress is aborted).
    /// - Returns: How many assets were purged.
    /// - Throws: ``CloudAssetsError/Code/networkNotAllowed`` under the offline policy when an asset is in the bucket (nothing is
    ///   purged then); S3 errors (the assets whose objects were deleted before the error are purged, the others stay
    ///   in the trash).
    @discardableResult
    public func emptyTrash() async throws -> Int {
        try await entry { try await uploadEngine.emptyTrash() }
    }

    /// The uploads: what is waiting, running and failed, with the progress of those running. A snapshot; any
    /// thread. Throws ``CloudAssetsError`` (``CloudAssetsError/Code/libraryClosed`` after ``close()``).
    public var uploads: UploadStatus {
        get throws { try entry { try uploadEngine.status() } }
    }

    /// Uploads every import and shared-property edit not in the bucket yet, now, and returns when they went up or
    /// failed (see ``uploads``) and the background worker is idle. An explicit call, like a sync: it runs under any
    /// network policy but `.offline` (where it returns at once) and whatever
    /// ``Configuration/startsBackgroundTransfers`` says. Uploads also start on their own after
    /// ``performChanges(_:)``, on open and when the policy becomes `.allowed`.
    ///
    /// When it returns, the journal entries of every upload that went up are in the bucket too (or failed to go,
    /// left for the next sync): another library's next sync sees each of them, and a process may exit.
    /// - Returns: The uploads' state once idle: ``UploadStatus/failed`` and ``UploadStatus/failures`` say which
    ///   imports did not go up and why (their originals stay in the library). After ``close()``: at once, an empty
    ///   status.
    @discardableResult
    public func waitForUploads() async -> UploadStatus {
        guard !isClosed else { return UploadStatus() }
        return await uploadEngine.waitForUploads()
    }

    /// Puts every import whose upload failed back in the queue and wakes the worker.
    public func retryFailedUploads() throws {
        try entry { try uploadEngine.retryFailedUploads() }
    }
}
