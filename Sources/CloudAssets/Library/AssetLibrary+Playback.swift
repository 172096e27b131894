public import Foundation

extension AssetLibrary {
    /// A URL a player (AVPlayer, a browser's `<video>`, ffplay, VLC) streams the asset's original from — the role
    /// of PhotoKit's `requestPlayerItem(forVideo:options:)` — without waiting for the whole file.
    ///
    /// The URL is `http://127.0.0.1:<port>/play/<token>/<name>`: a server of this library listening on the
    /// loopback address only, started on first use, stopped by ``close()``. The token (128 random bits) names
    /// this asset and `options.isNetworkAccessAllowed`; the same asset and choice give the same URL. It answers GET
    /// and HEAD with `Accept-Ranges: bytes`, one range a request (`206` and `Content-Range`; `200` for the whole;
    /// `416` past the end). Bytes already local are read from the cache; missing ones are fetched from the bucket
    /// as ranged GETs, verified, and kept (the asset becomes `partial`, then `full` once every byte is here — a
    /// change like any other), so a seek in a cloud-only video costs a few GETs near the seek point, never the
    /// whole file. Under the ``networkPolicy`` and `options.isNetworkAccessAllowed`: when the network may not be
    /// used, local ranges still play and a request for missing bytes is answered `503`. With
    /// ``Configuration/locationAccess`` `.denied`, a video's stated place is blanked in the bytes served, as for
    /// every other way of reading it.
    ///
    /// Any thread or actor. The URL stays valid until the library closes (or the asset leaves the catalog: `404`).
    /// - Parameters:
    ///   - asset: The asset (a video, usually; any original is served by range).
    ///   - options: Whether missing bytes may be fetched from the bucket (`isNetworkAccessAllowed`, default
    ///     `false` as PhotoKit's; the URL of a cloud-only video needs `true`).
    /// - Returns: The URL to hand to the player.
    /// - Throws: ``CloudAssetsError/Code/libraryClosed``; ``CloudAssetsError/Code/noSuchAsset`` for an asset
    ///   not in the catalog; the loopback listener's error (no free port).
    public func requestPlaybackURL(for asset: Asset, options: AssetRequestOptions = AssetRequestOptions())
        async throws -> URL
    {
        try await entry {
            guard try catalog.store.record(id: asset.rowID) != nil else {
                throw AssetLibraryError.noSuchAsset(localIdentifier: asset.localIdentifier)
            }
            let name = asset.key.split(separator: "/").last.map(String.init) ?? "original"
            return try await playback.url(
                for: asset.rowID, networkAllowed: options.isNetworkAccessAllowed, name: name)
        }
    }
}
