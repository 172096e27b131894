package import AWSSigV4
import Essentials
package import Foundation

/// An S3 client on an ``HTTPEngine``: signs every request (afresh on every attempt), maps error responses to
/// ``S3Error`` and retries what may succeed on another attempt (``RetryPolicy``).
///
/// Thread-safe; every operation may be called from any task. Operations throw ``S3Error`` only.
/// A `RequestTimeTooSkewed` answer is fixed by measuring the clock offset from the response's `Date` header
/// and retrying once re-signed; the offset is kept for every later request.
package final class S3Client: Sendable {
    /// The settings the client was made with.
    package let configuration: S3ClientConfiguration
    /// The engine that moves the bytes (shared with a ``Downloader`` built on this client).
    package let engine: HTTPEngine
    private let clockOffset = LockedBox<TimeInterval>(0)
    /// The `Date` of the last error answer with one, and this computer's clock when it came.
    private let errorAnswerClock = LockedBox<(service: Date, local: Date)?>(nil)
    /// How this endpoint wants the ETag of a write's `If-Match` (``IfMatchForm``): learnt once, kept for every
    /// later write.
    let ifMatchForm = LockedBox<IfMatchForm>(.quoted)
    /// This computer's clock (replaceable in tests to simulate a wrong clock).
    let localClock: @Sendable () -> Date
    /// The endpoint's scheme, host (bracketed when IPv6) and `:port` unless the scheme's default: read once,
    /// as every request needs them and `URL`'s accessors parse on each call.
    private let endpointScheme: String
    private let endpointHost: String
    private let endpointPortSuffix: String

    /// - Parameters:
    ///   - configuration: Endpoint, region, credentials, timeouts.
    ///   - engine: An engine to share; by default the client makes its own from the configuration.
    package convenience init(configuration: S3ClientConfiguration, engine: HTTPEngine? = nil) {
        self.init(configuration: configuration, engine: engine, localClock: { Date() })
    }

    init(configuration: S3ClientConfiguration, engine: HTTPEngine?, localClock: @escaping @Sendable () -> Date) {
        self.localClock = localClock
        self.configuration = configuration
        let endpoint = configuration.endpoint
        let scheme = endpoint.scheme?.lowercased() ?? "https"
        endpointScheme = scheme
        let host = endpoint.host ?? "localhost"
        endpointHost = host.contains(":") ? "[\(host)]" : host  // IPv6 literal
        if let port = endpoint.port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) {
            endpointPortSuffix = ":\(port)"
        } else {
            endpointPortSuffix = ""
        }
        self.engine =
            engine
            ?? HTTPEngine(
                configuration: HTTPEngineConfiguration(
                    maxTotalConnections: configuration.maxConnections,
                    maxConnectionsPerHost: configuration.maxConnections,
                    connectTimeout: configuration.connectTimeout, stallTimeout: configuration.stallTimeout,
                    verifyTLS: configuration.verifyTLS, caBundlePath: configuration.caBundlePath))
    }

    /// The measured difference between the service's clock and this computer's, in seconds.
    package var measuredClockOffset: TimeInterval { clockOffset.withLock { $0 } }

    /// The current time as the service sees it.
    package var correctedNow: Date { localClock().addingTimeInterval(measuredClockOffset) }

    /// The service's clock as its last error answer with a `Date` header stated it, and this computer's when that
    /// answer came; nil before one. A request the service refused still shows how far apart the clocks are.
    package var lastErrorAnswerClock: (service: Date, local: Date)? { errorAnswerClock.withLock { $0 } }

    // MARK: Building requests

    /// The credentials to sign the next attempt with: those of the configuration, or the credential cache's
    /// (resolved on first use and refreshed ahead of their expiry; the wait is shared with every other request).
    /// nil signs nothing (anonymous requests).
    /// - Throws: ``S3Error/credentials(_:)`` when the cache has none to give.
    package func signingCredentials() async throws(S3Error) -> AWSCredentials? {
        guard let cache = configuration.credentialCache else { return configuration.credentials }
        do {
            return try await cache.current()
        } catch {
            throw .credentials(error)
        }
    }

    /// What ``signingCredentials()`` gives without waiting: the credentials of the configuration or those the
    /// cache holds and may use now (`ready(nil)` for anonymous requests), or `mustWait` when the cache has to
    /// resolve or refresh them first (the synchronous first attempt of a download then leaves it to its task).
    enum ImmediateCredentials {
        case ready(AWSCredentials?)
        case mustWait
    }

    /// ``signingCredentials()`` if it would not wait (see ``ImmediateCredentials``).
    func signingCredentialsWithoutWaiting() -> ImmediateCredentials {
        guard let cache = configuration.credentialCache else { return .ready(configuration.credentials) }
        return cache.currentWithoutWaiting().map { .ready($0) } ?? .mustWait
    }

    /// Builds and signs one request (with the corrected clock).
    /// - Parameter credentials: What to sign with (``signingCredentials()``); nil leaves the request unsigned.
    func makeRequest(
        method: String, bucket: String, key: String?, query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = [], body: Data? = nil, bodyFile: HTTPFileBody? = nil,
        payloadHash: String? = nil, stallTimeout: TimeInterval? = nil, credentials: AWSCredentials?
    ) -> HTTPRequest {
        let scheme = endpointScheme
        var host = endpointHost
        var path: String
        switch configuration.addressingStyle {
        case .path:
            path = "/" + bucket
            if let key { path += "/" + key }
        case .virtualHosted:
            host = bucket + "." + host
            path = "/" + (key ?? "")
        }
        host += endpointPortSuffix
        var url = "\(scheme)://\(host)\(SigV4.uriEncode(path, encodeSlash: false))"
        if !query.isEmpty { url += "?" + SigV4.canonicalQueryString(query) }
        var allHeaders = headers
        if let credentials {
            let signer = SigV4Signer(credentials: credentials, region: configuration.region)
            let hash = payloadHash ?? (body.map { SigV4.sha256Hex(data: $0) } ?? SigV4.emptyPayloadHash)
            allHeaders += signer.sign(
                method: method, path: path, query: query, host: host, headers: headers, payloadHash: hash,
                date: correctedNow)
        }
        var request = HTTPRequest(method: method, url: url, headers: allHeaders, body: body)
        request.bodyFile = bodyFile
        request.stallTimeout = stallTimeout
        return request
    }

    // MARK: Responses

    /// The error an unsuccessful response stands for; records the clock offset on a skew error.
    func error(for head: HTTPResponseHead, body: Data) -> S3Error {
        let region = head["x-amz-bucket-region"]
        let requestID = head["x-amz-request-id"]
        var result = S3Error.fromStatus(head.status, region: region, requestID: requestID)
        if let date = head["date"].flatMap(HTTPDate.parse) {
            let local = localClock()
            errorAnswerClock.withLock { $0 = (date, local) }
        }
        // try?: a body that is not XML is no error document: the status decides
        if !body.isEmpty, let root = try? S3XMLParser.parse(body), root.name == "Error",
            let code = root.child("Code")?.text
        {
            let message = root.child("Message")?.text ?? ""
            result = S3Error.fromService(
                code: code, message: message, status: head.status,
                requestID: root.child("RequestId")?.text ?? requestID,
                region: region ?? root.child("Region")?.text)
        }
        if result == .requestTimeTooSkewed {
            let serverDate =
                head["date"].flatMap(HTTPDate.parse)
                // try?: no server time to read: the offset is left as it was
                ?? ((try? S3XMLParser.parse(body))?.child("ServerTime").flatMap { HTTPDate.parseISO8601($0.text) })
            if let serverDate { clockOffset.withLock { $0 = serverDate.timeIntervalSince(localClock()) } }
        }
        return result
    }

    /// Sends one request built by `build` (called again for each attempt with the credentials of that attempt, so
    /// each is signed afresh) and returns a 2xx response; retries per ``S3ClientConfiguration/retryPolicy`` and
    /// once more after a clock-skew correction.
    func send(_ build: (_ credentials: AWSCredentials?) -> HTTPRequest) async throws(S3Error)
        -> (HTTPResponseHead, Data)
    {
        try await send(policy: configuration.retryPolicy, build)
    }

    /// The one retry loop of every request: sends the request `build` makes (called again for each attempt, with
    /// the credentials of that attempt from ``signingCredentials()``, so each is signed afresh — with refreshed
    /// credentials once the old ones near their expiry) and returns a 2xx response. A failure is retried when another attempt may cure it
    /// (``S3Error/isRetryable``, or `retryingAlso` says so), within `policy`'s budget and after its backoff (at
    /// least what a `Retry-After` asks); a clock-skew error is retried once more, re-signed with the corrected
    /// clock. Throws ``S3Error/cancelled`` when the task is cancelled.
    /// - Parameters:
    ///   - policy: Attempts and backoff.
    ///   - retryingAlso: Failures to retry besides the retryable ones (a conditional write's
    ///     `409 ConditionalRequestConflict`).
    ///   - failureIn2xx: The failure a 2xx response stands for, if any (S3 can answer CompleteMultipartUpload with
    ///     200 and an `<Error>` document); it is handled like an error response.
    ///   - build: Makes the request of one attempt, signed with the credentials given.
    /// - Throws: ``S3Error/credentials(_:)`` at once (not retried) when there are no credentials to sign with.
    func send(
        policy: RetryPolicy, retryingAlso: (S3Error) -> Bool = { _ in false },
        failureIn2xx: (HTTPResponseHead, Data) -> S3Error? = { _, _ in nil },
        _ build: (_ credentials: AWSCredentials?) -> HTTPRequest
    ) async throws(S3Error) -> (HTTPResponseHead, Data) {
        let observer = configuration.observer
        var retries = RetryState(policy: policy, observer: observer)
        while true {
            let failure: S3Error
            var retryAfter: TimeInterval?
            let request = build(try await signingCredentials())
            if observer != nil { retries.request = TransferObserver.name(method: request.method, url: request.url) }
            let started = observer != nil ? TransferObserver.now() : 0
            let attempt = retries.failedAttempts + 1
            do {
                let (head, body) = try await engine.data(for: request)
                observer?.onResponse(request.method, head.status)
                if (200..<300).contains(head.status) {
                    guard let embedded = failureIn2xx(head, body) else {
                        observer?.ended(
                            request, attempt: attempt, status: head.status, received: Int64(body.count),
                            started: started, failure: nil)
                        return (head, body)
                    }
                    failure = embedded
                } else {
                    failure = error(for: head, body: body)
                    retryAfter = Self.retryAfter(head)
                }
                observer?.ended(
                    request, attempt: attempt, status: head.status, received: Int64(body.count), started: started,
                    failure: failure)
            } catch {
                failure = S3Error(error)
                observer?.ended(request, attempt: attempt, status: nil, received: 0, started: started, failure: failure)
            }
            if Task.isCancelled { throw .cancelled }
            try await retries.backOffOrThrow(failure, serverAsked: retryAfter, retryingAlso: retryingAlso(failure))
        }
    }

    /// How long an error response asks the client to wait (`Retry-After` in seconds or as an HTTP date), if
    /// it does.
    static func retryAfter(_ head: HTTPResponseHead, now: Date = Date()) -> TimeInterval? {
        guard let value = head["retry-after"].map(ASCII.trimmingSpaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return seconds >= 0 ? TimeInterval(seconds) : nil }
        return HTTPDate.parse(String(value)).map { max(0, $0.timeIntervalSince(now)) }
    }
}
