import CloudAssets
import Foundation

/// The tutorial's app: one photo library, whose originals live in a bucket.
struct PhotoApp {
    let library: AssetLibrary

    /// Opens (or creates) the library in `folder`, a folder of its own on this computer: the catalog of every asset
    /// and the originals downloaded so far. The bucket holds the originals.
    static func open(folder: URL, endpoint: URL, bucket: String, credentials: Credentials = .default)
        async throws -> PhotoApp
    {
        var configuration = AssetLibrary.Configuration(storeURL: folder)
        configuration.endpoint = endpoint
        configuration.bucket = bucket
        configuration.credentials = credentials  // .default: the AWS chain (environment, ~/.aws, roles, …)
        return PhotoApp(library: try await AssetLibrary(configuration: configuration))
    }

    /// Brings the catalog up to date with the bucket: the first sync lists it, later ones read its journal.
    func refresh() async throws -> SyncSummary {
        let summary = try await library.sync()
        let counts = try library.assetCounts()
        print("synced (\(summary.mode)): \(summary.inserted) new, \(summary.removed) removed; \(counts.total) assets")
        return summary
    }
}
