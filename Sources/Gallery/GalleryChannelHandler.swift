import Essentials
import Foundation
import NIOCore
import NIOHTTP1

/// One request as the router sees it.
struct GalleryRequest: Sendable {
    var method: HTTPMethod
    /// The request target as sent (path and query, still percent-encoded).
    var uri: String
    var headers: HTTPHeaders
    var body: Data
}

/// What the router answers: a whole response, or an event stream it feeds until the connection closes.
enum GalleryResponse: Sendable {
    case full(status: HTTPResponseStatus, contentType: String, body: Data)
    case events(@Sendable (_ send: @escaping @Sendable (String) -> Void) async -> Void)

    static func json(_ status: HTTPResponseStatus = .ok, _ text: String) -> GalleryResponse {
        .full(status: status, contentType: "application/json; charset=utf-8", body: Data(text.utf8))
    }

    static func error(_ status: HTTPResponseStatus, _ message: String) -> GalleryResponse {
        json(status, "{\"error\":\(JSONText.quoted(message))}")
    }
}

/// Reads each request on one connection, hands it to the router and writes the answer. Requests on a connection
/// are answered one at a time (the next is read after the answer went out); an event stream holds its connection
/// until either side closes it.
final class GalleryChannelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Largest request body accepted (a picker's answer of 100,000 identifiers fits).
    static let maxBody = 4 << 20

    let router: GalleryRouter
    private var head: HTTPRequestHead?
    private var body = Data()
    private var tooLarge = false
    private var running: Task<Void, Never>?

    init(router: GalleryRouter) { self.router = router }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = Data()
            tooLarge = false
        case .body(var buffer):
            if body.count + buffer.readableBytes > Self.maxBody {
                tooLarge = true
            } else if let bytes = buffer.readBytes(length: buffer.readableBytes) {
                body.append(contentsOf: bytes)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let request = GalleryRequest(method: head.method, uri: head.uri, headers: head.headers, body: body)
            body = Data()
            let channel = context.channel
            let keepAlive = head.isKeepAlive
            let version = head.version
            if tooLarge {
                Self.write(.error(.payloadTooLarge, "request body too large"), channel, version, keepAlive: false)
                return
            }
            running = Self.answer(request, router: router, channel: channel, version: version, keepAlive: keepAlive)
        }
    }

    private static func answer(
        _ request: GalleryRequest, router: GalleryRouter, channel: any Channel, version: HTTPVersion, keepAlive: Bool
    ) -> Task<Void, Never> {
        Task {
            let response = await router.respond(to: request)
            if case .events(let feed) = response {
                await stream(feed, channel: channel, version: version)
            } else {
                write(response, channel, version, keepAlive: keepAlive)
            }
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

    static func securityHeaders(_ headers: inout HTTPHeaders) {
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "X-Frame-Options", value: "DENY")
        // The token is in the page's address: never send it elsewhere as a referrer.
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(
            name: "Content-Security-Policy",
            value: "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
                + "connect-src 'self'; media-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
    }

    private static func write(
        _ response: GalleryResponse, _ channel: any Channel, _ version: HTTPVersion, keepAlive: Bool
    ) {
        guard case .full(let status, let contentType, let body) = response else { return }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        securityHeaders(&headers)
        channel.write(HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: status, headers: headers)))
            .whenComplete { _ in }
        var buffer = channel.allocator.buffer(capacity: body.count)
        buffer.writeBytes(body)
        channel.write(HTTPServerResponsePart.body(.byteBuffer(buffer))).whenComplete { _ in }
        let done = channel.writeAndFlush(HTTPServerResponsePart.end(nil))
        if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
    }

    /// Writes a `text/event-stream` answer and runs `feed` until it returns or the connection closes.
    private static func stream(
        _ feed: @Sendable (_ send: @escaping @Sendable (String) -> Void) async -> Void, channel: any Channel,
        version: HTTPVersion
    ) async {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/event-stream; charset=utf-8")
        headers.add(name: "Connection", value: "keep-alive")
        securityHeaders(&headers)
        channel.writeAndFlush(
            HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: .ok, headers: headers))
        ).whenComplete { _ in }
        await feed { text in
            var buffer = channel.allocator.buffer(capacity: text.utf8.count)
            buffer.writeString(text)
            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer))).whenComplete { _ in }
        }
        channel.close(promise: nil)
    }
}
