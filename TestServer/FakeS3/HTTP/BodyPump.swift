import Foundation
import NIOCore
import NIOHTTP1

/// Writes an object body chunk by chunk while applying body faults: a bandwidth limit, a flipped
/// byte, a hold until a gate opens, and a stall, reset or truncation after N bytes. Lives on the
/// channel's event loop; one chunk is in flight at a time.
final class BodyPump {
    private let handler: S3ChannelHandler
    private let context: ChannelHandlerContext
    private let exchange: S3ChannelHandler.Exchange
    private let body: ObjectBody
    private let range: Range<Int64>
    private let plan: BodyFaultPlan
    private let limit: Int64
    private let chunkSize: Int64
    private var sent: Int64 = 0
    /// Bytes whose writes succeeded.
    private var written: Int64 = 0
    private let sentBytes: SentBytes
    private let started = NIODeadline.now()
    private var fileClosed = false
    /// Whether the body has waited for its gate (``BodyFaultPlan/hold``).
    private var held = false

    init(
        handler: S3ChannelHandler, context: ChannelHandlerContext, exchange: S3ChannelHandler.Exchange,
        body: ObjectBody, range: Range<Int64>, plan: BodyFaultPlan, sent: SentBytes
    ) {
        self.sentBytes = sent
        self.handler = handler
        self.context = context
        self.exchange = exchange
        self.body = body
        self.range = range
        self.plan = plan
        limit = plan.bytesSent(of: Int64(range.count))
        // Without a bandwidth limit, large chunks: a faulty body then streams about as fast as a clean one (the
        // reset benchmark compares the two), with one chunk in flight at a time.
        chunkSize = Int64(plan.bytesPerSecond.map { max(1, min(65_536, $0 / 20)) } ?? 1 << 20)
    }

    func start() {
        guard plan.flipOffset == nil, plan.bytesPerSecond == nil, plan.hold == nil, limit > 0 else {
            step()
            return
        }
        // Only a cut: the bytes before it go out as fast as a clean body (sendfile), then the cut is applied.
        let prefix = range.lowerBound..<(range.lowerBound + limit)
        var handle: NIOFileHandle?
        if case .file(let fd) = body {
            handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: fd)
            fileClosed = true  // the handle owns the descriptor now
        }
        let written = handler.writeChunks(body, handle: handle, range: prefix, sentBytes, context: context)
        context.flush()
        sent = limit
        written.assumeIsolated().whenComplete { result in
            try? handle?.close()
            guard case .success = result else {
                self.sentBytes.complete()
                return
            }
            self.written = self.limit
            self.cut()
        }
    }

    private func closeFile() {
        guard !fileClosed else { return }
        fileClosed = true
        if case .file(let fd) = body { POSIX.closeFile(fd) }
    }

    private func step() {
        guard context.channel.isActive else {
            closeFile()
            sentBytes.complete(bytesSent: written)
            return
        }
        if let hold = plan.hold, sent >= hold.after, !held, sent < limit {
            held = true
            let loop = context.eventLoop
            let pump = NIOLoopBound(self, eventLoop: loop)
            hold.gate.whenOpen { loop.execute { pump.value.step() } }
            return
        }
        if sent >= limit {
            cut()
            return
        }
        var n = Int(min(chunkSize, limit - sent))
        if let hold = plan.hold, !held, sent < hold.after { n = min(n, Int(hold.after - sent)) }
        let objectOffset = range.lowerBound + sent
        var chunk: ByteBuffer
        switch body {
        case .memory(let buffer):
            chunk = buffer.getSlice(at: buffer.readerIndex + Int(objectOffset), length: n)!
        case .file(let fd):
            chunk = context.channel.allocator.buffer(capacity: n)
            var failed = false
            while chunk.readableBytes < n && !failed {
                let have = chunk.readableBytes
                let got = chunk.writeWithUnsafeMutableBytes(minimumWritableBytes: n - have) { raw in
                    let target = UnsafeMutableRawBufferPointer(rebasing: raw[0..<(n - have)])
                    return max(0, POSIX.read(fd, into: target, at: objectOffset + Int64(have)))
                }
                if got == 0 { failed = true }
            }
            if failed {
                closeFile()
                sentBytes.complete(bytesSent: written)
                context.close(promise: nil)
                return
            }
        }
        if let flip = plan.flipOffset, flip >= objectOffset, flip < objectOffset + Int64(n) {
            let index = chunk.readerIndex + Int(flip - objectOffset)
            let byte = chunk.getInteger(at: index, as: UInt8.self)!
            chunk.setInteger(~byte, at: index)
        }
        sent += Int64(n)
        context.writeAndFlush(handler.wrapOutboundOut(.body(.byteBuffer(chunk)))).assumeIsolated().whenComplete {
            result in
            guard case .success = result else {
                self.closeFile()
                self.sentBytes.complete(bytesSent: self.written)
                return
            }
            self.written += Int64(n)
            self.scheduleNext()
        }
    }

    private func scheduleNext() {
        guard let bps = plan.bytesPerSecond else {
            step()
            return
        }
        let due = started + .nanoseconds(Int64(Double(sent) / Double(bps) * 1e9))
        if due <= .now() {
            step()
        } else {
            context.eventLoop.assumeIsolated().scheduleTask(deadline: due) { self.step() }
        }
    }

    private func cut() {
        closeFile()
        let total = Int64(range.count)
        guard let cut = plan.cut, limit < total else {
            handler.finish(exchange, context: context, sent: sentBytes)
            return
        }
        sentBytes.complete(bytesSent: written)  // the cut: nothing more is written
        switch cut {
        case .stall:
            break  // Nothing more is sent; the connection stays open until the peer or stop() closes it.
        case .truncate:
            context.close(promise: nil)
        case .reset:
            if let provider = context.channel as? any SocketOptionProvider {
                provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
                    self.context.close(promise: nil)
                }
            } else {
                context.close(promise: nil)
            }
        }
    }
}
