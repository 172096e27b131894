import AssetStore
import Foundation

extension AssetLibrary {
    /// Pins assets: their originals are downloaded eagerly (at utility priority, as non-user work) and never
    /// evicted. Marking the pin is one transaction (observers see the assets change); downloads run in the
    /// background (unless ``Configuration/startsBackgroundTransfers`` is `false`: then the next library that
    /// opens with it downloads them) and each completion is its own change.
    /// - Parameter assets: The assets to pin.
    public func pin(_ assets: [Asset]) throws {
        try entry { try cache.pin(assets.map(\.rowID)) }
    }

    /// Unpins assets; their originals stay until evicted.
    /// - Parameter assets: The assets to unpin.
    public func unpin(_ assets: [Asset]) throws {
        try entry { try cache.unpin(assets.map(\.rowID)) }
    }

    /// Removes the local originals (and any partial ranges) of assets; each falls back to `thumbnail` (or
    /// `cloudOnly` without a thumbnail), all in one transaction that observers see as one change. An import not in
    /// the bucket yet keeps its original (its only copy).
    /// - Parameter assets: The assets.
    /// - Throws: ``CloudAssetsError/Code/assetPinned`` when one is pinned (nothing is evicted then).
    public func evict(_ assets: [Asset]) throws {
        try entry { try cache.evict(ids: assets.map(\.rowID), force: false) }
    }

    /// Bytes of originals, partial ranges and the thumbnails the library made itself on disk, as the store
    /// records them.
    public func cacheUsage() throws -> CacheUsage {
        try entry { try cache.usage() }
    }

    /// Prefetches originals at low priority (as non-user work: the `userRequestsOnly` and `offline` policies
    /// skip them). Completions are changes like any other. Already-local assets are skipped.
    /// - Parameter assets: The assets to prefetch.
    public func startCaching(_ assets: [Asset]) {
        cache.startCaching(assets.map(\.rowID), priority: .prefetch)
    }

    /// Stops prefetching these assets (downloads shared with user requests go on for those requests).
    /// - Parameter assets: The assets.
    public func stopCaching(_ assets: [Asset]) {
        cache.stopCaching(assets.map(\.rowID))
    }

    /// Counts the assets by availability, pinned and trashed, from the catalog alone (no network): one grouped
    /// query that reads no asset, so its cost barely grows with the library. Any thread.
    public func assetCounts() throws -> AssetCounts {
        try entry { try cache.counts() }
    }

    /// Gives the asset a local thumbnail when it has none, without downloading the original where it can: the
    /// bucket's thumbnail object when there is one; else the JPEG thumbnail embedded in the original's EXIF, read
    /// with a ranged request of the file's first 64 KiB (and at most 128 KiB more when the thumbnail runs past
    /// them); else the original (local, or downloaded when `isNetworkAccessAllowed` and the library's
    /// ``NetworkPolicy`` allow) decoded and downscaled.
    ///
    /// Thumbnails the library makes are real, upright JPEGs (EXIF orientation applied; no metadata, so no
    /// location), ``Configuration/thumbnailPixelSize`` pixels on the long side at most, and count against
    /// ``Configuration/cacheSizeLimit`` (see ``cacheUsage()``). The thumbnail is committed in one transaction: a
    /// `cloudOnly` asset becomes `thumbnail`, observers get the change. Safe from any thread or task.
    /// - Parameters:
    ///   - asset: The asset (an image; videos and other media have no thumbnail made here).
    ///   - isNetworkAccessAllowed: Whether the bucket may be read.
    /// - Returns: Where the thumbnail came from.
    /// - Throws: ``CloudAssetsError/Code/networkNotAllowed`` when it needs the network and may not use it,
    ///   ``CloudAssetsError/Code/imageUnreadable`` for a file that is not a decodable image, transfer errors.
    @discardableResult
    public func makeThumbnail(for asset: Asset, isNetworkAccessAllowed: Bool = true) async throws -> ThumbnailSource {
        try await entry {
            try await cache.makeThumbnail(of: asset.rowID, isNetworkAccessAllowed: isNetworkAccessAllowed)
        }
    }
}
