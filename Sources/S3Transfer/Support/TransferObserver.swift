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

    let onRetry: @Sendable (Retry) -> Void
    let onResponse: @Sendable (_ method: String, _ status: Int) -> Void

    package init(
        onRetry: @escaping @Sendable (Retry) -> Void,
        onResponse: @escaping @Sendable (_ method: String, _ status: Int) -> Void = { _, _ in }
    ) {
        self.onRetry = onRetry
        self.onResponse = onResponse
    }

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
