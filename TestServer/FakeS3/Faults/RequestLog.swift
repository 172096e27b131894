import Essentials
import Foundation

/// One request as the server answered it.
public struct RequestLogEntry: Sendable, Hashable {
    /// The HTTP method.
    public var method: String
    /// The addressed bucket, if any.
    public var bucket: String?
    /// The object key, if any.
    public var key: String?
    /// The raw query string (without `?`), empty when none.
    public var query: String
    /// The `Range` header as sent.
    public var rangeHeader: String?
    /// The `If-Match` header as sent.
    public var ifMatch: String?
    /// The `If-None-Match` header as sent.
    public var ifNoneMatch: String?
    /// The response status code; 0 when a fault left the request without an answer (an upload cut while it
    /// arrived, or a dropped response).
    public var status: Int
    /// Body bytes written to the socket. While the response is being written (``isComplete`` false) this is
    /// the number the response is to carry (for a body cut short on purpose by a fault, the bytes before the
    /// cut); once it is complete, the bytes whose writes to the socket succeeded — less when the client went
    /// away mid-body, counted in whole chunks of at most 1 MiB (so it may fall short by less than 1 MiB,
    /// never exceed what was written).
    public var bytesSent: Int64
    /// When the request arrived.
    public var date: Date
    /// True once the response's last write to the socket completed or failed: ``bytesSent`` is final.
    public var isComplete = false
    /// The `Host` header as sent (`127.0.0.1:9000`, `photos.localhost:9000`).
    public var host: String? = nil
    /// Whether the bucket came from the `Host` header (virtual-hosted addressing) rather than from the path.
    public var isVirtualHosted = false

    /// The decoded value of a query parameter, nil when the query has none.
    public func queryValue(_ name: String) -> String? {
        for item in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0].removingPercentEncoding == name else { continue }
            return parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? String(parts[1]) : ""
        }
        return nil
    }

    /// The `partNumber` of an UploadPart (or of a GET of one part), nil for other requests.
    public var partNumber: Int? { queryValue("partNumber").flatMap { Int($0) } }

    /// The `uploadId` of a multipart request (UploadPart, ListParts, CompleteMultipartUpload,
    /// AbortMultipartUpload), nil for other requests.
    public var uploadId: String? { queryValue("uploadId") }

    /// Whether this is an UploadPart (a PUT with a part number and an upload id).
    public var isUploadPart: Bool { method == "PUT" && partNumber != nil && uploadId != nil }
}

/// Every request the server answered, in the order their responses started. Thread-safe.
///
/// The log keeps the most recent ``capacity`` entries, so a long-running server's memory stays bounded.
///
/// An entry is recorded before the first byte of its response is written, so a client that has
/// received a response always finds its entry here. A request a fault leaves without an answer is logged with
/// status 0. Admin requests (`/_fake-s3/…`) are not logged.
public final class RequestLog: Sendable {
    private struct Storage {
        var entries: [RequestLogEntry] = []
        /// The sequence number of `entries[0]`: entries keep their number while older ones are trimmed.
        var firstSequence = 0
    }

    private let storage = LockedBox(Storage())

    /// How many entries are kept; older ones are dropped first.
    public static let capacity = 100_000

    init() {}

    /// A snapshot of the entries (at most ``capacity``, the most recent), oldest first.
    public func entries() -> [RequestLogEntry] { storage.withLock { Array($0.entries.suffix(Self.capacity)) } }

    /// Forgets every entry.
    public func clear() {
        storage.withLock {
            $0.firstSequence += $0.entries.count
            $0.entries.removeAll()
        }
    }

    /// Appends an entry; returns its sequence number for ``complete(_:bytesSent:)``.
    @discardableResult
    func append(_ entry: RequestLogEntry) -> Int {
        storage.withLock { storage in
            storage.entries.append(entry)
            let sequence = storage.firstSequence + storage.entries.count - 1
            // Trim in batches so appending stays amortised O(1).
            if storage.entries.count >= Self.capacity + Self.capacity / 10 {
                let dropped = storage.entries.count - Self.capacity
                storage.entries.removeFirst(dropped)
                storage.firstSequence += dropped
            }
            return sequence
        }
    }

    /// Records the bytes a response actually wrote and marks it complete (nothing when it was trimmed or cleared).
    func complete(_ sequence: Int, bytesSent: Int64) {
        storage.withLock { storage in
            let index = sequence - storage.firstSequence
            guard storage.entries.indices.contains(index) else { return }
            storage.entries[index].bytesSent = bytesSent
            storage.entries[index].isComplete = true
        }
    }
}

/// The body bytes of one response as its writes to the socket succeed or fail; lives on the channel's event
/// loop. The log entry gets the final count once, when the response's last write completed or failed.
final class SentBytes {
    private let log: RequestLog?
    private let sequence: Int
    /// The bytes the response is to carry.
    let planned: Int64
    /// Bytes of chunks whose write failed.
    var failed: Int64 = 0
    private var done = false

    init(log: RequestLog?, sequence: Int, planned: Int64) {
        self.log = log
        self.sequence = sequence
        self.planned = planned
    }

    /// The response ended: what was written is what was planned less the failed chunks.
    func complete() { complete(bytesSent: planned - failed) }

    /// The response ended after `bytesSent` bytes (the first call wins).
    func complete(bytesSent: Int64) {
        guard !done else { return }
        done = true
        log?.complete(sequence, bytesSent: max(0, bytesSent))
    }
}
