import Essentials
import Foundation

/// Uploads files as objects: one PutObject below ``UploaderConfiguration/multipartThreshold``, a multipart upload
/// from it — resumable from a checkpoint the caller keeps, with every part and the whole object protected by a
/// checksum (CRC-32C by default) that the service verifies.
///
/// Every method may be called from any thread or task, and uploads run concurrently. The file is only
/// read, never changed; a file whose size or modification time changes during its upload fails it (nothing is
/// completed). A create-only upload (the default) never replaces an object: a key that holds one ends the upload
/// with ``UploadOutcome/keyExists(_:)``. Requests are retried per ``UploaderConfiguration/retryPolicy``
/// (connection resets, truncated answers, 5xx, SlowDown with its `Retry-After`, a conditional write's
/// `409 ConditionalRequestConflict`), each part on its own, and a part the service acknowledged is never sent
/// again — in this run or one resumed from a checkpoint. Errors are ``S3Error``s only.
///
/// Memory stays flat whatever the file's size: bodies are read from the file by the engine as they are sent
/// (each part is read once before for its checksum, so the engine's reads hit the page cache), and every request
/// is signed over `UNSIGNED-PAYLOAD` (no SHA-256 pass; the checksum protects the bytes instead).
package final class Uploader: Sendable {
    /// The client requests are signed and sent with.
    package let client: S3Client
    /// The settings the uploader was made with (its network policy can change later).
    package let configuration: UploaderConfiguration
    private let policy: LockedBox<NetworkPolicy>

    /// - Parameters:
    ///   - client: The S3 client (and its engine) to use.
    ///   - configuration: Part size, threshold, parallelism, retries, checksum, network policy.
    package init(client: S3Client, configuration: UploaderConfiguration = UploaderConfiguration()) {
        self.client = client
        self.configuration = configuration
        policy = LockedBox(configuration.networkPolicy)
    }

    /// The network gate now in force; changing it affects uploads started afterwards.
    package var networkPolicy: NetworkPolicy {
        get { policy.withLock { $0 } }
        set { policy.withLock { $0 = newValue } }
    }

    /// Whether the gate lets this request use the network (the same rule as
    /// ``Downloader/isNetworkAllowed(for:)``).
    package func isNetworkAllowed(for request: UploadRequest) -> Bool {
        guard request.networkAccessAllowed else { return false }
        switch networkPolicy {
        case .offline: return false
        case .allowed: return true
        case .userRequestsOnly: return request.isUserRequest
        }
    }

    /// Uploads a file, or resumes its multipart upload.
    ///
    /// A request the network gate refuses fails at once with ``S3Error/networkAccessNotAllowed``, before the file
    /// is opened or a connection made. A create-only multipart upload first asks whether the key holds an object
    /// (HeadObject), so that a taken key costs no upload.
    ///
    /// A multipart upload calls `checkpoint` once it has started (with no parts yet), then after each part the
    /// service acknowledged, and with nil once the upload is completed or given up (the key holds an object, or
    /// the checkpoint handed in cannot resume this file). The calls are made one at a time, on the upload's task,
    /// in the order the parts were acknowledged; the caller persists the latest and hands it back as
    /// `resumingFrom` in a later run. A checkpoint that throws stops the upload (the error,
    /// if not an ``S3Error``, becomes ``S3Error/fileSystem(path:errno:)`` with `EIO`); when the very first one
    /// throws, the new upload is aborted, as nothing records it.
    ///
    /// Resuming: the upload's parts are listed (ListParts), and a part of the checkpoint counts as acknowledged
    /// only if the service lists it with the same ETag and size and the file still has the bytes it was
    /// computed from (its checksum); only the other parts are sent. An upload the service no longer knows
    /// (expired, aborted: `NoSuchUpload`), or a checkpoint of another size, starts a new upload and replaces the
    /// checkpoint — unless the key already holds this file (the same size and full-object checksum), completed by
    /// the run that left the checkpoint: then the upload is `.created` at once.
    ///
    /// The progress handler's stop flag, or cancelling the calling task, stops the upload with
    /// ``S3Error/cancelled``, leaving the multipart upload in place to resume (or to ``abort(_:bucket:)``); so do
    /// other failures. Every progress report has been delivered when this returns.
    /// - Parameters:
    ///   - request: What, where, how.
    ///   - resumingFrom: A checkpoint of an earlier run for the same key, or nil.
    ///   - checkpoint: Persists the upload's state (see above).
    /// - Returns: ``UploadOutcome/created(etag:checksums:)``, or ``UploadOutcome/keyExists(_:)`` for a create-only
    ///   upload to a key that holds an object.
    package func upload(
        _ request: UploadRequest, resumingFrom: UploadCheckpoint?,
        checkpoint: @escaping @Sendable (UploadCheckpoint?) throws -> Void
    ) async throws(S3Error) -> UploadOutcome {
        guard isNetworkAllowed(for: request) else { throw .networkAccessNotAllowed }
        let source = try UploadSource(url: request.file)
        let reporter = UploadProgressReporter(
            request: request, total: source.size, intervalMilliseconds: configuration.progressInterval)
        let job = UploadJob(
            client: client, configuration: configuration, request: request, source: source, reporter: reporter,
            persist: checkpoint)
        let task = Task { await job.run(resumingFrom: resumingFrom) }
        reporter.onStop { task.cancel() }
        let result = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        await reporter.drain()
        return try result.get()
    }

    /// Abandons a multipart upload and frees its parts (AbortMultipartUpload). An upload the service no longer
    /// knows counts as aborted. Refused with ``S3Error/networkAccessNotAllowed`` only while the policy is
    /// ``NetworkPolicy/offline``.
    /// - Parameters:
    ///   - checkpoint: The upload's latest checkpoint.
    ///   - bucket: Its bucket.
    package func abort(_ checkpoint: UploadCheckpoint, bucket: String) async throws(S3Error) {
        guard networkPolicy != .offline else { throw .networkAccessNotAllowed }
        try await client.abortUpload(
            bucket: bucket, key: checkpoint.key, uploadId: checkpoint.uploadId, policy: configuration.retryPolicy)
    }
}
