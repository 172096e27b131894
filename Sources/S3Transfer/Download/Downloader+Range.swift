import AWSSigV4
import Essentials
package import Foundation

/// The outcome of ``Downloader/fetchRange(bucket:key:range:into:expectedETag:isUserRequest:networkAccessAllowed:)``.
package struct RangeFetchResult: Sendable, Hashable {
    /// The ETag every range in ``ranges`` belongs to.
    package var etag: String
    /// The size of the whole object.
    package var objectSize: Int64
    /// Every byte range now on disk and received whole under ``etag`` (sorted, merged).
    package var ranges: [Range<Int64>]
    /// The range this call made present (clamped to the object's size).
    package var fetched: Range<Int64>
    /// Whether the ranges cover the whole object (and the file could become the full original).
    package var isComplete: Bool { ranges == [0..<objectSize] || objectSize == 0 }
}

extension Downloader {
    /// Makes a byte range of an object present in a sparse part file, written at its offset with `pwrite(2)`.
    ///
    /// Ranges already on disk under the same ETag (listed in the sidecar `<partFile>.json`, which survives a
    /// restart) are not fetched again. A request sends `Range` and `If-Match` on the ETag the file's ranges
    /// belong to (or `expectedETag`); if the object changed, the file and sidecar are discarded and the call
    /// throws ``S3Error/objectChanged`` — ranges of two versions are never mixed. A server answering with the
    /// whole object instead is accepted: the whole object is written and verified. Calls for one part file
    /// run one after another. Retries follow the downloader's ``DownloaderConfiguration/retryPolicy``.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - range: The bytes wanted (clamped to the object's size).
    ///   - partFile: The sparse file (usually `<destination>.part`, which ``download(_:)`` can continue).
    ///   - expectedETag: The version required, if any.
    ///   - isUserRequest: Whether a user asked (for ``NetworkPolicy/userRequestsOnly``).
    ///   - networkAccessAllowed: Whether the network may be used; when refused, present ranges are still
    ///     reported, a missing one throws ``S3Error/networkAccessNotAllowed``.
    /// - Returns: The ranges present and their ETag.
    package func fetchRange(
        bucket: String, key: String, range: Range<Int64>, into partFile: URL, expectedETag: String? = nil,
        isUserRequest: Bool = true, networkAccessAllowed: Bool = true
    ) async throws(S3Error) -> RangeFetchResult {
        let path = partFile.standardizedFileURL.path
        let previous = rangeQueue.withLock { $0[path] }
        let mine = Task<Result<RangeFetchResult, S3Error>, Never> {
            _ = await previous?.value
            do throws(S3Error) {
                return .success(
                    try await performRangeFetch(
                        bucket: bucket, key: key, range: range, partFile: partFile, expectedETag: expectedETag,
                        isUserRequest: isUserRequest, networkAccessAllowed: networkAccessAllowed))
            } catch {
                return .failure(error)
            }
        }
        rangeQueue.withLock { $0[path] = Task { _ = await mine.value } }
        let result = await withTaskCancellationHandler {
            await mine.value
        } onCancel: {
            mine.cancel()
        }
        return try result.get()
    }

