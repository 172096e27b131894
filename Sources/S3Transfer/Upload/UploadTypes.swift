package import Foundation

/// How far an upload has come.
package struct UploadProgress: Sendable, Hashable {
    /// Bytes of the file the service has acknowledged: whole parts (also parts acknowledged in an earlier run
    /// that this one resumes), or the whole object of a single request once it is stored. Never decreases
    /// within one upload.
    package var bytesSent: Int64
    /// The file's size.
    package var totalBytes: Int64
    /// `bytesSent / totalBytes` (1 for an empty file).
    package var fractionCompleted: Double
    /// The rate of this run: bytes acknowledged since it started (not counting parts of an earlier run) per
    /// second.
    package var bytesPerSecond: Double

    /// - Parameters:
    ///   - bytesSent: Bytes acknowledged.
    ///   - totalBytes: File size.
    ///   - bytesPerSecond: Rate of this run.
    package init(bytesSent: Int64, totalBytes: Int64, bytesPerSecond: Double) {
        self.bytesSent = bytesSent
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
        fractionCompleted = totalBytes > 0 ? min(1, Double(bytesSent) / Double(totalBytes)) : 1
    }
}

/// What to upload, where to, and how to report.
package struct UploadRequest: Sendable {
    /// The bucket.
    package var bucket: String
    /// The key.
    package var key: String
    /// The file, only read. Its size when the upload starts is the object's size; a file whose size or
    /// modification time changes while it is uploaded fails the upload (``S3Error/isSourceFileChanged``).
    package var file: URL
    /// The `Content-Type` to store.
    package var contentType: String?
    /// User metadata, stored as `x-amz-meta-*` (names lower-cased).
    package var metadata: [String: String]
    /// The file's CRC-32C if the caller already knows it (computed when the file was imported): sent as the
    /// object's full-object checksum, so the service checks the bytes it assembled against the file as it was
    /// then. Nil: the uploader computes it while reading. Used only with ``S3ChecksumAlgorithm/crc32c``.
    package var fullObjectCRC32C: UInt32?
    /// Write only if the key holds no object (`If-None-Match: *` on PutObject and CompleteMultipartUpload).
    /// When the key already holds one, the upload ends with ``UploadOutcome/keyExists(_:)``.
    package var createOnly: Bool
    /// Whether a user asked for this (see ``NetworkPolicy/userRequestsOnly``).
    package var isUserRequest: Bool
    /// Whether this request may use the network at all.
    package var networkAccessAllowed: Bool
    /// The queue progress is reported on (a private serial queue targeting it is used, so reports stay in
    /// order); nil for a private serial queue.
    package var progressQueue: DispatchQueue?
    /// Called with progress at most every ``UploaderConfiguration/progressInterval`` ms (and once more at 100%
    /// before the upload returns `.created`), in order, one call at a time; set the flag to true to stop the
    /// upload: it then throws ``S3Error/cancelled`` and leaves the multipart upload in place to resume.
    package var progress: (@Sendable (UploadProgress, inout Bool) -> Void)?

    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - file: The file to upload.
    ///   - contentType: The `Content-Type` to store.
    ///   - metadata: User metadata.
    ///   - fullObjectCRC32C: The file's CRC-32C, if known.
    ///   - createOnly: Write only if the key holds nothing.
    ///   - isUserRequest: A user's request.
    ///   - networkAccessAllowed: May use the network.
    ///   - progressQueue: Queue for progress.
    ///   - progress: Progress handler with stop flag.
    package init(
        bucket: String, key: String, file: URL, contentType: String? = nil, metadata: [String: String] = [:],
        fullObjectCRC32C: UInt32? = nil, createOnly: Bool = true, isUserRequest: Bool = false,
        networkAccessAllowed: Bool = true, progressQueue: DispatchQueue? = nil,
        progress: (@Sendable (UploadProgress, inout Bool) -> Void)? = nil
    ) {
        self.bucket = bucket
        self.key = key
        self.file = file
        self.contentType = contentType
        self.metadata = metadata
        self.fullObjectCRC32C = fullObjectCRC32C
        self.createOnly = createOnly
        self.isUserRequest = isUserRequest
        self.networkAccessAllowed = networkAccessAllowed
        self.progressQueue = progressQueue
        self.progress = progress
    }
}

/// One part the service acknowledged.
package struct UploadedPart: Sendable, Hashable, Codable {
    /// The part number (1…10,000).
    package var number: Int
    /// The ETag UploadPart returned, without quotes.
    package var etag: String
    /// The part's size in bytes.
    package var size: Int64
    /// The part's checksum (of ``UploaderConfiguration/checksum``, CRC-32C by default), base64 as S3 writes it.
    package var checksum: String?

    /// - Parameters:
    ///   - number: Part number.
    ///   - etag: ETag without quotes.
    ///   - size: Size in bytes.
    ///   - checksum: Base64 checksum.
    package init(number: Int, etag: String, size: Int64, checksum: String?) {
        self.number = number
        self.etag = etag
        self.size = size
        self.checksum = checksum
    }
}

