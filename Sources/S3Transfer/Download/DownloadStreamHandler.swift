import Essentials
import Foundation

/// What one GET attempt learned from its response head.
struct DownloadAttemptHead: Sendable {
    var status: Int
    var etag: String
    var checksums: S3Checksums
    /// The size of the whole object.
    var total: Int64
    /// The first byte of the body within the object.
    var start: Int64
    /// The number of body bytes announced.
    var length: Int64
}

/// The end of one GET attempt.
enum DownloadAttemptOutcome: Sendable {
    case completed(DownloadAttemptHead)
    /// The error, the head of the object's response (200 or 206) if one came, and how long an error response
    /// asked to wait before the next attempt (`Retry-After`).
    case failed(S3Error, DownloadAttemptHead?, retryAfter: TimeInterval? = nil)
}

/// Receives one GET attempt on the engine thread and streams a successful body into a ``PartFileWriter``.
/// Error bodies are collected in memory (they are small) to become an ``S3Error``.
// @unchecked: its mutable state is touched on the engine thread only (checked by `ThreadRole.httpEngine` in
// debug builds) or before the attempt starts.
final class DownloadStreamHandler: HTTPResponseHandler, HTTPBatchedCompletion, @unchecked Sendable {
    /// What the response must match.
    struct Expectation: Sendable {
        /// The byte asked to start at (a `Range` request when > 0 or when `rangeEnd` is set).
        var offset: Int64
        /// The end (exclusive) of a bounded range request.
        var rangeEnd: Int64?
        /// The ETag the bytes on disk belong to.
        var knownETag: String?
        /// The object size already known.
        var knownTotal: Int64?
        /// A version the caller insists on (a different one is ``S3Error/objectChanged``).
        var requiredETag: String?
        /// A size the caller insists on.
        var requiredSize: Int64?
        /// Whether a 200 (whole object) is acceptable where a range was asked for (full downloads: yes).
        var acceptsWholeObject: Bool
        /// The checks to compute over a whole object.
        var integrity: IntegrityChecks
    }

    /// What ``didReceiveHead(_:)`` reads from a successful response (see ``S3Checksums/init(head:)``).
    static let headersRead = HTTPHeaderFilter(
        names: ["etag", "content-length", "content-range"], prefixes: ["x-amz-checksum-"])

    private let client: S3Client
    private let writer: PartFileWriter
    private let expectation: Expectation
    private let completion: @Sendable (DownloadAttemptOutcome) -> Void
    private let onBytes: @Sendable (Int) -> Void
    private let onHead: @Sendable (DownloadAttemptHead) -> Void

    // Engine thread only.
    private var head: HTTPResponseHead?
    private var attemptHead: DownloadAttemptHead?
    private var failure: S3Error?
    private var errorBody = Data()
    private var isErrorResponse = false
    /// Body bytes received, error bodies included (for ``reporter``).
    private var receivedBytes: Int64 = 0
    /// Tells the transfer observer of the attempt's end.
    private let reporter: TransferObserver.AttemptReporter?

    init(
        client: S3Client, writer: PartFileWriter, expectation: Expectation,
        reporter: TransferObserver.AttemptReporter? = nil,
        onHead: @escaping @Sendable (DownloadAttemptHead) -> Void = { _ in },
        onBytes: @escaping @Sendable (Int) -> Void, completion: @escaping @Sendable (DownloadAttemptOutcome) -> Void
    ) {
        self.reporter = reporter
        self.onHead = onHead
        self.client = client
        self.writer = writer
        self.expectation = expectation
        self.onBytes = onBytes
        self.completion = completion
    }

