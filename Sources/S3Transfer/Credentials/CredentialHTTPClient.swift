import Essentials
import Foundation

/// The HTTP client of the credential providers: an ``HTTPEngine`` of its own, made on first use (a chain that
/// never leaves the environment and the files starts no thread), with the system's CAs or `AWS_CA_BUNDLE` — not
/// the S3 endpoint's settings — and a deadline on every request.
///
/// Thread-safe. Offline, a request fails within its deadline with a transport error.
final class CredentialHTTPClient: Sendable {
    private let caBundlePath: String?
    private let engine = LockedBox<HTTPEngine?>(nil)

    /// The largest answer read from a credentials service (STS's is about 2 KB).
    static let bodyLimit = 256 * 1024

    init(caBundlePath: String?) { self.caBundlePath = caBundlePath }

    /// What a request came to.
    enum Failure: Error, Sendable {
        /// No answer within the deadline.
        case timedOut
        /// No complete answer: refused, reset, or longer than ``CredentialHTTPClient/bodyLimit``.
        case transport(HTTPTransportError)

        var reason: String {
            switch self {
            case .timedOut: "no answer in time"
            case .transport(let error) where error == .aborted: "the answer is larger than 256 KiB"
            case .transport(let error): error.description
            }
        }
    }

    /// Sends `request` and returns the whole answer, whatever its status.
    /// - Parameters:
    ///   - request: What to send.
    ///   - timeout: Seconds the whole exchange may take.
    func send(_ request: HTTPRequest, timeout: TimeInterval) async throws(Failure) -> (HTTPResponseHead, Data) {
        let engine = self.engine.withLock { engine -> HTTPEngine in
            if let engine { return engine }
            var configuration = HTTPEngineConfiguration(
                maxTotalConnections: 4, maxConnectionsPerHost: 2, connectTimeout: min(timeout, 5),
                stallTimeout: 10, caBundlePath: caBundlePath)
            configuration.firstAnswerTimeout = 10
            let made = HTTPEngine(configuration: configuration)
            engine = made
            return made
        }
        let outcome = await withTaskGroup(of: Result<(HTTPResponseHead, Data), Failure>?.self) { group in
            group.addTask {
                do throws(HTTPTransportError) {
                    return .success(try await engine.data(for: request, bodyLimit: Self.bodyLimit))
                } catch {
                    return .failure(.transport(error))
                }
            }
            group.addTask {
                // The deadline: the first task to end wins and the other is cancelled (a cancelled transfer ends
                // at once; a cancelled sleep returns at once).
                try? await Task.sleep(nanoseconds: UInt64(max(0, timeout) * 1_000_000_000))
                return Task.isCancelled ? nil : .failure(.timedOut)
            }
            var first: Result<(HTTPResponseHead, Data), Failure>?
            while first == nil, let next = await group.next() { first = next }
            group.cancelAll()
            return first ?? .failure(.timedOut)
        }
        return try outcome.get()
    }
}

extension HTTPRequest {
    /// The host and port of an absolute `http(s)` URL as a `Host` header value (the port only when it is not the
    /// scheme's default), nil when the URL has no host.
    static func hostHeader(of url: URL) -> String? {
        guard let host = url.host, !host.isEmpty else { return nil }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let scheme = url.scheme?.lowercased()
        if let port = url.port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) {
            return "\(bracketed):\(port)"
        }
        return bracketed
    }
}
