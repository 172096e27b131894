import AssetStore
import Essentials
import Foundation
import S3Transfer

/// The originals cache: makes originals local (whole downloads and verified byte ranges), pins them, prefetches
/// them, evicts them under the cache's size limit, makes thumbnails, and repairs the folder after a crash.
///
/// Owns: the downloads in flight and the requests they serve (``DownloadRegistry``), the per-asset download
/// locks shared with other libraries on the folder (``DownloadLocks``), and the grouping of finished downloads
/// into one commit (``CommitGroups``). Every state change of an asset goes through the catalog.
final class OriginalsCache: Sendable {
    let configuration: AssetLibrary.Configuration
    let catalog: Catalog
    let files: LocalFiles
    let lock: LibraryLock
    let remote: LibraryRemote?
    let telemetry: LibraryTelemetry
    let network: NetworkPermission
    /// Reached from outside `Cache/` only through the methods below.
    let downloads = DownloadRegistry()
    /// The assets whose byte lock this library holds for its downloads.
    let downloadLocks = DownloadLocks()
    /// Finished downloads, committed in groups.
    let downloadCommits = CommitGroups()

    init(
        configuration: AssetLibrary.Configuration, catalog: Catalog, files: LocalFiles, lock: LibraryLock,
        remote: LibraryRemote?, telemetry: LibraryTelemetry, network: NetworkPermission
    ) {
        self.configuration = configuration
        self.catalog = catalog
        self.files = files
        self.lock = lock
        self.remote = remote
        self.telemetry = telemetry
        self.network = network
    }

    /// No request, download or prefetch is running.
    var isIdle: Bool { downloads.isIdle }

    // MARK: What the engines that serve requests use of the download registry

    /// A new request's identifier (unique within the library).
    func nextRequestID() -> AssetRequestID { downloads.nextRequestID() }

    /// The queue progress handlers of downloads are called on.
    var progressQueue: DispatchQueue { downloads.progressQueue }

    /// Registers the task that serves a request, so that cancelling the request cancels it and its downloads.
    func registerRequest(_ id: AssetRequestID, task: Task<Void, Never>) { downloads.registerRequest(id, task: task) }

    /// The request has answered for the last time: it leaves the book.
    func finishRequest(_ id: AssetRequestID) { downloads.finishRequest(id) }

    /// Cancels a request: its task, and the downloads serving it (one that starts later is cancelled at once).
    func cancelRequest(_ id: AssetRequestID) { downloads.cancelRequest(id) }

    /// Cancels the downloads serving one request, leaving its task to answer.
    func cancelDownloads(forRequest id: AssetRequestID) { downloads.cancelDownloads(forRequest: id) }

    /// Cancels the downloads of assets that are leaving the catalog (they end as deleted, not as cancelled).
    func cancelDownloads(forAssets ids: [Int64]) { downloads.cancelDownloads(forAssets: ids) }

    /// Notes that an asset's original was read now (eviction takes the least recently read first).
    func noteAccess(_ asset: Int64) { downloads.noteAccess(asset) }

    /// Originals being downloaded now.
    var activeDownloadCount: Int { downloads.activeDownloadCount }

    /// Cancels every download and prefetch (the library closed).
    func close() { downloads.cancelAll() }
}
