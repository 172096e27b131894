import AWSSigV4
import Foundation
import NIOCore

/// Where a ``FakeS3Server`` keeps its buckets and objects.
public enum FakeS3Storage: Sendable, Hashable {
    /// Everything in memory; gone when the server is released. Fast, for tests.
    case memory
    /// Object bytes in files under `root`, metadata in a JSON sidecar per object. Survives a restart;
    /// nothing is ever read or written outside `root`.
    case disk(root: URL)
}

/// How a ``FakeS3Server`` listens, stores and authenticates.
public struct FakeS3Configuration: Sendable {
    /// The address to bind; loopback by default.
    public var host: String
    /// The port to bind; `0` picks a free port (read it from ``FakeS3Server/port`` after `start()`).
    public var port: Int
    /// In-memory or on-disk storage.
    public var storage: FakeS3Storage
    /// The key pairs the server accepts. Requests signed with any other key fail with `InvalidAccessKeyId`.
    public var credentials: [AWSCredentials]
    /// The region requests must be signed for (`AuthorizationHeaderMalformed` otherwise).
    public var region: String
    /// When `true`, the admin endpoint `/_fake-s3/…` is answered; otherwise it does not exist.
    public var faultsEnabled: Bool
    /// Buckets anyone may read (GET/HEAD objects, list) without signing.
    public var publicBuckets: Set<String>
    /// Host name suffixes that mark virtual-hosted-style addressing: with the default,
    /// `Host: photos.localhost:9000` addresses the bucket `photos`. The bound ``host`` is one too
    /// (``effectiveVirtualHostSuffixes``): `Host: photos.<host>` always addresses `photos`.
    public var virtualHostSuffixes: [String]
    /// The certificate and key to serve HTTPS with; nil (the default) serves plain HTTP.
    public var tls: FakeS3TLS?
    /// When `true`, a write's or a delete's `If-Match` matches only the ETag *without* quotes, as Ceph's RADOS
    /// Gateway 16 compares it (a quoted ETag, as RFC 9110 writes it, never matches there): for testing clients
    /// against that gateway's behaviour. Reads are unaffected.
    public var comparesBareIfMatch = false
    /// How long, in seconds, a connection may send nothing when it is the client's turn (before or within a
    /// request, or between requests) before the server closes it; nil never closes one. While the server is
    /// answering, the connection is never idle. S3 closes such connections after about 20 s.
    public var idleTimeout: TimeInterval? = 60

    /// - Parameters:
    ///   - host: The address to bind.
    ///   - port: The port to bind, `0` for any free port.
    ///   - storage: In-memory or on-disk storage.
    ///   - credentials: The accepted key pairs.
    ///   - region: The region of the credential scope requests must use.
    ///   - faultsEnabled: Whether the admin endpoint is answered.
    ///   - publicBuckets: Buckets readable without a signature.
    ///   - virtualHostSuffixes: Host suffixes for virtual-hosted-style addressing.
    public init(
        host: String = "127.0.0.1", port: Int = 0, storage: FakeS3Storage = .memory,
        credentials: [AWSCredentials] = [], region: String = "us-east-1", faultsEnabled: Bool = false,
        publicBuckets: Set<String> = [], virtualHostSuffixes: [String] = ["localhost"]
    ) {
        self.host = host
        self.port = port
        self.storage = storage
        self.credentials = credentials
        self.region = region
        self.faultsEnabled = faultsEnabled
        self.publicBuckets = publicBuckets
        self.virtualHostSuffixes = virtualHostSuffixes
    }

    /// A configuration accepting one key pair.
    /// - Parameters:
    ///   - accessKeyID: The access key id clients sign with.
    ///   - secretAccessKey: Its secret.
    ///   - storage: In-memory (default) or on-disk storage.
    ///   - port: The port to bind, `0` for any free port.
    public init(accessKeyID: String, secretAccessKey: String, storage: FakeS3Storage = .memory, port: Int = 0) {
        self.init(
            port: port, storage: storage,
            credentials: [AWSCredentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey)])
    }
}

extension FakeS3Configuration {
    /// ``virtualHostSuffixes`` and the bound ``host`` (unless it is an IPv6 literal or a wildcard address, which no
    /// request names), lower-cased, longest first: the most specific suffix wins (`photos.s3.localhost` is the
    /// bucket `photos` for a server at `s3.localhost`).
    var effectiveVirtualHostSuffixes: [String] {
        var suffixes = Set(virtualHostSuffixes.map { $0.lowercased() }.filter { !$0.isEmpty })
        let bound = host.lowercased()
        if !bound.contains(":"), bound != "0.0.0.0", !bound.isEmpty { suffixes.insert(bound) }
        return suffixes.sorted { $0.count != $1.count ? $0.count > $1.count : $0 < $1 }
    }
}

/// The PEM files a ``FakeS3Server`` serves HTTPS with.
public struct FakeS3TLS: Sendable, Hashable {
    /// The server's certificate, followed by any intermediate certificates (PEM).
    public var certificateChainPath: String
    /// The certificate's private key (PEM, unencrypted).
    public var privateKeyPath: String

    /// - Parameters:
    ///   - certificateChainPath: The certificate chain's PEM file.
    ///   - privateKeyPath: The private key's PEM file.
    public init(certificateChainPath: String, privateKeyPath: String) {
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
    }
}

/// The TLS implementation a ``FakeS3Server`` serves HTTPS with: the `FakeS3TLS` module's `.nioSSL` (swift-nio-ssl).
/// A protocol, so that FakeS3 links no TLS library of its own.
public protocol FakeS3TLSProvider: Sendable {
    /// Checks the certificate and key of `tls` (before anything is bound) and returns what makes one connection's
    /// server-side TLS handler, called on that connection's event loop.
    /// - Throws: ``FakeS3ConfigurationError/unusableTLS(reason:)`` for a certificate or key that cannot be used.
    func handlerFactory(for tls: FakeS3TLS) throws -> @Sendable () -> any ChannelHandler
}

/// A configuration the server refuses to start with.
public enum FakeS3ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The port is not in 0…65535 (0 means any free port).
    case portOutOfRange(Int)
    /// The TLS certificate or key cannot be read or used; `reason` says why.
    case unusableTLS(reason: String)

    public var description: String {
        switch self {
        case .portOutOfRange(let port): "port \(port) is outside 0…65535 (0 picks any free port)"
        case .unusableTLS(let reason): "the TLS certificate or key cannot be used: \(reason)"
        }
    }
}