    private func performRangeFetch(
        bucket: String, key: String, range: Range<Int64>, partFile: URL, expectedETag: String?,
        isUserRequest: Bool, networkAccessAllowed: Bool
    ) async throws(S3Error) -> RangeFetchResult {
        guard range.lowerBound >= 0, !range.isEmpty else { throw .invalidRange }
        let partPath = partFile.path
        let required = expectedETag.map(S3ETag.unquoted)
        var sidecar = PartSidecar.load(forPart: partPath)
        if let existing = sidecar, let required, existing.etag != required {
            unlink(partPath)
            PartSidecar.remove(forPart: partPath)
            sidecar = nil
        }
        var wanted = range
        if let size = sidecar?.size { wanted = range.clamped(to: 0..<size) }
        if let sidecar, let size = sidecar.size,
            wanted.isEmpty
                || sidecar.byteRanges.contains(where: {
                    $0.contains(wanted.lowerBound) && $0.upperBound >= wanted.upperBound
                })
        {
            return RangeFetchResult(etag: sidecar.etag, objectSize: size, ranges: sidecar.byteRanges, fetched: wanted)
        }
        let request = DownloadRequest(
            bucket: bucket, key: key, destination: partFile, isUserRequest: isUserRequest,
            networkAccessAllowed: networkAccessAllowed)
        guard isNetworkAllowed(for: request) else { throw .networkAccessNotAllowed }

        let writer = PartFileWriter(path: partPath, allowsFileSystemSync: configuration.syncsFileSystemForGroups)
        _ = try await writer.open(truncate: false).get()
        var etag = sidecar?.etag ?? required
        var total = sidecar?.size
        var checksums = sidecar?.checksums ?? S3Checksums()
        var ranges = sidecar?.byteRanges ?? []
        var start = wanted.lowerBound
        var retries = RetryState(
            policy: configuration.retryPolicy, observer: configuration.observer, request: "GET " + request.key)
        guard await scheduler.acquire(priority: .userInitiated) else { throw .cancelled }
        defer { scheduler.release() }
        while true {
            if Task.isCancelled { throw .cancelled }
            var headers: [(name: String, value: String)] = [("range", "bytes=\(start)-\(wanted.upperBound - 1)")]
            if let etag { headers.append(("if-match", S3ETag.quoted(etag))) }
            let expectation = DownloadStreamHandler.Expectation(
                offset: start, rangeEnd: wanted.upperBound, knownETag: etag, knownTotal: total, requiredETag: required,
                requiredSize: nil, acceptsWholeObject: true, integrity: configuration.integrity)
            writer.seek(to: start)
            let outcome = await rangeAttempt(
                writer: writer, expectation: expectation, headers: headers, bucket: bucket, key: key,
                number: retries.failedAttempts + 1)
            switch outcome {
            case .completed(let head):
                etag = head.etag
                total = head.total
                if head.status == 200 {
                    checksums = head.checksums
                    guard writer.written == head.total else { break }
                    if let mismatch = writer.hasher?.firstMismatch() { throw mismatch }
                    try await writer.sync().get()
                    ranges = [0..<head.total]
                    start = wanted.upperBound
                } else {
                    let end = start + writer.written
                    ranges = ByteRangeSet(ranges + [start..<end]).ranges
                    try await writer.sync().get()
                    guard end == head.start + head.length else {
                        start = end
                        break
                    }
                    start = end
                }
                try PartSidecar(etag: head.etag, size: head.total, checksums: checksums, ranges: ranges).save(
                    forPart: partPath)
                if start >= min(wanted.upperBound, head.total) {
                    let fetched = wanted.clamped(to: 0..<head.total)
                    return RangeFetchResult(etag: head.etag, objectSize: head.total, ranges: ranges, fetched: fetched)
                }
                continue
            case .failed(let error, let head, let retryAfter):
                let progressed = head?.status == 206 && writer.written > 0
                if let head, head.status == 206, writer.written > 0, let currentETag = etag ?? Optional(head.etag) {
                    // Keep what arrived whole before the failure.
                    ranges = ByteRangeSet(ranges + [start..<(start + writer.written)]).ranges
                    start += writer.written
                    etag = currentETag
                    total = head.total
                    // try?: a resume point only: without it those bytes are fetched again
                    try? PartSidecar(etag: currentETag, size: head.total, checksums: checksums, ranges: ranges)
                        .save(forPart: partPath)
                }
                if case .preconditionFailed = error { throw discardingPart(partPath) }
                if case .objectChanged = error { throw discardingPart(partPath) }
                try await retries.backOffOrThrow(
                    error, keptBytes: progressed ? writer.written : 0, serverAsked: retryAfter)
                continue
            }
            // A response that ended short without a transport error: count it like one.
            try await retries.backOffOrThrow(
                .transport(curlCode: 18, message: "the range arrived incomplete"), retryingAlso: true)
        }
    }

    /// Removes the part file and its sidecar of a range whose object changed, and returns the error to throw.
    private func discardingPart(_ partPath: String) -> S3Error {
        unlink(partPath)
        PartSidecar.remove(forPart: partPath)
        return .objectChanged
    }

    private func rangeAttempt(
        writer: PartFileWriter, expectation: DownloadStreamHandler.Expectation,
        headers: [(name: String, value: String)], bucket: String, key: String, number: Int
    ) async -> DownloadAttemptOutcome {
        let credentials: AWSCredentials?
        do {
            credentials = try await client.signingCredentials()
        } catch {
            return .failed(error, nil)
        }
        let engine = client.engine
        let id = engine.makeTransferID()
        let client = self.client
        let request = client.makeRequest(
            method: "GET", bucket: bucket, key: key, headers: headers, stallTimeout: configuration.stallTimeout,
            credentials: credentials)
        let reporter = configuration.observer?.attemptReporter(request, attempt: number)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<DownloadAttemptOutcome, Never>) in
                let handler = DownloadStreamHandler(
                    client: client, writer: writer, expectation: expectation, reporter: reporter, onBytes: { _ in },
                    completion: { continuation.resume(returning: $0) })
                writer.attach(engine, id)
                engine.start(request, handler: handler, id: id)
            }
        } onCancel: {
            engine.cancel(id)
        }
        await writer.drain()
        return outcome
    }
}
