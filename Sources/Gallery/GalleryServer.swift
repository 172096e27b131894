public import CloudAssets
import Essentials
public import Foundation
import HTTPServerSupport
import NIOCore
import NIOHTTP1
import NIOPosix

/// How a picker session ended: the identifiers chosen with Done, or Cancel.
public enum PickOutcome: Sendable, Hashable {
    case picked([String])
    case cancelled
}

/// The web gallery and picker of one library, served over HTTP on SwiftNIO: an app embeds it (the `Gallery`
/// product) to let the user browse and choose assets in a browser, with the app's own toolbar items.
///
/// Security model: it binds 127.0.0.1 unless told otherwise; every request must carry the server's random token
/// (a `token` query parameter or the `X-CloudAssets-Token` header; POSTs only the header, so a page of another
/// origin cannot forge one with a form or a link); the `Host` header must name `localhost`, `127.0.0.1`, `[::1]`
/// or the bound host (a DNS-rebound name is refused); only the page's three files are served by name, and assets
/// only by local identifier through the library's API — no request path is ever mapped to a file.
public final class GalleryServer: Sendable {
    /// The token every request must carry (64 hex digits unless given).
    public let token: String
    /// The address it binds.
    public let host: String
    let router: GalleryRouter
    private let requestedPort: Int
    private let idleTimeout: Duration?
    private let state = LockedBox<(channel: (any Channel)?, port: Int, connections: [ObjectIdentifier: any Channel])>(
        (nil, 0, [:]))

    /// - Parameters:
    ///   - library: The open library to show (not closed by the server).
    ///   - host: The address to bind (default 127.0.0.1).
    ///   - port: The port (0: one the system picks).
    ///   - token: The token (default: 32 random bytes in hex).
    ///   - onPick: Called once per Done or Cancel of the picker (`nil`: the picker's calls answer 404).
    ///   - idleTimeout: How long a connection may send nothing when it is the browser's turn (before or within a
    ///     request, or between requests) before it is closed; nil never closes one. An answer in progress (an
    ///     original streaming, an event stream) never counts as idle.
    ///   - toolbar: The app's own toolbar items, shown in this order on every view of the gallery and picker.
    ///   - onToolbarAction: Called once per tap of an enabled item, with the selection at that moment; on a task
    ///     of Swift's global pool (several may run at once), never on the caller's thread.
    /// - Throws: ``GalleryServerError/invalidToolbarItem(_:)`` for an item whose identifier or title cannot be
    ///   shown, or two items with one identifier.
    public init(
        library: AssetLibrary, host: String = "127.0.0.1", port: Int = 0, token: String? = nil,
        onPick: (@Sendable (PickOutcome) -> Void)? = nil, idleTimeout: Duration? = .seconds(60),
        toolbar: [GalleryToolbarItem] = [], onToolbarAction: (@Sendable (GalleryToolbarAction) -> Void)? = nil
    ) throws {
        if let problem = toolbar.lazy.compactMap(\.problem).first {
            throw GalleryServerError.invalidToolbarItem(problem)
        }
        if Set(toolbar.map(\.identifier)).count != toolbar.count {
            throw GalleryServerError.invalidToolbarItem("two toolbar items have one identifier")
        }
        self.token = token ?? Self.randomToken()
        self.host = host
        self.requestedPort = port
        self.idleTimeout = idleTimeout
        self.router = try GalleryRouter(
            library: library, token: self.token, boundHost: host, onPick: onPick, toolbar: toolbar,
            onToolbarAction: onToolbarAction)
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// Binds and starts serving. After it returns, ``port`` and ``url`` are valid.
    /// - Throws: ``GalleryServerError`` when the address cannot be listened on (a port in use, a port that needs
    ///   privileges, an address that is not this machine's or does not resolve).
    public func start() async throws {
        let router = self.router
        let state = self.state
        let idleTimeout = self.idleTimeout.map { duration in
            let (seconds, attoseconds) = duration.components
            return TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 128)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                let id = ObjectIdentifier(channel)
                state.withLock { $0.connections[id] = channel }
                channel.closeFuture.whenComplete { _ in _ = state.withLock { $0.connections.removeValue(forKey: id) } }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let idleTimeout { try pipeline.addHandler(IdleConnectionCloser.clock(timeout: idleTimeout)) }
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    if idleTimeout != nil { try pipeline.addHandler(IdleConnectionCloser()) }
                    try pipeline.addHandler(GalleryChannelHandler(router: router))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: host, port: requestedPort).get()
        } catch let error as IOError {
            throw GalleryServerError.cannotListen(host: host, port: requestedPort, errno: error.errnoCode)
        } catch is SocketAddressError, is SocketAddressError.UnknownHost {
            throw GalleryServerError.unknownHost(host)
        }
        state.withLock {
            $0.channel = channel
            $0.port = channel.localAddress?.port ?? 0
        }
        router.boundPort.withLock { $0 = channel.localAddress?.port ?? 0 }
    }

    /// The bound port (after ``start()``).
    public var port: Int { state.withLock { $0.port } }

    /// The page's address with the token: what to open in a browser.
    public var url: URL {
        let shown = host.contains(":") ? "[\(host)]" : host
        return URL(string: "http://\(shown):\(port)/?token=\(token)")!
    }

    /// Stops listening and closes every connection (live event streams end).
    public func stop() async {
        let (channel, connections) = state.withLock { state in
            defer {
                state.channel = nil
                state.connections = [:]
            }
            return (state.channel, Array(state.connections.values))
        }
        router.stop()
        // try?: shutting down: a channel that fails to close goes with the loop
        try? await channel?.close()
        // try?: shutting down: as above
        for connection in connections { try? await connection.close() }
    }
}

/// Why a ``GalleryServer`` could not start; its description is one line saying what to do.
public enum GalleryServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Binding `host`:`port` failed with `errno` (`EADDRINUSE`: another program listens there).
    case cannotListen(host: String, port: Int, errno: Int32)
    /// The host is neither an address nor a name that resolves.
    case unknownHost(String)
    /// A toolbar item that cannot be shown (what is wrong with it).
    case invalidToolbarItem(String)

    public var description: String {
        switch self {
        case .cannotListen(let host, let port, EADDRINUSE):
            "\(host):\(port) is already in use by another program: choose another port (0 picks a free one)"
        case .cannotListen(let host, let port, EACCES):
            "listening on \(host):\(port) needs privileges (ports below 1024): choose a port above 1023, or 0"
        case .cannotListen(let host, _, EADDRNOTAVAIL):
            "\(host) is not an address of this machine: bind 127.0.0.1 or one of its own addresses"
        case .cannotListen(let host, let port, let code):
            "cannot listen on \(host):\(port): \(String(cString: strerror(code)))"
        case .unknownHost(let host):
            "\(host) is not an address, nor a name that resolves"
        case .invalidToolbarItem(let problem): problem
        }
    }
}
