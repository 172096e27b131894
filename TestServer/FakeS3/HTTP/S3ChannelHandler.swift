import Essentials
import Foundation
import NIOCore
import NIOHTTP1

/// Serves S3 requests on one connection: parses and authenticates each request as its head arrives,
/// streams an upload's body into storage, then writes the response (streamed, with any faults that
/// fired). Lives on its channel's event loop.
final class S3ChannelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// One request/response exchange.
    struct Exchange {
        var head: HTTPRequestHead
        var request: S3Request?
        var operation: S3Operation?
        var requestID = ServerCore.requestID()
        var date = Date()
        var faults: [Fault] = []
        var keepAlive: Bool
        /// Object data received so far (PutObject, UploadPart).
        var bodyReceived: Int64 = 0
        /// Where a fault cuts the object data being received: after so many bytes, by a reset or a close.
        var bodyCut: (after: Int64, reset: Bool)?
    }

    enum Incoming {
        /// Object data streaming to storage.
        case upload(UploadReceiver)
        /// A small body (XML), collected whole.
        case small(ByteBuffer?)
        /// The request already failed; its body is drained and ignored.
        case failed(S3Error)
        /// A request to the admin endpoint.
        case admin(ByteBuffer?)
    }

    enum State {
        case idle
        case receiving(Exchange, Incoming)
        /// An error went out before the body arrived; the connection closes once it is written.
        case respondedEarly
        case responding
    }

    /// Largest XML request body accepted (DeleteObjects of 1,000 long keys fits).
    static let maxSmallBody = 2 << 20

    let core: ServerCore
    var state = State.idle

    init(core: ServerCore) { self.core = core }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            receiveHead(head, context: context)
        case .body(let buffer):
            receiveBody(buffer, context: context)
        case .end:
            receiveEnd(context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .receiving(_, .upload(let receiver)) = state { receiver.abort() }
        state = .idle
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case .receiving(_, .upload(let receiver)) = state { receiver.abort() }
        state = .idle
        context.close(promise: nil)
    }

    // MARK: Receiving

    private func receiveHead(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        var exchange = Exchange(head: head, keepAlive: head.isKeepAlive)
        do {
            let request = try S3Request(head: head, virtualHostSuffixes: core.virtualHostSuffixes)
            exchange.request = request
            if core.configuration.faultsEnabled, AdminEndpoint.handles(request) {
                state = .receiving(exchange, .admin(nil))
                return
            }
            let operation = try S3Operation.route(request)
            exchange.operation = operation
            var signed: SignedRequest?
            if core.requiresAuthentication {
                switch try core.authenticator.authenticate(request) {
                case .signed(let s): signed = s
                case .anonymous:
                    guard operation.isRead, let bucket = operation.bucket, core.isPublic(bucket) else {
                        throw S3Error.accessDenied()
                    }
                }
            }
            exchange.faults = core.faults.faults(method: request.method, key: request.key ?? "")
            try applyRequestFaults(exchange)
            var partChecksum: ChecksumAlgorithm?
            if case .uploadPart(let bucket, let key) = operation {
                partChecksum = try core.service.validateUploadPart(bucket, key, request)
            }
            if operation.receivesObjectData {
                exchange.bodyCut = Self.uploadCut(exchange.faults)
                let expected = Int(head.headers.first(name: "content-length") ?? "") ?? 0
                var slot: UploadSink?
                if case .uploadPart(let bucket, let key) = operation {
                    slot = core.service.partSink(bucket, key, request)
                }
                let sink =
                    try slot
                    ?? core.store.makeUpload(
                        bucket: operation.bucket ?? "", allocator: context.channel.allocator, expectedSize: expected)
                do {
                    state = .receiving(
                        exchange,
                        .upload(
                            try UploadReceiver(request: request, signed: signed, sink: sink, required: partChecksum)))
                } catch {
                    sink.abort()
                    throw error
                }
            } else {
                state = .receiving(exchange, .small(nil))
            }
            if head.headers.first(name: "expect")?.lowercased() == "100-continue" {
                context.writeAndFlush(
                    wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
            }
        } catch {
            let s3Error = error as? S3Error ?? .internalError
            if head.headers.first(name: "expect")?.lowercased() == "100-continue" {
                // The client waits for our verdict before sending the body: answer now and close.
                exchange.keepAlive = false
                state = .respondedEarly
                respond(errorResponse(s3Error, exchange), exchange, context: context)
            } else {
                state = .receiving(exchange, .failed(s3Error))
            }
        }
    }

    /// Faults that act before the request is served: error answers and changes to the stored object.
    private func applyRequestFaults(_ exchange: Exchange) throws(S3Error) {
        for fault in exchange.faults {
            switch fault {
            case .internalError: throw .internalError
            case .slowDown(let retryAfter): throw .slowDown(retryAfter: retryAfter)
            default: break
            }
        }
        guard let bucket = exchange.request?.bucket, let key = exchange.request?.key else { return }
        for fault in exchange.faults {
            switch fault {
            case .replaceObject(let data):
                let contentType = (try? core.store.info(bucket: bucket, key: key))?.contentType
                _ = try? core.putObject(bucket: bucket, key: key, data: data, contentType: contentType)
            case .deleteObject:
                _ = try? core.store.deleteObject(bucket: bucket, key: key)
            default: break
            }
        }
    }

    /// The cut of an upload's body a fault asks for: `resetAfter` resets the connection, `truncateBody` closes it,
    /// after that many bytes of object data were received (the earliest wins).
    static func uploadCut(_ faults: [Fault]) -> (after: Int64, reset: Bool)? {
        var cut: (after: Int64, reset: Bool)?
        for fault in faults {
            switch fault {
            case .resetAfter(let n) where cut == nil || Int64(n) < cut!.after: cut = (Int64(max(0, n)), true)
            case .truncateBody(let n) where cut == nil || Int64(n) < cut!.after: cut = (Int64(max(0, n)), false)
            default: break
            }
        }
        return cut
    }

    private func receiveBody(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        guard case .receiving(var exchange, let incoming) = state else { return }
        switch incoming {
        case .upload(let receiver):
            exchange.bodyReceived += Int64(buffer.readableBytes)
            if let cut = exchange.bodyCut, exchange.bodyReceived >= cut.after {
                // The client's upload breaks off: nothing of it is kept, and it gets no answer.
                receiver.abort()
                state = .idle
                logUnanswered(exchange)
                Self.close(context, reset: cut.reset)
                return
            }
            do {
                try receiver.receive(buffer)
                state = .receiving(exchange, incoming)
            } catch {
                receiver.abort()
                state = .receiving(exchange, .failed(error))
            }
        case .small(let collected), .admin(let collected):
            var all = collected ?? buffer
            if collected != nil {
                var copy = buffer
                all.writeBuffer(&copy)
            }
            if all.readableBytes > Self.maxSmallBody {
                state = .receiving(
                    exchange,
                    .failed(
                        S3Error(
                            status: 400, code: "MaxMessageLengthExceeded",
                            message: "Your request was too big.")))
            } else if case .admin = incoming {
                state = .receiving(exchange, .admin(all))
            } else {
                state = .receiving(exchange, .small(all))
            }
        case .failed:
            break
        }
    }

    private func receiveEnd(context: ChannelHandlerContext) {
        guard case .receiving(let exchange, let incoming) = state else {
            if case .respondedEarly = state { state = .responding }
            return
        }
        state = .responding
        var response: S3Response
        switch incoming {
        case .failed(let error):
            response = errorResponse(error, exchange)
        case .admin(let body):
            response = AdminEndpoint(core: core).handle(exchange.request!, body: body)
            write(response, exchange, log: false, context: context)
            return
        case .upload(let receiver):
            do {
                response = try core.service.execute(exchange.operation!, exchange.request!, body: .upload(receiver))
            } catch {
                receiver.abort()
                response = errorResponse(error, exchange)
            }
        case .small(let body):
            var options = S3Service.Options()
            options.ignoreRange = exchange.faults.contains(.fullBodyInsteadOfPartial)
            do {
                response = try core.service.execute(
                    exchange.operation!, exchange.request!, body: body.map { .buffer($0) } ?? .none,
                    options: options)
            } catch {
                response = errorResponse(error, exchange)
            }
        }
        respond(response, exchange, context: context)
    }

    /// Logs a request a fault left without an answer (status 0).
    private func logUnanswered(_ exchange: Exchange) {
        let r = exchange.request
        let sequence = core.log.append(
            RequestLogEntry(
                method: exchange.head.method.rawValue, bucket: r?.bucket, key: r?.key, query: r?.rawQuery ?? "",
                rangeHeader: exchange.head.headers.first(name: "range"),
                ifMatch: exchange.head.headers.first(name: "if-match"),
                ifNoneMatch: exchange.head.headers.first(name: "if-none-match"), status: 0, bytesSent: 0,
                date: exchange.date, host: exchange.head.headers.first(name: "host"),
                isVirtualHosted: r?.isVirtualHosted ?? false))
        core.log.complete(sequence, bytesSent: 0)
    }

    /// Closes the connection; with `reset`, by a TCP RST (linger 0) rather than a FIN.
    static func close(_ context: ChannelHandlerContext, reset: Bool) {
        guard reset, let provider = context.channel as? any SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    private func errorResponse(_ error: S3Error, _ exchange: Exchange) -> S3Response {
        let resource = exchange.request?.path ?? String(exchange.head.uri.prefix { $0 != "?" })
        return .error(error, resource: resource, requestID: exchange.requestID, isHead: exchange.head.method == .HEAD)
    }

    // MARK: Responding

    /// Applies the latency faults, then writes the response (or, for `dropResponse`, closes the connection).
    private func respond(_ response: S3Response, _ exchange: Exchange, context: ChannelHandlerContext) {
        if exchange.faults.contains(.dropResponse) {
            response.discard()
            state = .idle
            logUnanswered(exchange)
            context.close(promise: nil)
            return
        }
        var delay = 0
        for case .latency(let ms) in exchange.faults { delay += max(0, ms) }
        if delay == 0 {
            write(response, exchange, log: true, context: context)
        } else {
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(delay))) {
                self.write(response, exchange, log: true, context: context)
            }
        }
    }

    private func write(_ response: S3Response, _ exchange: Exchange, log: Bool, context: ChannelHandlerContext) {
        guard context.channel.isActive else {
            response.discard()
            return
        }
        var response = response
        let documentPlan = BodyFaultPlan(exchange.faults)
        var completion = false
        if case .completeMultipartUpload = exchange.operation { completion = true }
        if case .buffer(let document) = response.body, response.status == .ok,
            completion && documentPlan.cut != nil || documentPlan.hold != nil
        {
            // The result document of a completion cut short, like an object body (the object is stored); a
            // document (a listing page) held at the gate like an object body.
            response.headers.replaceOrAdd(name: "Content-Length", value: String(document.readableBytes))
            response.body = .object(.memory(document), range: 0..<Int64(document.readableBytes))
        }
        var headers = response.headers
        headers.add(name: "x-amz-request-id", value: exchange.requestID)
        headers.add(name: "x-amz-id-2", value: exchange.requestID)
        headers.add(name: "Date", value: HTTPDate.now())
        headers.add(name: "Server", value: "FakeS3")
        let isHead = exchange.head.method == .HEAD
        var plan = BodyFaultPlan([])
        var bodyBytes: Int64 = 0
        switch response.body {
        case .empty:
            if !headers.contains(name: "content-length") && response.status.mayHaveResponseBody {
                headers.add(name: "Content-Length", value: "0")
            }
        case .buffer(let buffer):
            headers.replaceOrAdd(name: "Content-Length", value: String(buffer.readableBytes))
            bodyBytes = isHead ? 0 : Int64(buffer.readableBytes)
        case .object(_, let range):
            plan = BodyFaultPlan(exchange.faults)
            bodyBytes = plan.bytesSent(of: Int64(range.count))
        }
        if !exchange.keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        var sequence = -1
        if log {
            let r = exchange.request
            sequence = core.log.append(
                RequestLogEntry(
                    method: exchange.head.method.rawValue, bucket: r?.bucket, key: r?.key, query: r?.rawQuery ?? "",
                    rangeHeader: exchange.head.headers.first(name: "range"),
                    ifMatch: exchange.head.headers.first(name: "if-match"),
                    ifNoneMatch: exchange.head.headers.first(name: "if-none-match"), status: Int(response.status.code),
                    bytesSent: bodyBytes, date: exchange.date, host: exchange.head.headers.first(name: "host"),
                    isVirtualHosted: r?.isVirtualHosted ?? false))
        }
        let sent = SentBytes(log: log ? core.log : nil, sequence: sequence, planned: bodyBytes)
        let head = HTTPResponseHead(version: exchange.head.version, status: response.status, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        switch response.body {
        case .empty:
            finish(exchange, context: context, sent: sent)
        case .buffer(let buffer):
            if !isHead { writeCounted(.byteBuffer(buffer), bytes: Int64(buffer.readableBytes), sent, context: context) }
            finish(exchange, context: context, sent: sent)
        case .object(let body, let range):
            if plan.isEmpty {
                writeObject(body, range: range, exchange, sent, context: context)
            } else {
                let pump = BodyPump(
                    handler: self, context: context, exchange: exchange, body: body, range: range, plan: plan,
                    sent: sent)
                pump.start()
            }
        }
    }

    /// The largest body write whose success or failure is counted on its own (see `RequestLogEntry.bytesSent`).
    static let countedChunk: Int64 = 1 << 20

    /// Writes one piece of body; if its write fails, its bytes count as not sent.
    func writeCounted(
        _ data: IOData, bytes: Int64, _ sent: SentBytes, context: ChannelHandlerContext,
        promise: EventLoopPromise<Void>? = nil
    ) {
        let written = promise ?? context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenFailure { _ in sent.failed += bytes }
        context.write(wrapOutboundOut(.body(data)), promise: written)
    }

    /// Writes `range` of `body` in counted chunks of at most ``countedChunk`` (file chunks go to the kernel
    /// by sendfile). Returns the future of the last chunk's write.
    @discardableResult
    func writeChunks(
        _ body: ObjectBody, handle: NIOFileHandle?, range: Range<Int64>, _ sent: SentBytes,
        context: ChannelHandlerContext
    ) -> EventLoopFuture<Void> {
        var offset = range.lowerBound
        var last = context.eventLoop.makeSucceededVoidFuture()
        while offset < range.upperBound {
            let n = min(Self.countedChunk, range.upperBound - offset)
            let data: IOData
            switch body {
            case .memory(let buffer):
                data = .byteBuffer(buffer.getSlice(at: buffer.readerIndex + Int(offset), length: Int(n))!)
            case .file:
                data = .fileRegion(
                    FileRegion(fileHandle: handle!, readerIndex: Int(offset), endIndex: Int(offset + n)))
            }
            let promise = context.eventLoop.makePromise(of: Void.self)
            last = promise.futureResult
            writeCounted(data, bytes: n, sent, context: context, promise: promise)
            offset += n
        }
        return last
    }

    /// The fast path: slices of the in-memory buffer, or the file handed to the kernel (sendfile).
    private func writeObject(
        _ body: ObjectBody, range: Range<Int64>, _ exchange: Exchange, _ sent: SentBytes,
        context: ChannelHandlerContext
    ) {
        switch body {
        case .memory:
            writeChunks(body, handle: nil, range: range, sent, context: context)
            finish(exchange, context: context, sent: sent)
        case .file(let fd):
            let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: fd)
            writeChunks(body, handle: handle, range: range, sent, context: context)
            finish(exchange, context: context, sent: sent) { try? handle.close() }
        }
    }

    /// Writes the end of the response; then records the bytes sent and closes the connection if it is not
    /// kept alive.
    func finish(
        _ exchange: Exchange, context: ChannelHandlerContext, sent: SentBytes, cleanup: (() -> Void)? = nil
    ) {
        let future = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        let keepAlive = exchange.keepAlive
        future.assumeIsolated().whenComplete { _ in
            sent.complete()
            cleanup?()
            if case .responding = self.state { self.state = .idle }
            if !keepAlive { context.close(promise: nil) }
        }
    }
}
