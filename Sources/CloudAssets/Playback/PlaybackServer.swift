import AssetStore
import Essentials
import Foundation
import HTTPServerSupport
import NIOCore
import NIOHTTP1
import NIOPosix

/// A loopback HTTP server that hands players an asset's original by byte range: what
/// ``AssetLibrary/requestPlaybackURL(for:options:)`` gives out.
///
/// It listens on 127.0.0.1, on a port the system picks, from the first URL asked for until the library closes.
/// Each URL carries a random token (128 bits) that names one asset and whether the network may be used; any
/// other path is answered 404, a method other than GET and HEAD 405. A request's bytes come from the library's
/// ranged reads (``AssetLibrary/read(_:range:isNetworkAccessAllowed:)``): local ranges from the cache, missing ones
/// fetched from the bucket, verified, and kept (the asset becomes `partial`), with its location blanked when
/// location access is denied. Answers are `206` with `Content-Range` for one range, `200` for none, `416` past
/// the end, all with `Accept-Ranges: bytes`. A body is read and sent in pieces that grow from
/// ``firstPiece`` to ``largestPiece``, each only once the one before was written (bounded memory whatever the
/// file's size; a player that closes the connection stops the reads). A read that fails before the head is sent
/// is answered `503` (the network not allowed, offline) or `502` (the bucket's error); after it, the connection
/// is closed, which a player sees as a cut stream.
final class PlaybackServer: Sendable {
    /// The first piece of a body read and sent.
    static let firstPiece: Int64 = 256 << 10
    /// The largest piece (a seek to the middle of a cloud-only video costs a few GETs, not one per piece).
    static let largestPiece: Int64 = 8 << 20

    /// What a token names.
    struct Grant: Sendable, Hashable {
        var assetID: Int64
        var networkAllowed: Bool
    }

    private struct State {
        var channel: (any Channel)?
        var port = 0
        var tokens: [String: Grant] = [:]
        var tokenOfGrant: [Grant: String] = [:]
        var connections: [ObjectIdentifier: any Channel] = [:]
        var closed = false
        /// The listener's and the connections' ends, once ``close()`` asked for them.
        var closing: [EventLoopFuture<Void>] = []
    }

    private let state = LockedBox(State())
    private let starting = SerialGate()
    private let requests: RequestBroker
    private let catalog: Catalog

    init(requests: RequestBroker, catalog: Catalog) {
        self.requests = requests
        self.catalog = catalog
    }

    /// The URL that serves `assetID` (one token per asset and network choice, made once), starting the server on
    /// first use.
    func url(for assetID: Int64, networkAllowed: Bool, name: String) async throws -> URL {
        let port = try await start()
        let grant = Grant(assetID: assetID, networkAllowed: networkAllowed)
        let token = state.withLock { state -> String in
            if let token = state.tokenOfGrant[grant] { return token }
            let token = Self.randomToken()
            state.tokens[token] = grant
            state.tokenOfGrant[grant] = token
            return token
        }
        // The name only helps a player guess the type; the token alone names the asset.
        let safeName = name.unicodeScalars.filter {
            $0.isASCII && ($0.properties.isAlphabetic || "0123456789._-".unicodeScalars.contains($0))
        }
        let kept = String(String.UnicodeScalarView(safeName))
        // A name of dots would be read as a path step (`..`) by a client that normalises the URL.
        let last = kept.allSatisfy { $0 == "." } ? "original" : kept
        return URL(string: "http://127.0.0.1:\(port)/play/\(token)/\(last)")!
    }

    /// What a path names: the grant of `/play/<token>/<name>`, nil for anything else.
    func grant(forPath path: String) -> Grant? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty, parts[1] == "play", parts[2].utf8.count == 32 else { return nil }
        return state.withLock { $0.tokens[String(parts[2])] }
    }

    /// Binds 127.0.0.1 on a free port, once; returns the port.
    private func start() async throws -> Int {
        try await starting.run {
            let (port, closed) = state.withLock { ($0.port, $0.closed) }
            if closed { throw AssetLibraryError.closed }
            if port != 0 { return port }
            let server = self
            let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    let id = ObjectIdentifier(channel)
                    let admitted = server.state.withLock { state -> Bool in
                        guard !state.closed else { return false }
                        state.connections[id] = channel
                        return true
                    }
                    guard admitted else { return channel.close() }
                    channel.closeFuture.whenComplete { _ in
                        _ = server.state.withLock { $0.connections.removeValue(forKey: id) }
                    }
                    return channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                        try pipeline.addHandler(PlaybackChannelHandler(server: server))
                    }
                }
            let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
            let bound = channel.localAddress?.port ?? 0
            let stillOpen = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.channel = channel
                state.port = bound
                return true
            }
            guard stillOpen else {
                // try?: a listener of a closed library, closed again: nothing to report
                try? await channel.close()
                throw AssetLibraryError.closed
            }
            return bound
        }
    }

    /// Stops listening and closes every connection (their reads stop); URLs given out answer nothing after.
    func close() {
        let (channel, connections) = state.withLock { state in
            state.closed = true
            defer {
                state.channel = nil
                state.connections = [:]
                state.tokens = [:]
                state.tokenOfGrant = [:]
            }
            let open = [state.channel].compactMap { $0 } + Array(state.connections.values)
            state.closing = open.map(\.closeFuture)
            return (state.channel, Array(state.connections.values))
        }
        channel?.close(promise: nil)
        for connection in connections { connection.close(promise: nil) }
    }

    /// Returns once the listener and every connection ``close()`` closed are closed (for tests).
    func closed() async {
        for future in state.withLock({ $0.closing }) {
            // try?: a close that failed has still ended the channel
            try? await future.get()
        }
    }

    /// The asset's record and the bytes of one piece of it, as the library hands them out.
    func record(_ grant: Grant) throws -> AssetRecord? { try catalog.store.record(id: grant.assetID) }

    func read(_ record: AssetRecord, range: Range<Int64>, grant: Grant) async throws -> Data {
        try await requests.read(
            catalog.asset(record), range: range, isNetworkAccessAllowed: grant.networkAllowed)
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
