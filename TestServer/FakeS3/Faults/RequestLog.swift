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
    /// The response status code.
    public var status: Int
    /// Body bytes the server sent, or, for a body cut short on purpose by a fault, the bytes it sent
    /// before cutting.
    public var bytesSent: Int64
    /// When the request arrived.
    public var date: Date
}

/// Every request the server answered, in the order their responses started. Thread-safe.
///
/// The log keeps the most recent ``capacity`` entries, so a long-running server's memory stays bounded.
///
/// An entry is recorded before the first byte of its response is written, so a client that has
/// received a response always finds its entry here. Admin requests (`/_fake-s3/…`) are not logged.
public final class RequestLog: Sendable {
    private let storage = Locked<[RequestLogEntry]>([])

    /// How many entries are kept; older ones are dropped first.
    public static let capacity = 100_000

    init() {}

    /// A snapshot of the entries (at most ``capacity``, the most recent), oldest first.
    public func entries() -> [RequestLogEntry] { storage.withLock { Array($0.suffix(Self.capacity)) } }

    /// Forgets every entry.
    public func clear() { storage.withLock { $0.removeAll() } }

    func append(_ entry: RequestLogEntry) {
        storage.withLock { entries in
            entries.append(entry)
            // Trim in batches so appending stays amortised O(1).
            if entries.count >= Self.capacity + Self.capacity / 10 {
                entries.removeFirst(entries.count - Self.capacity)
            }
        }
    }
}