/// Where a multipart upload stands: what a caller persists to resume it in a later run (or to abort it).
package struct UploadCheckpoint: Sendable, Hashable, Codable {
    /// The multipart upload.
    package var uploadId: String
    /// The key it writes.
    package var key: String
    /// The size of every part but the last.
    package var partSize: Int64
    /// The file's size (the object's).
    package var size: Int64
    /// The acknowledged parts, in part-number order.
    package var parts: [UploadedPart]

    /// - Parameters:
    ///   - uploadId: The upload id.
    ///   - key: The key.
    ///   - partSize: Part size.
    ///   - size: Object size.
    ///   - parts: Acknowledged parts.
    package init(uploadId: String, key: String, partSize: Int64, size: Int64, parts: [UploadedPart]) {
        self.uploadId = uploadId
        self.key = key
        self.partSize = partSize
        self.size = size
        self.parts = parts
    }
}

/// How an upload ended.
package enum UploadOutcome: Sendable, Hashable {
    /// The object was written by this upload: its ETag and the checksums the service keeps for it (the
    /// full-object checksum sent with it when the service echoed none).
    case created(etag: String, checksums: S3Checksums)
    /// The key already holds an object (the create-only write was refused with 412): its head. Nothing of this
    /// upload is left behind; the caller adopts that object or picks another key.
    case keyExists(S3ObjectHead)
}

/// Settings of an ``Uploader``.
package struct UploaderConfiguration: Sendable, Hashable {
    /// The smallest part S3 accepts (every part but the last).
    package static let minimumPartSize: Int64 = 5 << 20

    /// The size of each part but the last; at least ``minimumPartSize`` (a smaller value is raised to it), and
    /// raised further for a file that would otherwise need more than 10,000 parts. 8 MiB by default.
    package var partSize: Int64
    /// Files of at least this size go up in parts; smaller ones in one PutObject. 8 MiB by default.
    package var multipartThreshold: Int64
    /// The most parts in flight at once, at least 1. 4 by default. No part is held in memory: each is read from the
    /// file for its checksum, then again (from the page cache) as it is sent.
    package var maxConcurrentParts: Int
    /// Retries of each request: connection errors, resets, truncated answers, 5xx, SlowDown (with its
    /// `Retry-After`), and a conditional write's `409 ConditionalRequestConflict`.
    package var retryPolicy: RetryPolicy
    /// The network gate (the same rule as a ``Downloader``'s).
    package var networkPolicy: NetworkPolicy
    /// The checksum every request carries: per part, and over the whole object. CRC-32C by default. With
    /// ``S3ChecksumAlgorithm/sha256`` a multipart object keeps only a checksum of its parts' checksums.
    package var checksum: S3ChecksumAlgorithm
    /// The shortest time between two progress reports of one upload, in milliseconds.
    package var progressInterval: Int

    /// - Parameters:
    ///   - partSize: Part size (at least 5 MiB).
    ///   - multipartThreshold: Size from which a file goes up in parts.
    ///   - maxConcurrentParts: Parts in flight at once.
    ///   - retryPolicy: Retry budget and backoff.
    ///   - networkPolicy: The network gate.
    ///   - checksum: The checksum algorithm.
    ///   - progressInterval: Milliseconds between progress reports.
    package init(
        partSize: Int64 = 8 << 20, multipartThreshold: Int64? = nil, maxConcurrentParts: Int = 4,
        retryPolicy: RetryPolicy = RetryPolicy(), networkPolicy: NetworkPolicy = .allowed,
        checksum: S3ChecksumAlgorithm = .crc32c, progressInterval: Int = 100
    ) {
        self.partSize = max(Self.minimumPartSize, partSize)
        self.multipartThreshold = multipartThreshold ?? self.partSize
        self.maxConcurrentParts = max(1, maxConcurrentParts)
        self.retryPolicy = retryPolicy
        self.networkPolicy = networkPolicy
        self.checksum = checksum
        self.progressInterval = max(0, progressInterval)
    }

    /// The part size for a file of `size` bytes: at least ``minimumPartSize``, and large enough (in whole MiB)
    /// for at most 10,000 parts.
    func partSize(forFileOf size: Int64) -> Int64 {
        var part = max(Self.minimumPartSize, partSize)
        let mib: Int64 = 1 << 20
        if (size + part - 1) / part > 10_000 {
            part = ((size + 9_999) / 10_000 + mib - 1) / mib * mib
        }
        return part
    }
}
