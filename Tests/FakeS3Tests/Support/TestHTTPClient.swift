import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A response as the test client saw it.
struct TestResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: Data
    /// Whether the response ended properly (false when the connection closed mid-body).
    var complete: Bool
    /// Whether the connection ended with an error (e.g. reset by the peer) rather than a clean close.
    var endedWithError = false

    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { headers.first(name: name) }

    /// The `<Code>` of an S3 error document.
    var errorCode: String? {
        guard let start = text.range(of: "<Code>"), let end = text.range(of: "</Code>") else { return nil }
        return String(text[start.upperBound..<end.lowerBound])
    }
}

/// A minimal HTTP/1.1 client on NIO for driving the server in tests: one connection per request.
enum TestHTTPClient {
    struct ConnectionClosed: Error {}

    /// Sends one request and collects the response.
    /// - Parameters:
    ///   - onBodyBytes: Called on the event loop with the body byte count received so far.
    ///   - closeAfterHead: Send only the head and part of the body, then close (a client dying mid-upload).
    static func send(
        port: Int, method: String, uri: String, headers: [(String, String)], body: Data? = nil,
        host: String? = nil, sendBodyPrefixThenClose: Int? = nil,
        onBodyBytes: (@Sendable (Int, any Channel) -> Void)? = nil
    ) async throws -> TestResponse {
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: TestResponse.self)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(
                        ResponseCollector(promise: promise, onBodyBytes: onBodyBytes))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: uri)
        head.headers.add(name: "Host", value: host ?? "127.0.0.1:\(port)")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        if let body, !head.headers.contains(name: "content-length") {
            head.headers.add(name: "Content-Length", value: String(body.count))
        } else if body == nil, ["PUT", "POST"].contains(method), !head.headers.contains(name: "content-length") {
            head.headers.add(name: "Content-Length", value: "0")
        }
        head.headers.add(name: "Connection", value: "close")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let body, !body.isEmpty {
            let count = sendBodyPrefixThenClose.map { min($0, body.count) } ?? body.count
            channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body.prefix(count)))), promise: nil)
        }
        if sendBodyPrefixThenClose != nil {
            try await channel.writeAndFlush(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer()))).get()
            try await channel.close()
            throw ConnectionClosed()
        }
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        return try await promise.futureResult.get()
    }
}

/// Collects head and body; completes on `.end` or when the connection closes.
private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    let promise: EventLoopPromise<TestResponse>
    let onBodyBytes: (@Sendable (Int, any Channel) -> Void)?
    var head: HTTPResponseHead?
    var body = Data()
    var done = false

    init(promise: EventLoopPromise<TestResponse>, onBodyBytes: (@Sendable (Int, any Channel) -> Void)?) {
        self.promise = promise
        self.onBodyBytes = onBodyBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            if h.status.code >= 100 && h.status.code < 200 { return }
            head = h
        case .body(let buffer):
            buffer.withUnsafeReadableBytes { body.append($0.assumingMemoryBound(to: UInt8.self)) }
            onBodyBytes?(body.count, context.channel)
        case .end:
            complete(true)
            context.close(promise: nil)
        }
    }

    private func complete(_ ended: Bool, error: Bool = false) {
        guard !done else { return }
        done = true
        if let head {
            promise.succeed(
                TestResponse(
                    status: Int(head.status.code), headers: head.headers, body: body, complete: ended,
                    endedWithError: error))
        } else {
            promise.fail(TestHTTPClient.ConnectionClosed())
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        complete(false)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        complete(false, error: true)
        context.close(promise: nil)
    }
}
