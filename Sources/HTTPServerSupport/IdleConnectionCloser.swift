public import NIOCore
public import NIOHTTP1

/// Closes an HTTP connection that has sent nothing for a while when it was the client's turn to send: before its
/// first request, part-way through one (a head cut short, a body that stopped), or between requests. While the
/// server is still answering a request it received whole — however long the answer takes (a slow download, an
/// event stream) — the connection is left alone.
///
/// A connection that stalls otherwise holds its socket and buffers until the client goes: a few thousand of them
/// exhaust the process's descriptors. The clock is an `IdleStateHandler` at the front of the pipeline (it counts
/// bytes, so a request trickling in is not idle); this handler, behind the HTTP codec, tells its read-idle events
/// apart by whose turn it is.
public final class IdleConnectionCloser: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPServerRequestPart
    public typealias InboundOut = HTTPServerRequestPart
    public typealias OutboundIn = HTTPServerResponsePart
    public typealias OutboundOut = HTTPServerResponsePart

    /// Requests received whole minus answers ended: above zero, the server is answering.
    private var unanswered = 0

    public init() {}

    /// The two handlers to add, in this order: the clock first in the pipeline, the closer after the HTTP codec.
    /// - Parameter timeout: How long the client may send nothing when it is its turn.
    public static func clock(timeout: TimeAmount) -> IdleStateHandler { IdleStateHandler(readTimeout: timeout) }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) { unanswered += 1 }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // An answer may end before its request did (an error sent before the body): the count goes below zero
        // until the request's end arrives.
        if case .end = unwrapOutboundIn(data) { unanswered -= 1 }
        context.write(data, promise: promise)
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .read? = event as? IdleStateHandler.IdleStateEvent {
            if unanswered <= 0 { context.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
