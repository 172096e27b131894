package import Foundation

/// Settings of an ``HTTPEngine``: connection limits, timeouts and TLS.
package struct HTTPEngineConfiguration: Sendable, Hashable {
    /// The most connections open at once, over all hosts (`CURLMOPT_MAX_TOTAL_CONNECTIONS`). Transfers
    /// beyond it wait inside libcurl for a free connection.
    package var maxTotalConnections: Int
    /// The most connections open to one host (`CURLMOPT_MAX_HOST_CONNECTIONS`).
    package var maxConnectionsPerHost: Int
    /// How long establishing a connection (TCP and TLS) may take, in seconds.
    package var connectTimeout: TimeInterval
    /// A transfer slower than ``lowSpeedLimit`` bytes per second for this many seconds fails as stalled.
    package var stallTimeout: TimeInterval
    /// How long a request without a body may wait for the first byte of the answer once it was sent, in seconds
    /// (0: no limit). A server that accepts connections and never answers fails fast instead of after the
    /// stall timeout.
    package var firstAnswerTimeout: TimeInterval = 10
    /// The bytes-per-second floor of the stall check.
    package var lowSpeedLimit: Int
    /// Verify the server's TLS certificate and host name. On by default; turn off only for tests.
    package var verifyTLS: Bool
    /// A PEM file of trusted CA certificates, replacing the system bundle.
    package var caBundlePath: String?
    /// libcurl's receive buffer size (`CURLOPT_BUFFERSIZE`); larger buffers mean fewer callbacks.
    package var receiveBufferSize: Int

    /// - Parameters:
    ///   - maxTotalConnections: Connection limit over all hosts.
    ///   - maxConnectionsPerHost: Connection limit per host.
    ///   - connectTimeout: Connect timeout in seconds.
    ///   - stallTimeout: Seconds below `lowSpeedLimit` before a transfer fails as stalled.
    ///   - lowSpeedLimit: Bytes per second.
    ///   - verifyTLS: Verify certificates.
    ///   - caBundlePath: A custom CA bundle.
    ///   - receiveBufferSize: libcurl's receive buffer size.
    package init(
        maxTotalConnections: Int = 16, maxConnectionsPerHost: Int = 16, connectTimeout: TimeInterval = 5,
        stallTimeout: TimeInterval = 30, lowSpeedLimit: Int = 1, verifyTLS: Bool = true, caBundlePath: String? = nil,
        receiveBufferSize: Int = 512 * 1024
    ) {
        self.maxTotalConnections = maxTotalConnections
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.connectTimeout = connectTimeout
        self.stallTimeout = stallTimeout
        self.lowSpeedLimit = lowSpeedLimit
        self.verifyTLS = verifyTLS
        self.caBundlePath = caBundlePath
        self.receiveBufferSize = receiveBufferSize
    }
}
