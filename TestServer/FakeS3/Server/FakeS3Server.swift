import Essentials
import Foundation
import HTTPServerSupport
import NIOCore
import NIOHTTP1
import NIOPosix

/// An S3-compatible HTTP server for tests and demos, started in-process.
///
/// ```swift
/// let server = try FakeS3Server(configuration: .init(accessKeyID: "test", secretAccessKey: "secret"))
/// try await server.start()
/// try server.createBucket("photos")
/// try server.putObject(bucket: "photos", key: "originals/a.png", data: png)
/// // … point a client at server.endpoint …
/// try await server.stop()
/// ```
///
/// Thread-safety: every method may be called from any thread or task. The seeding methods
/// (``createBucket(_:)``, ``putObject(bucket:key:data:contentType:metadata:checksumCRC32:)``, …) act
/// on storage directly and are visible to the next HTTP request once they return. Connections are
/// served on the shared NIO `MultiThreadedEventLoopGroup` (one thread per core).
public final class FakeS3Server: Sendable {
    private struct Running {
        var channel: (any Channel)?
        var port: Int = 0
        var connections: [ObjectIdentifier: any Channel] = [:]
        var stopped = false
        /// Its entry in the ledger of open resources, from a successful ``start()`` to ``stop()``.
        var ledgerEntry: OpenResources.Token?
    }

    let core: ServerCore
    private let running = LockedBox(Running())
    /// Makes each HTTPS connection's TLS handler (``FakeS3TLSProvider``); nil when the server links no TLS.
    private let tlsProvider: (any FakeS3TLSProvider)?

    /// The configuration the server was created with.
    public var configuration: FakeS3Configuration { core.configuration }

    /// Creates the server and opens its storage (on disk, existing buckets and objects are loaded;
    /// uploads a previous run left unfinished are discarded). Does not bind yet.
    /// - Throws: ``S3Error`` (`InternalError`) when the disk root cannot be prepared.
    /// - Parameters:
    ///   - configuration: What to serve, and how.
    ///   - tlsProvider: The TLS implementation for ``FakeS3Configuration/tls`` (`.nioSSL` from the `FakeS3TLS`
    ///     module); FakeS3 itself links no TLS library, so that a tool serving plain HTTP (the `cloudassets demo`)
    ///     does not build one. Without it, ``start()`` refuses a configuration with TLS.
    public init(configuration: FakeS3Configuration, tlsProvider: (any FakeS3TLSProvider)? = nil) throws {
        core = try ServerCore(configuration: configuration)
        self.tlsProvider = tlsProvider
    }

