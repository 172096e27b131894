import Essentials
import Foundation

/// Downloads objects to files: a priority queue under a connection limit, shared transfers for identical
/// requests, a network gate, retries, resume and integrity checks.
///
/// Every method may be called from any thread. Results and progress are delivered as described on
/// ``DownloadRequest`` and ``DownloadHandle``. A file appears at its destination only complete and verified
/// (renamed from `<destination>.part` after `fdatasync`); otherwise the destination is left untouched. Files that
/// finish while others are being synced are synced together, in one group per trip to the disk (each still
/// with its own `fdatasync` before its rename), so many small downloads do not pay one disk round trip each.
package final class Downloader: Sendable {
    /// The client requests are signed and sent with.
    package let client: S3Client
    /// The settings the downloader was made with (its network policy can change later).
    package let configuration: DownloaderConfiguration
    let scheduler: TransferScheduler
    private let jobs = LockedBox<[DownloadJob.Key: DownloadJob]>([:])
    private let policy: LockedBox<NetworkPolicy>
    /// The last ranged read per part file, so reads of one file run one after another.
    let rangeQueue = LockedBox<[String: Task<Void, Never>]>([:])

    /// - Parameters:
    ///   - client: The S3 client (and its engine) to use.
    ///   - configuration: Limits, retries, progress interval, network policy.
    /// How many groups of verified files this process has synced, how many files they held, and how many
    /// `syncfs` calls stood for the files' own syncs (every downloader's files are synced in shared groups: see
    /// ``DownloaderConfiguration/syncsFileSystemForGroups``). For diagnostics and benchmarks; any thread.
    package static var fileSyncStatistics: (groups: Int, files: Int, fileSystemSyncs: Int) {
        let statistics = FileSyncGroup.shared.statistics
        return (statistics.groups, statistics.files, statistics.fileSystemSyncs)
    }

    package init(client: S3Client, configuration: DownloaderConfiguration = DownloaderConfiguration()) {
        self.client = client
        self.configuration = configuration
        scheduler = TransferScheduler(slots: configuration.maxConnections)
        policy = LockedBox(configuration.networkPolicy)
    }

    /// The network gate now in force; changing it affects requests made afterwards.
    package var networkPolicy: NetworkPolicy {
        get { policy.withLock { $0 } }
        set { policy.withLock { $0 = newValue } }
    }

    /// Whether the gate lets this request use the network.
    package func isNetworkAllowed(for request: DownloadRequest) -> Bool {
        guard request.networkAccessAllowed else { return false }
        switch networkPolicy {
        case .offline: return false
        case .allowed: return true
        case .userRequestsOnly: return request.isUserRequest
        }
    }

    /// Starts (or joins) a download.
    ///
    /// A request the network gate refuses fails at once with ``S3Error/networkAccessNotAllowed`` and makes no
    /// connection. A request for the same bucket, key and destination as a running one shares its transfer.
    /// - Parameter request: What, where, how.
    /// - Returns: The handle to follow, pause, resume or cancel it.
    package func download(_ request: DownloadRequest) -> DownloadHandle {
        let attachment = DownloadAttachment(request: request)
        let handle = DownloadHandle(attachment: attachment)
        guard isNetworkAllowed(for: request) else {
            attachment.complete(.failure(.networkAccessNotAllowed))
            return handle
        }
        let key = DownloadJob.Key(
            bucket: request.bucket, key: request.key, destination: Self.normalizedPath(request.destination))
        let started = jobs.withLock { jobs -> (job: DownloadJob, previous: DownloadJob?)? in
            if let existing = jobs[key], existing.attach(attachment) { return nil }
            let job = DownloadJob(
                key: key, request: request, client: client, configuration: configuration, scheduler: scheduler,
                onFinish: { [weak self] job in self?.remove(job) })
            _ = job.attach(attachment)
            let previous = jobs[key]
            jobs[key] = job
            return (job, previous)
        }
        // A cancelled job for the same file may still be letting go of it: start after it has.
        if let started { started.job.start(after: started.previous) }
        return handle
    }

    /// The destination's path with `.` and `..` components and repeated slashes resolved (two requests for one
    /// file share a transfer), without Foundation's standardizing round trip for a path that is already clean.
    static func normalizedPath(_ url: URL) -> String {
        let path = url.path
        var previous: UInt8 = 0
        var clean = path.utf8.first == UInt8(ascii: "/")
        for byte in path.utf8 where clean {
            if previous == UInt8(ascii: "/"), byte == UInt8(ascii: ".") || byte == UInt8(ascii: "/") { clean = false }
            previous = byte
        }
        return clean ? path : url.standardizedFileURL.path
    }

    private func remove(_ job: DownloadJob) {
        jobs.withLock { jobs in
            if jobs[job.jobKey] === job { jobs[job.jobKey] = nil }
        }
    }
}
