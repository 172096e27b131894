package import Foundation

/// What the transfer layer tells whoever embeds it about its requests — retries and their cause, the status of
/// every response — so that a library can log and count them (the transfer layer itself neither logs nor
/// counts). Called on whichever thread or task made the request; the closures must be quick and must not block.
/// Nothing passed carries a secret: a request is named by its method and path (no query, no signature).
package final class TransferObserver: Sendable, Hashable {
    /// A failed attempt that will be tried again.
    package struct Retry: Sendable {
        /// `GET`, `PUT`… and the object's path (`/bucket/key`, percent-encoded), or a download's key.
        package var request: String
        /// The failed attempt's number (1 for the first).
        package var attempt: Int
        /// Why it failed.
        package var cause: S3Error
        /// How long the next attempt waits, in seconds.
        package var wait: TimeInterval
    }

    /// One attempt of a request that has ended, answered or not.
    package struct Request: Sendable {
        /// `GET`, `PUT`…
        package var method: String
        /// The request's URL (with its query; never logged as it is — see ``path``).
        let url: String
        /// The attempt's number (1 for the first).
        package var attempt: Int
        /// The response's status; nil when none came (the connection failed).
        package var status: Int?
        /// Body bytes sent.
        package var bytesSent: Int64
        /// Body bytes received.
        package var bytesReceived: Int64
        /// From the start of the attempt to its end, in seconds.
        package var duration: TimeInterval
        /// Why the attempt failed, if it did.
        package var failure: S3Error?

        package init(
            method: String, url: String, attempt: Int, status: Int?, bytesSent: Int64, bytesReceived: Int64,
            duration: TimeInterval, failure: S3Error? = nil
        ) {
            self.method = method
            self.url = url
            self.attempt = attempt
            self.status = status
            self.bytesSent = bytesSent
            self.bytesReceived = bytesReceived
            self.duration = duration
            self.failure = failure
        }

        /// The URL's path (`/bucket/key` or `/key`, percent-encoded), without host or query: a request's key and
        /// nothing of its signature.
        package var path: String { String(TransferObserver.name(method: "", url: url).dropFirst()) }
    }

    let onRetry: @Sendable (Retry) -> Void
    let onResponse: @Sendable (_ method: String, _ status: Int) -> Void
    let onRequest: @Sendable (Request) -> Void

    package init(
        onRetry: @escaping @Sendable (Retry) -> Void,
        onResponse: @escaping @Sendable (_ method: String, _ status: Int) -> Void = { _, _ in },
        onRequest: @escaping @Sendable (Request) -> Void = { _ in }
    ) {
        self.onRetry = onRetry
        self.onResponse = onResponse
        self.onRequest = onRequest
    }

    /// Tells of an attempt that started at `started` (``now()``) and has just ended.
    func ended(
        _ request: HTTPRequest, attempt: Int, status: Int?, received: Int64, started: UInt64, failure: S3Error?
    ) {
        let sent = request.body.map { Int64($0.count) } ?? request.bodyFile?.count ?? 0
        onRequest(
            Request(
                method: request.method, url: request.url, attempt: attempt, status: status, bytesSent: sent,
                bytesReceived: received, duration: Double(Self.now() &- started) / 1e9, failure: failure))
    }

    /// What tells of one streamed attempt (a download's GET) when it ends.
    func attemptReporter(_ request: HTTPRequest, attempt: Int) -> AttemptReporter {
        AttemptReporter(observer: self, method: request.method, url: request.url, attempt: attempt, started: Self.now())
    }

    /// Tells the observer of the end of one streamed attempt, from the handler that received it.
    struct AttemptReporter: Sendable {
        let observer: TransferObserver
        let method: String
        let url: String
        let attempt: Int
        let started: UInt64

        func ended(status: Int?, received: Int64, failure: S3Error?) {
            observer.onRequest(
                Request(
                    method: method, url: url, attempt: attempt, status: status, bytesSent: 0, bytesReceived: received,
                    duration: Double(TransferObserver.now() &- started) / 1e9, failure: failure))
        }
    }

    /// A monotonic clock reading in nanoseconds, for ``ended(_:attempt:status:received:started:failure:)``.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// `METHOD /path` of a request URL, without its query (where a presigned request keeps its signature).
    static func name(method: String, url: String) -> String {
        var path = Substring(url)
        if let scheme = path.range(of: "://") {
            path = path[scheme.upperBound...]
            path = path.firstIndex(of: "/").map { path[$0...] } ?? "/"
        }
        if let query = path.firstIndex(of: "?") { path = path[..<query] }
        return method + " " + path
    }

    package static func == (a: TransferObserver, b: TransferObserver) -> Bool { a === b }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