    /// Binds and starts accepting connections. After it returns, ``port`` and ``endpoint`` are valid.
    /// - Throws: ``FakeS3ConfigurationError/portOutOfRange(_:)`` for a port outside 0…65535 (nothing is bound),
    ///   ``FakeS3ConfigurationError/unusableTLS(reason:)`` for a certificate or key that cannot be used, the bind
    ///   error (e.g. the port is in use), or `S3Error` when called after ``stop()``.
    public func start() async throws {
        if running.withLock({ $0.stopped || $0.channel != nil }) {
            throw S3Error(status: 500, code: "InvalidState", message: "The server was already started or stopped.")
        }
        guard (0...65535).contains(core.configuration.port) else {
            throw FakeS3ConfigurationError.portOutOfRange(core.configuration.port)
        }
        let tls = try core.configuration.tls.map { tls in
            guard let tlsProvider else {
                throw FakeS3ConfigurationError.unusableTLS(
                    reason: "this server was made without a TLS provider (FakeS3TLS's .nioSSL)")
            }
            return try tlsProvider.handlerFactory(for: tls)
        }
        let idleTimeout = core.configuration.idleTimeout.map { TimeAmount.nanoseconds(Int64($0 * 1e9)) }
        let core = self.core
        let running = self.running
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                let id = ObjectIdentifier(channel)
                running.withLock { $0.connections[id] = channel }
                channel.closeFuture.whenComplete { _ in _ = running.withLock { $0.connections.removeValue(forKey: id) }
                }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let idleTimeout { try pipeline.addHandler(IdleConnectionCloser.clock(timeout: idleTimeout)) }
                    if let tls { try pipeline.addHandler(tls()) }
                    try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
                    if idleTimeout != nil { try pipeline.addHandler(IdleConnectionCloser()) }
                    try pipeline.addHandler(S3ChannelHandler(core: core))
                }
            }
        let channel = try await bootstrap.bind(host: core.configuration.host, port: core.configuration.port).get()
        let port = channel.localAddress?.port ?? core.configuration.port
        let entry = OpenResources.opened("fake S3 server on port \(port)")
        running.withLock {
            $0.channel = channel
            $0.port = port
            $0.ledgerEntry = entry
        }
    }

    /// The bound port (valid after ``start()``).
    public var port: Int { running.withLock { $0.port } }

    /// `http://<host>:<port>`, `https://…` with ``FakeS3Configuration/tls`` (valid after ``start()``).
    public var endpoint: URL { endpoint(host: core.configuration.host) }

    /// The endpoint under another name of this machine, e.g. `localhost`, whose subdomains (`photos.localhost`)
    /// address buckets virtual-hosted style (valid after ``start()``).
    /// - Parameter host: A host name or address that reaches the bound address.
    public func endpoint(host: String) -> URL {
        let name = host.contains(":") ? "[\(host)]" : host
        return URL(string: "\(core.configuration.tls == nil ? "http" : "https")://\(name):\(port)")!
    }

    /// Stops listening and closes every open connection (in-flight responses are cut off; unfinished
    /// uploads are discarded). Idempotent; the server cannot be started again.
    public func stop() async throws {
        let (listener, connections) = running.withLock { state -> ((any Channel)?, [any Channel]) in
            state.stopped = true
            let result = (state.channel, Array(state.connections.values))
            state.channel = nil
            return result
        }
        if let listener { try? await listener.close() }
        await Self.close(connections)
        // Connections accepted while the listener was closing.
        await Self.close(running.withLock { Array($0.connections.values) })
        let entry = running.withLock { state in
            defer { state.ledgerEntry = nil }
            return state.ledgerEntry
        }
        if let entry { OpenResources.closed(entry) }
    }

    /// Closes the connections at once (a TLS connection's close waits a moment for the client's close_notify).
    private static func close(_ connections: [any Channel]) async {
        await withTaskGroup(of: Void.self) { group in
            for connection in connections { group.addTask { try? await connection.close() } }
        }
    }

    // MARK: Direct access

    /// Creates a bucket.
    /// - Throws: ``S3Error`` `InvalidBucketName` or `BucketAlreadyOwnedByYou`.
    public func createBucket(_ name: String) throws {
        try core.store.createBucket(name)
    }

    /// Lets anyone read `bucket` without signing (GET/HEAD objects, listings), or stops doing so.
    public func setPublic(_ isPublic: Bool, bucket: String) {
        core.publicBuckets.withLock { if isPublic { $0.insert(bucket) } else { $0.remove(bucket) } }
    }

    /// Stores an object as a PUT would (ETag = MD5), replacing any object at `key`.
    /// - Parameters:
    ///   - bucket: An existing bucket.
    ///   - key: The object key (validated like a client's).
    ///   - data: The object's bytes.
    ///   - contentType: Content-Type to store; `binary/octet-stream` when nil.
    ///   - metadata: `x-amz-meta-*` values by name (without the prefix).
    ///   - checksumCRC32: Also store the CRC32 checksum (returned with `x-amz-checksum-mode: ENABLED`).
    /// - Returns: The ETag, with quotes.
    /// - Throws: ``S3Error`` `NoSuchBucket`, `KeyTooLongError`, `InvalidArgument`.
    @discardableResult
    public func putObject(
        bucket: String, key: String, data: Data, contentType: String? = nil, metadata: [String: String] = [:],
        checksumCRC32: Bool = false
    ) throws -> String {
        try core.putObject(
            bucket: bucket, key: key, data: data, contentType: contentType, metadata: metadata,
            checksumCRC32: checksumCRC32
        ).etag
    }

    /// Deletes an object; deleting a missing key succeeds.
    /// - Throws: ``S3Error`` `NoSuchBucket`.
    public func deleteObject(bucket: String, key: String) throws {
        try core.store.deleteObject(bucket: bucket, key: key)
    }

    /// An object's bytes, or nil when there is no such key. Reads the whole object into memory.
    /// - Throws: ``S3Error`` `NoSuchBucket`, or `InternalError` when a disk read fails.
    public func objectData(bucket: String, key: String) throws -> Data? {
        guard core.store.bucketExists(bucket) else { throw S3Error.noSuchBucket(bucket) }
        guard (try? core.store.info(bucket: bucket, key: key)) != nil else { return nil }
        return try read(core.store.open(bucket: bucket, key: key))
    }

    /// An object's `x-amz-meta-*` values by name (without the prefix), or nil when there is no such key.
    /// - Throws: ``S3Error`` `NoSuchBucket`.
    public func objectMetadata(bucket: String, key: String) throws -> [String: String]? {
        guard core.store.bucketExists(bucket) else { throw S3Error.noSuchBucket(bucket) }
        // try?: no such key reads as nil, as documented
        return (try? core.store.info(bucket: bucket, key: key))?.userMetadata
    }

    private func read(_ opened: (ObjectInfo, ObjectBody)) throws -> Data {
        switch opened.1 {
        case .memory(let buffer):
            return Data(buffer.readableBytesView)
        case .file(let fd):
            defer { POSIX.closeFile(fd) }
            var data = Data(count: Int(opened.0.size))
            let ok = data.withUnsafeMutableBytes { raw -> Bool in
                var offset = 0
                while offset < raw.count {
                    let n = POSIX.read(
                        fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[offset...]), at: Int64(offset))
                    if n <= 0 { return false }
                    offset += n
                }
                return true
            }
            guard ok else { throw StorageFailure.error("cannot read the object", POSIX.lastError) }
            return data
        }
    }

    /// The fault rules; add rules to make later requests misbehave.
    public var faults: FaultInjector { core.faults }

    /// Every answered request, in order.
    public var requestLog: RequestLog { core.log }

    /// The keys of a bucket's objects under `prefix`, in S3's order (UTF-8 bytes).
    /// - Throws: ``S3Error`` `NoSuchBucket`.
    public func keys(bucket: String, prefix: String = "") throws -> [String] {
        let wanted = Array(prefix.utf8)
        return try core.store.withSortedObjects(bucket: bucket) { keys, _ in
            keys.filter { $0.hasPrefix(wanted) }.map { String(decoding: $0.bytes, as: UTF8.self) }
        }
    }
}
