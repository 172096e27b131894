import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small HTTP/1.1 server on 127.0.0.1 whose every answer a test scripts — for what a well-behaved server never
/// sends (a body cut off, a lying `Content-Length`, a malformed listing, a stall mid-body). Every request is
/// recorded. One thread per connection; keep-alive unless a reply closes the connection.
public final class ScriptedHTTPServer: Sendable {
    /// A request as received.
    public struct Request: Sendable {
        public var method: String
        /// The request target: path and query, as sent.
        public var path: String
        /// Header fields, names lower-cased.
        public var headers: [String: String]
        /// The request line and header block, as sent.
        public var head: String
        public var body: Data
        /// Which connection (1, 2, …, in accept order) carried it.
        public var connection: Int

        /// The request target (`path`).
        public var target: String { path }
    }

    /// A well-formed response, possibly cut short.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var body: Data
        /// Send only this many body bytes, then close (a reset mid-body).
        public var cutAfter: Int?
        /// Wait for this signal before sending the body (lets a test act mid-transfer).
        public var holdBody: DispatchSemaphore?

        public init(
            status: Int, headers: [(String, String)] = [], body: Data = Data(), cutAfter: Int? = nil,
            holdBody: DispatchSemaphore? = nil
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.cutAfter = cutAfter
            self.holdBody = holdBody
        }
    }

    /// What the server does with a request.
    public enum Reply: Sendable {
        /// Answer with this response; the connection stays open (unless it is cut).
        case response(Response)
        /// Write these bytes as they are (status line, headers, body: anything), then close the connection.
        case raw(Data)
    }

    public let port: Int
    private let listener: Int32
    private let reply: @Sendable (Request) -> Reply
    private let log = LockedBox<[Request]>([])
    private let state = LockedBox<(connections: Int, stopped: Bool)>((0, false))
    private let acceptLoopEnded = DispatchSemaphore(value: 0)
    /// Who started the server (``OpenResources/owner``): its threads are filed under that name.
    private let owner = OpenResources.owner

    /// A server answering each request with `reply`'s answer.
    public init(reply: @escaping @Sendable (Request) -> Reply) throws {
        guard let (fd, port) = LoopbackSocket.listen() else { throw POSIXError(.EADDRINUSE) }
        listener = fd
        self.port = port
        self.reply = reply
        let entry = OpenResources.opened("scripted HTTP server on port \(port)")
        Thread.detachNewThread { [self] in
            acceptLoop()
            OpenResources.closed(entry)
        }
    }

    /// A server answering each request with a well-formed (possibly cut) response.
    public convenience init(handler: @escaping @Sendable (Request) -> Response) throws {
        try self.init(reply: { .response(handler($0)) })
    }

    public var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// Every request so far, in arrival order.
    public var requests: [Request] { log.withLock { $0 } }
    /// Connections accepted so far.
    public var connectionCount: Int { state.withLock { $0.connections } }

    /// Stops accepting and waits for the accept loop to end. Idempotent. Connections already open end when their
    /// client closes them.
    public func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        acceptLoopEnded.wait()
        close(listener)
    }

    /// A server answering each request with the raw bytes `respond` returns, then closing the connection.
    public static func raw(_ respond: @escaping @Sendable (Request) -> Data) throws -> ScriptedHTTPServer {
        try ScriptedHTTPServer(reply: { .raw(respond($0)) })
    }

    /// A raw response with a status, headers and body; `contentLength` overrides the announced length (to lie).
    /// It closes its connection.
    public static func raw(
        status: Int = 200, headers: [(String, String)] = [], body: Data = Data(), contentLength: Int? = nil
    ) -> Data {
        var head = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Error")\r\n"
        head += "Content-Length: \(contentLength ?? body.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Data(head.utf8) + body
    }

    private func acceptLoop() {
        defer { acceptLoopEnded.signal() }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let number = state.withLock { state -> Int in
                state.connections += 1
                return state.connections
            }
            let entry = OpenResources.opened("scripted HTTP server's connection \(number)", owner: owner)
            Thread.detachNewThread { [self] in
                serve(client, connection: number)
                OpenResources.closed(entry)
            }
        }
    }

    private func serve(_ fd: Int32, connection: Int) {
        defer { close(fd) }
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            var headEnd = Self.headEnd(buffer)
            while headEnd == nil {
                let n = read(fd, &chunk, chunk.count)
                guard n > 0 else { return }
                buffer.append(contentsOf: chunk[0..<n])
                headEnd = Self.headEnd(buffer)
            }
            let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
            buffer.removeFirst(headEnd! + 4)
            var lines = head.components(separatedBy: "\r\n")
            let requestLine = lines.removeFirst().split(separator: " ")
            guard requestLine.count >= 2 else { return }
            var headers: [String: String] = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            while buffer.count < length {
                let n = read(fd, &chunk, chunk.count)
                guard n > 0 else { return }
                buffer.append(contentsOf: chunk[0..<n])
            }
            let body = Data(buffer[0..<length])
            buffer.removeFirst(length)
            let request = Request(
                method: String(requestLine[0]), path: String(requestLine[1]), headers: headers, head: head,
                body: body, connection: connection)
            log.withLock { $0.append(request) }
            switch reply(request) {
            case .raw(let bytes):
                _ = Self.sendAll(fd, [UInt8](bytes))
                shutdown(fd, Int32(SHUT_WR))
                return
            case .response(let response):
                var text = "HTTP/1.1 \(response.status) X\r\n"
                var hasLength = false
                for (name, value) in response.headers {
                    text += "\(name): \(value)\r\n"
                    if name.lowercased() == "content-length" { hasLength = true }
                }
                if !hasLength { text += "Content-Length: \(response.body.count)\r\n" }
                text += "\r\n"
                guard Self.sendAll(fd, Array(text.utf8)) else { return }
                response.holdBody?.wait()
                if request.method == "HEAD" { continue }
                let toSend = response.cutAfter.map { min($0, response.body.count) } ?? response.body.count
                guard Self.sendAll(fd, [UInt8](response.body.prefix(toSend))) else { return }
                if response.cutAfter != nil { return }
            }
        }
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4)
        where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }

    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }
}
