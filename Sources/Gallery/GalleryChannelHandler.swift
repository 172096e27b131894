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

/// What the router answers: a whole response, a range of an open file streamed in pieces, or an event stream
/// (a ``GalleryLiveFeed``'s) fed until the connection closes.
enum GalleryResponse: Sendable {
    case full(status: HTTPResponseStatus, contentType: String, body: Data)
    case file(FileAnswer)
    case events(@Sendable (_ send: @escaping @Sendable (String) -> Void) async -> Void)

    static func json(_ status: HTTPResponseStatus = .ok, _ text: String) -> GalleryResponse {
        .full(status: status, contentType: "application/json; charset=utf-8", body: Data(text.utf8))
    }

    static func error(_ status: HTTPResponseStatus, _ message: String) -> GalleryResponse {
        json(status, "{\"error\":\(JSONText.quoted(message))}")
    }
}

/// A file opened for reading, closed when the last reference goes.
final class OpenFile: Sendable {
    let descriptor: Int32
    /// Its size when opened.
    let size: Int64

    /// Opens `path` for reading.
    /// - Throws: `CocoaError` when it cannot be opened.
    init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CocoaError(.fileReadNoPermission, userInfo: [NSFilePathErrorKey: path]) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            close(fd)
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        descriptor = fd
        size = Int64(status.st_size)
    }

    deinit { close(descriptor) }
}

/// A file answer: `range` of `file` (200 for the whole, 206 for a part), or 416 when the `Range` asked for lies
/// outside it (then `file` is nil and `range` empty). The body is read and sent in pieces, each sent before the
/// next is read, so memory stays bounded whatever the file's size.
package struct FileAnswer: Sendable {
    var status: HTTPResponseStatus
    var contentType: String
    var file: OpenFile?
    var range: Range<Int64>
    /// The whole file's size (for `Content-Range`).
    var totalSize: Int64

    /// The `Content-Range` of a 206 (`bytes FIRST-LAST/SIZE`) or a 416 (`bytes */SIZE`); nil for a 200.
    package static func contentRange(status: HTTPResponseStatus, range: Range<Int64>, totalSize: Int64) -> String? {
        switch status {
        case .partialContent: "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(totalSize)"
        case .rangeNotSatisfiable: "bytes */\(totalSize)"
        default: nil
        }
    }

    var contentRange: String? { Self.contentRange(status: status, range: range, totalSize: totalSize) }
}

/// Reads each request on one connection, hands it to the router and writes the answer. Requests on a connection
/// are answered one at a time (the next is read after the answer went out); an event stream holds its connection
/// until either side closes it. It runs on its connection's event loop; each answer is computed and written from
/// a task of its own, which the connection's close cancels.
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
            switch response {
            case .events(let feed): await stream(feed, channel: channel, version: version)
            case .file(let answer): await stream(answer, channel: channel, version: version, keepAlive: keepAlive)
            case .full: write(response, channel, version, keepAlive: keepAlive)
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
                + "connect-src 'self'; media-src 'self' http://127.0.0.1:*; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
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

    /// The largest piece of a file read and sent at once.
    static let filePiece = 256 << 10

    /// Writes a file answer: the head, then the range in pieces of at most ``filePiece`` bytes, each read only once
    /// the one before was written to the socket. A read or write that fails part-way closes the connection (the
    /// length announced cannot be kept).
    private static func stream(
        _ answer: FileAnswer, channel: any Channel, version: HTTPVersion, keepAlive: Bool
    ) async {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: answer.contentType)
        headers.add(name: "Content-Length", value: String(answer.range.count))
        headers.add(name: "Accept-Ranges", value: "bytes")
        if let contentRange = answer.contentRange { headers.add(name: "Content-Range", value: contentRange) }
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        securityHeaders(&headers)
        do {
            try await channel.writeAndFlush(
                HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: answer.status, headers: headers))
            ).get()
            var offset = answer.range.lowerBound
            if let file = answer.file {
                while offset < answer.range.upperBound {
                    try Task.checkCancellation()
                    let want = Int(min(Int64(filePiece), answer.range.upperBound - offset))
                    var buffer = channel.allocator.buffer(capacity: want)
                    let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { raw in
                        max(0, pread(file.descriptor, raw.baseAddress, want, off_t(offset)))
                    }
                    guard count > 0 else { throw CocoaError(.fileReadUnknown) }  // shorter than it was, or unreadable
                    offset += Int64(count)
                    try await channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer))).get()
                }
            }
            try await channel.writeAndFlush(HTTPServerResponsePart.end(nil)).get()
            if !keepAlive { channel.close(promise: nil) }
        } catch {
            channel.close(promise: nil)
        }
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
