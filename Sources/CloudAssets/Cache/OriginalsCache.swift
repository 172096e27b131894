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
final class OriginalsCache: LibraryEngine {
    let context: LibraryContext
    let downloads = DownloadRegistry()
    /// The assets whose byte lock this library holds for its downloads.
    let downloadLocks = DownloadLocks()
    /// Finished downloads, committed in groups.
    let downloadCommits = CommitGroups()

    init(context: LibraryContext) { self.context = context }

    /// No request, download or prefetch is running.
    var isIdle: Bool { downloads.isIdle }

    /// Cancels every download and prefetch (the library closed).
    func close() { downloads.cancelAll() }
}