    func didReceiveHead(_ head: HTTPResponseHead) -> Bool {
        ThreadRole.httpEngine.assertCurrent()
        self.head = head
        guard head.status == 200 || head.status == 206 else {
            isErrorResponse = true
            return true
        }
        guard let rawETag = head["etag"] else {
            failure = .malformedResponse("GetObject response without an ETag")
            return false
        }
        let etag = S3ETag.unquoted(rawETag)
        let checksums = S3Checksums(head: head)
        let isRange = expectation.offset > 0 || expectation.rangeEnd != nil
        if let required = expectation.requiredETag, S3ETag.unquoted(required) != etag {
            failure = .objectChanged
            return false
        }
        if head.status == 200 {
            guard let length = head["content-length"].flatMap({ Int64($0) }), length >= 0 else {
                failure = .malformedResponse("GetObject response without a Content-Length")
                return false
            }
            if isRange && !expectation.acceptsWholeObject {
                failure = .malformedResponse("the service sent the whole object where a range was asked for")
                return false
            }
            if let required = expectation.requiredSize, required != length {
                failure = .objectChanged
                return false
            }
            attemptHead = DownloadAttemptHead(
                status: 200, etag: etag, checksums: checksums, total: length, start: 0, length: length)
            // The whole object replaces whatever was on disk (also when a range was asked for).
            if expectation.rangeEnd == nil {
                writer.restart(
                    hasher: IntegrityHasher(etag: etag, checksums: checksums, policy: expectation.integrity))
            } else {
                // A bounded range answered with the whole object: keep it all, at its place, and verify it.
                writer.seek(
                    to: 0, hasher: IntegrityHasher(etag: etag, checksums: checksums, policy: expectation.integrity))
            }
        } else {
            guard isRange, let range = head["content-range"].flatMap(ContentRange.init(header:)),
                let total = range.total
            else {
                failure = .malformedResponse("206 response without a usable Content-Range")
                return false
            }
            if let known = expectation.knownETag, known != etag {
                failure = .objectChanged
                return false
            }
            if let knownTotal = expectation.knownTotal, knownTotal != total {
                failure = .objectChanged
                return false
            }
            let wantedEnd = min(expectation.rangeEnd ?? total, total)
            guard range.range.lowerBound == expectation.offset, range.range.upperBound == wantedEnd else {
                failure = .malformedResponse(
                    "the service sent bytes \(range.range) where \(expectation.offset)..<\(wantedEnd) was asked for")
                return false
            }
            attemptHead = DownloadAttemptHead(
                status: 206, etag: etag, checksums: checksums, total: total, start: range.range.lowerBound,
                length: Int64(range.range.count))
        }
        if let attemptHead {
            writer.expectBody(length: attemptHead.length)
            onHead(attemptHead)
        }
        return true
    }

    func didReceiveBody(_ bytes: UnsafeRawBufferPointer) -> HTTPBodyDisposition {
        ThreadRole.httpEngine.assertCurrent()
        receivedBytes += Int64(bytes.count)
        if isErrorResponse {
            if errorBody.count < 1 << 20 { errorBody.append(bytes.assumingMemoryBound(to: UInt8.self)) }
            return .consumed
        }
        let disposition = writer.accept(bytes)
        if case .consumed = disposition { onBytes(bytes.count) }
        return disposition
    }

    func addBatchedWork(to batch: MD5Batch) {
        guard !isErrorResponse, failure == nil, let hasher = writer.hasher, hasher.bodyForBatchedMD5 != nil else {
            return
        }
        batch.add(hasher)
    }

    func didComplete(_ result: Result<Void, HTTPTransportError>) {
        ThreadRole.httpEngine.assertCurrent()
        writer.flush()
        let outcome = outcome(of: result)
        if let reporter {
            let failure: S3Error?
            if case .failed(let error, _, _) = outcome { failure = error } else { failure = nil }
            reporter.ended(status: head?.status, received: receivedBytes, failure: failure)
        }
        completion(outcome)
    }

    private func outcome(of result: Result<Void, HTTPTransportError>) -> DownloadAttemptOutcome {
        if let failure { return .failed(failure, attemptHead) }
        switch result {
        case .failure(let error):
            if error == .aborted, let code = writer.writeError {
                return .failed(.fileSystem(path: writer.path, errno: code), attemptHead)
            }
            return .failed(S3Error(error), attemptHead)
        case .success:
            if isErrorResponse, let head {
                return .failed(client.error(for: head, body: errorBody), nil, retryAfter: S3Client.retryAfter(head))
            }
            if let attemptHead { return .completed(attemptHead) }
            return .failed(.malformedResponse("no response head"), nil)
        }
    }
}
