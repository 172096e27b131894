import AssetStore
import Foundation
import HTTPServerSupport
import NIOCore
import NIOHTTP1

/// One connection of the playback server: each request whole (a player's GET or HEAD has no body), answered by a
/// task of its own, which the connection's close cancels.
final class PlaybackChannelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: PlaybackServer
    private var head: HTTPRequestHead?
    private var running: Task<Void, Never>?

    init(server: PlaybackServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            let channel = context.channel
            let server = self.server
            let previous = running
            // One answer at a time on a connection, in request order.
            running = Self.answering(head, after: previous, server: server, channel: channel)
        }
    }

    private static func answering(
        _ head: HTTPRequestHead, after previous: Task<Void, Never>?, server: PlaybackServer, channel: any Channel
    ) -> Task<Void, Never> {
        Task {
            if let previous { await previous.value }
            await answer(head, server: server, channel: channel)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        running?.cancel()
        running = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        running?.cancel()
        context.close(promise: nil)
    }

    private static func answer(_ head: HTTPRequestHead, server: PlaybackServer, channel: any Channel) async {
        let keepAlive = head.isKeepAlive
        let path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "")
        guard head.method == .GET || head.method == .HEAD else {
            return await status(.methodNotAllowed, channel, head.version, keepAlive: keepAlive)
        }
        // try?: a catalog that cannot be read answers as an asset that is not there
        guard let grant = server.grant(forPath: path), let record = try? server.record(grant) else {
            return await status(.notFound, channel, head.version, keepAlive: keepAlive)
        }
        let size = record.size
        let asked = HTTPByteRange(header: head.headers.first(name: "Range"), size: size)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: record.contentType ?? "application/octet-stream")
        headers.add(name: "Accept-Ranges", value: "bytes")
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        if let contentRange = asked.contentRange(size: size) { headers.add(name: "Content-Range", value: contentRange) }
        let range: Range<Int64>
        let code: HTTPResponseStatus
        switch asked {
        case .unsatisfiable:
            headers.add(name: "Content-Length", value: "0")
            return await send(
                HTTPResponseHead(version: head.version, status: .rangeNotSatisfiable, headers: headers), channel,
                keepAlive: keepAlive)
        case .whole: (range, code) = (0..<size, .ok)
        case .part(let part): (range, code) = (part, .partialContent)
        }
        headers.add(name: "Content-Length", value: String(range.count))
        let responseHead = HTTPResponseHead(version: head.version, status: code, headers: headers)
        guard head.method == .GET, !range.isEmpty else {
            return await send(responseHead, channel, keepAlive: keepAlive)
        }
        // The first piece is read before the head goes out: a failure can still be an answer of its own.
        var piece = PlaybackServer.firstPiece
        var offset = range.lowerBound
        var pending: Data
        do {
            let end = min(range.upperBound, offset + piece)
            pending = try await server.read(record, range: offset..<end, grant: grant)
            offset = end
        } catch {
            var refused = false
            if case .inCloud? = error as? AssetRequestError { refused = true }
            return await status(
                refused ? .serviceUnavailable : .badGateway, channel, head.version, keepAlive: keepAlive)
        }
        do {
            try await channel.writeAndFlush(HTTPServerResponsePart.head(responseHead)).get()
            while true {
                var buffer = channel.allocator.buffer(capacity: pending.count)
                buffer.writeBytes(pending)
                let written = Self.writing(HTTPServerResponsePart.body(.byteBuffer(buffer)), to: channel)
                guard offset < range.upperBound else {
                    try await written.get()
                    break
                }
                // The next piece is read while this one is written; at most two are held.
                piece = min(piece * 2, PlaybackServer.largestPiece)
                let end = min(range.upperBound, offset + piece)
                try Task.checkCancellation()
                pending = try await server.read(record, range: offset..<end, grant: grant)
                offset = end
                try await written.get()
            }
            let done = Self.writing(HTTPServerResponsePart.end(nil), to: channel)
            if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
            try await done.get()
        } catch {
            // The length announced cannot be kept: the player sees a cut stream and asks again.
            // try?: a connection that cannot be closed is gone already
            try? await channel.close()
        }
    }

    /// Writes and flushes one part; the future completes when it is written to the socket.
    private static func writing(_ part: HTTPServerResponsePart, to channel: any Channel) -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(part, promise: promise)
        return promise.futureResult
    }

    private static func status(
        _ code: HTTPResponseStatus, _ channel: any Channel, _ version: HTTPVersion, keepAlive: Bool
    ) async {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: "0")
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        await send(HTTPResponseHead(version: version, status: code, headers: headers), channel, keepAlive: keepAlive)
    }

    private static func send(_ head: HTTPResponseHead, _ channel: any Channel, keepAlive: Bool) async {
        channel.write(HTTPServerResponsePart.head(head), promise: nil)
        let done = writing(HTTPServerResponsePart.end(nil), to: channel)
        if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
        // try?: a client gone before its answer: nothing more to send it
        try? await done.get()
    }
}
