package import Foundation

/// How urgently a download should get a connection. Higher priorities are served first; within one
/// priority, first come first served.
package enum DownloadPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// Speculative work (prefetching), served last.
    case prefetch = 0
    /// Background work the user did not wait for.
    case utility = 1
    /// Something the user is waiting for.
    case userInitiated = 2

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// When a library (and its downloader and uploader) may use the network.
public enum NetworkPolicy: Sendable, Hashable {
    /// Never: every request is answered from local data (or "in cloud"); no sync, download or upload.
    case offline
    /// Sync, downloads and uploads run whenever needed (a request still needs its own network permission).
    case allowed
    /// Only for user requests whose options allow network access; no background sync, caching or upload.
    case userRequestsOnly
}

extension NetworkPolicy: CustomStringConvertible {
    /// The case's name (`offline`, `allowed`, `userRequestsOnly`), as the command line and the docs spell it.
    public var description: String {
        switch self {
        case .offline: "offline"
        case .allowed: "allowed"
        case .userRequestsOnly: "userRequestsOnly"
        }
    }
}

/// Settings of a ``Downloader``.
package struct DownloaderConfiguration: Sendable, Hashable {
    /// The most downloads moving bytes at once; others wait in priority order.
    package var maxConnections: Int
    /// Retries for connection errors, 5xx, SlowDown and stalls.
    package var retryPolicy: RetryPolicy
    /// Told of retries (nil: nobody).
    package var observer: TransferObserver?
    /// The shortest time between two progress reports of one download, in milliseconds.
    package var progressInterval: Int
    /// Seconds without progress before an attempt counts as stalled (and is retried).
    package var stallTimeout: TimeInterval
    /// The network gate.
    package var networkPolicy: NetworkPolicy
    /// Which integrity checks a download computes; the length is always checked, and no file is renamed into
    /// place before its checks pass.
    package var integrity: IntegrityChecks
    /// Whether verified files that are ready together (four or more, as when many small objects download at
    /// once) may be synced with one `syncfs(2)` of their file system instead of one `fdatasync(2)` each. Every
    /// file is still on disk before it is renamed into place either way; a file-system sync needs far fewer
    /// trips to the disk (on this project's ext4 test machine, 2,000 × 16 KiB downloads ran ~25% faster), but it
    /// also writes other programs' pending data on that file system sooner than the kernel would have. False:
    /// always file by file. True by default.
    package var syncsFileSystemForGroups: Bool

    /// - Parameters:
    ///   - maxConnections: Concurrent downloads.
    ///   - retryPolicy: Retry budget and backoff.
    ///   - progressInterval: Milliseconds between progress reports.
    ///   - stallTimeout: Stall timeout in seconds.
    ///   - networkPolicy: The network gate.
    ///   - integrity: The checks a download computes (``IntegrityChecks/fastest`` by default).
    ///   - syncsFileSystemForGroups: See ``syncsFileSystemForGroups``.
    package init(
        maxConnections: Int = 6, retryPolicy: RetryPolicy = RetryPolicy(), progressInterval: Int = 100,
        stallTimeout: TimeInterval = 30, networkPolicy: NetworkPolicy = .allowed, integrity: IntegrityChecks = .fastest,
        syncsFileSystemForGroups: Bool = true
    ) {
        self.syncsFileSystemForGroups = syncsFileSystemForGroups
        self.maxConnections = max(1, maxConnections)
        self.retryPolicy = retryPolicy
        self.progressInterval = max(0, progressInterval)
        self.stallTimeout = stallTimeout
        self.networkPolicy = networkPolicy
        self.integrity = integrity
    }
}

/// How far a download has come.
package struct DownloadProgress: Sendable, Hashable {
    /// Bytes of the object on disk so far (including bytes kept from an earlier, interrupted attempt).
    package var bytesReceived: Int64
    /// The object's size; nil until the response headers arrive.
    package var totalBytes: Int64?
    /// `bytesReceived / totalBytes`, 0 while the total is unknown.
    package var fractionCompleted: Double
    /// The recent transfer rate.
    package var bytesPerSecond: Double

    /// - Parameters:
    ///   - bytesReceived: Bytes on disk.
    ///   - totalBytes: Object size, if known.
    ///   - bytesPerSecond: Recent rate.
    package init(bytesReceived: Int64, totalBytes: Int64?, bytesPerSecond: Double) {
        self.bytesReceived = bytesReceived
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
        if let totalBytes, totalBytes > 0 {
            fractionCompleted = min(1, Double(bytesReceived) / Double(totalBytes))
        } else {
            fractionCompleted = totalBytes == 0 ? 1 : 0
        }
    }
}

