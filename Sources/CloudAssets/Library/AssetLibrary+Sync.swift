import AssetStore
import Foundation

extension AssetLibrary {
    /// Sends local changes to the bucket, brings the catalog up to date with it — from the journal, or by listing
    /// the whole bucket — merges the shared properties other libraries changed, purges the trash past its
    /// retention, then fetches missing thumbnails.
    ///
    /// First, imports not in the bucket yet are uploaded and shared-property edits sent (those that failed before
    /// are tried again; one that fails again stays `uploadFailed` and does not fail the sync), and what this
    /// library changed is written to the bucket's journal. Imports not uploaded are never taken for vanished
    /// objects.
    ///
    /// **Incremental** (``SyncMode/incremental``): lists the journal entries other libraries wrote since this
    /// library's position and applies them (see docs/bucket-layout.md): k changes cost about k small GETs
    /// and k/1000 listings, no HEAD; a bucket nobody changed costs one listing request. Objects written by other
    /// tools (aws CLI, rclone) are not in the journal: only a full sync finds them.
    ///
    /// **Full** (``SyncMode/full``): lists the bucket and reconciles page by page, in batched transactions (each
    /// one change notification): new objects are inserted `cloudOnly`; a changed ETag or size is a content change
    /// (the local original is deleted, the asset falls back to `thumbnail`,
    /// ``ObjectChangeDetails/assetContentChanged`` is true); vanished objects are removed (a download in flight
    /// for one ends with ``CloudAssetsError/Code/assetDeleted``) — only a complete listing removes anything: a
    /// failed or truncated listing throws and leaves the catalog as it was. Metadata comes from the listing plus
    /// `x-amz-meta-*` of a HEAD, made only for new or changed objects, at most ``Configuration/maxConnections``
    /// at a time; the metadata sidecars whose ETag changed are read and merged. An unchanged bucket makes no
    /// writes and no notifications. An interrupted full sync resumes where it stopped.
    ///
    /// **Usable after the listing.** New objects are committed from the listing alone — key, size, ETag, the
    /// listing's date as creation date — so every asset can be fetched, sorted and counted as soon as its page is
    /// listed (``SyncProgress/catalogReady(assets:metadataPending:)``); ``Asset/provisionalFields`` names what is a
    /// guess until then. Their heads (and an image's own headers, EXIF, for objects other tools wrote) are read
    /// afterwards, before the sync returns: one request per object (an image's ranged GET carries its head),
    /// committed in batches that are ordinary changes (a capture date that re-sorts an asset is a move). A sync
    /// cut short (cancelled, killed, offline) keeps what it committed; the next sync reads the rest
    /// (``SyncSummary/metadataPending``).
    ///
    /// ``SyncMode/automatic`` (the default) is full on a library's first sync and when the last full listing is
    /// older than 100 times what it took (at least a minute, at most ``Configuration/fullSyncInterval``, which
    /// applies alone until this library has timed a listing of its own), incremental otherwise: a bucket that lists
    /// in a second shows other tools' objects within minutes, one that lists in an hour is listed daily.
    /// ``SyncSummary/lastFullListing`` says when the last one ran. Syncs are serialised: a second call
    /// waits for the first, in this library or in any other on the same folder (another process's included).
    ///
    /// Thumbnails are then fetched at low priority, ``Configuration/thumbnailConcurrency`` at a time, and
    /// committed in batches (each arrival moves the asset to `thumbnail`). A thumbnail that cannot be fetched is
    /// skipped (the next sync tries again); it does not make the sync throw.
    /// - Parameters:
    ///   - mode: Full listing, journal only, or the library's choice (default).
    ///   - fetchThumbnails: Whether to fetch missing thumbnails after listing (default `true`).
    ///   - progress: Where the sync is (``SyncProgress``): when the catalog reflects the listing (or the journal)
    ///     and every asset can be fetched, then the metadata read after it. Called from the sync's task, in order,
    ///     never after this method returns; keep it short. Default none.
    /// - Returns: What the sync did.
    /// - Throws: ``CloudAssetsError``: ``CloudAssetsError/Code/noEndpoint``,
    ///   ``CloudAssetsError/Code/networkNotAllowed`` under the offline policy, the bucket's errors (a malformed or
    ///   truncated listing is an error, never a short catalog).
    @discardableResult
    public func sync(
        mode: SyncMode = .automatic, fetchThumbnails: Bool = true,
        progress: (@Sendable (SyncProgress) -> Void)? = nil
    ) async throws -> SyncSummary {
        try await entry { try await syncEngine.sync(mode: mode, fetchThumbnails: fetchThumbnails, progress: progress) }
    }

    /// The last sync of this library that completed, in any process that shares its folder (kept in
    /// `<store>/last-sync.json`, replaced atomically by each sync); nil when none has. Any thread; a file read.
    public var lastSync: LastSync? {
        syncEngine.lastSync
    }
}

extension AssetLibrary {
    /// Refuses a bucket other than the library's own, as a sync does, without a request: throws
    /// ``CloudAssetsError/Code/boundToAnotherBucket`` when the configured endpoint, bucket or originals prefix is
    /// not the one the library was first synced with (unless ``Configuration/rebind``). Returns when they match,
    /// when the library was never synced, and without an endpoint. A command that is about to send a change calls
    /// it first, so that another bucket is refused rather than left unreached.
    public func checkBinding() throws {
        try entry { try remote?.checkBinding() }
    }

    /// Checks what a sync needs, one line each (``ConnectionReport``): where the credentials come from, the
    /// endpoint and its addressing, TLS, the bucket (one listing of at most one key), the catalog's binding and the
    /// service's clock. Never throws: what fails is a ``ConnectionReport/Check/problem``. Ignores the network
    /// policy (it is asked for); one request at most. Any thread.
    public func checkConnection() async -> ConnectionReport {
        if isClosed {
            return ConnectionReport(checks: [
                ConnectionReport.Check(
                    aspect: .credentials, summary: "the library is closed",
                    problem: CloudAssetsError(AssetLibraryError.closed))
            ])
        }
        return await syncEngine.checkConnection()
    }
}

/// Where a running sync is (``AssetLibrary/sync(mode:fetchThumbnails:progress:)``).
public enum SyncProgress: Sendable, Hashable {
    /// The catalog reflects the listing or the journal: every asset in the bucket can be fetched, sorted and
    /// counted. `metadataPending` of them have fields still to read (``Asset/provisionalFields``); the sync reads
    /// them next.
    case catalogReady(assets: Int, metadataPending: Int)
    /// Metadata read so far (`filled`) of the assets that waited for it when the reading began (`of`).
    case fillingMetadata(filled: Int, of: Int)
    /// The metadata reads are over: every asset's fields are in the catalog but those of `metadataPending` (objects
    /// skipped, or image headers not read when ``AssetLibrary/Configuration/imageHeaderBytes`` is 0), which the next
    /// sync reads. Sent once per sync, after ``catalogReady(assets:metadataPending:)``; what the sync does after it
    /// (the trash's purge, a checkpoint for other libraries, thumbnails) changes no asset's metadata.
    case metadataComplete(assets: Int, metadataPending: Int)
}