/// What to download, where to, and how to report.
package struct DownloadRequest: Sendable {
    /// The bucket.
    package var bucket: String
    /// The key.
    package var key: String
    /// Where the verified file ends up. The bytes go to `<destination>.part` first.
    package var destination: URL
    /// Only this version (ETag); another version fails with ``S3Error/objectChanged``.
    package var expectedETag: String?
    /// The size the object must have; another size fails with ``S3Error/objectChanged``.
    package var expectedSize: Int64?
    /// Scheduling priority.
    package var priority: DownloadPriority
    /// Whether a user asked for this (see ``NetworkPolicy/userRequestsOnly``).
    package var isUserRequest: Bool
    /// Whether this request may use the network at all.
    package var networkAccessAllowed: Bool
    /// The queue progress is reported on (a private serial queue targeting it is used, so reports stay in
    /// order); nil for a private serial queue.
    package var progressQueue: DispatchQueue?
    /// Called with progress at most every ``DownloaderConfiguration/progressInterval`` ms, in order; set
    /// the flag to true to cancel this request.
    package var progress: (@Sendable (DownloadProgress, inout Bool) -> Void)?
    /// Whether the file is on the disk before it gets its name (writeback started as it is written, `fdatasync`
    /// before the rename): what a library's cached original needs, since its commit says "full" for good. A copy
    /// handed out to a caller (an export) is renamed as soon as it is verified, as durable as a file `curl -o`
    /// writes: the page cache writes it back.
    package var durable = true

    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - destination: Final file URL.
    ///   - expectedETag: Required version.
    ///   - expectedSize: Required size.
    ///   - priority: Priority.
    ///   - isUserRequest: A user's request.
    ///   - networkAccessAllowed: May use the network.
    ///   - progressQueue: Queue for progress.
    ///   - progress: Progress handler with stop flag.
    package init(
        bucket: String, key: String, destination: URL, expectedETag: String? = nil, expectedSize: Int64? = nil,
        priority: DownloadPriority = .utility, isUserRequest: Bool = false, networkAccessAllowed: Bool = true,
        progressQueue: DispatchQueue? = nil, progress: (@Sendable (DownloadProgress, inout Bool) -> Void)? = nil
    ) {
        self.bucket = bucket
        self.key = key
        self.destination = destination
        self.expectedETag = expectedETag
        self.expectedSize = expectedSize
        self.priority = priority
        self.isUserRequest = isUserRequest
        self.networkAccessAllowed = networkAccessAllowed
        self.progressQueue = progressQueue
        self.progress = progress
    }
}

/// A finished, verified download.
package struct DownloadResult: Sendable, Hashable {
    /// The destination; the file there is complete and verified.
    package var url: URL
    /// The ETag of the version downloaded.
    package var etag: String
    /// Its size in bytes.
    package var size: Int64
    /// The checks the bytes passed.
    package var verification: Set<IntegrityCheck>
    /// Bytes that came over the network for this download (less than ``size`` after a resume).
    package var bytesTransferred: Int64
    /// HTTP attempts made.
    package var attempts: Int

    /// - Parameters:
    ///   - url: Destination.
    ///   - etag: ETag.
    ///   - size: Size.
    ///   - verification: Checks passed.
    ///   - bytesTransferred: Network bytes.
    ///   - attempts: Attempts.
    package init(
        url: URL, etag: String, size: Int64, verification: Set<IntegrityCheck>, bytesTransferred: Int64,
        attempts: Int
    ) {
        self.url = url
        self.etag = etag
        self.size = size
        self.verification = verification
        self.bytesTransferred = bytesTransferred
        self.attempts = attempts
    }
}
