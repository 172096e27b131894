import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A tiny HTTP/1.1 server on a raw socket that answers every request with bytes the test crafts — for responses
/// no well-behaved server would send (lying Content-Length, malformed listings, hostile keys). One connection at
/// a time; each answer closes its connection.
final class RawHTTPServer: @unchecked Sendable {
    /// A request as received: method, path with query, and the raw header block.
    struct Request: Sendable {
        var method: String
        var target: String
        var headers: String
    }

    let port: Int
    private let listener: Int32
    private let log = RequestRecorder()

    /// - Parameter respond: Returns the whole response (status line, headers, body) for a request.
    init(respond: @escaping @Sendable (Request) -> Data) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ChildError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw ChildError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let log = self.log
        let thread = Thread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                Self.serve(client, log: log, respond: respond)
            }
        }
        thread.start()
    }

    deinit { stop() }

    var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The requests answered so far.
    var requests: [Request] { log.all }

    /// Stops accepting: the accept loop ends once the listening socket is shut down. Idempotent.
    func stop() {
        guard log.markStopped() else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func serve(_ client: Int32, log: RequestRecorder, respond: @Sendable (Request) -> Data) {
        defer { close(client) }
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !buffer.containsHeaderEnd {
            let n = recv(client, &chunk, chunk.count, 0)
            if n <= 0 { return }
            buffer += chunk[0..<n]
        }
        let head = String(decoding: buffer, as: UTF8.self)
        let firstLine = head.prefix { $0 != "\r" }.split(separator: " ")
        guard firstLine.count >= 2 else { return }
        let request = Request(method: String(firstLine[0]), target: String(firstLine[1]), headers: head)
        log.append(request)
        let response = respond(request)
        response.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let n = send(client, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                if n <= 0 { return }
                sent += n
            }
        }
        shutdown(client, Int32(SHUT_WR))
    }

    /// A response with a status, headers and body; `contentLength` overrides the announced length (to lie).
    static func response(
        status: Int = 200, headers: [(String, String)] = [], body: Data = Data(), contentLength: Int? = nil
    ) -> Data {
        var head = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Error")\r\n"
        head += "Content-Length: \(contentLength ?? body.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Data(head.utf8) + body
    }
}

private final class RequestRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [RawHTTPServer.Request] = []
    private var stopped = false

    func append(_ request: RawHTTPServer.Request) { lock.withLock { requests.append(request) } }
    var all: [RawHTTPServer.Request] { lock.withLock { requests } }

    /// True the first time only.
    func markStopped() -> Bool {
        lock.withLock {
            defer { stopped = true }
            return !stopped
        }
    }
}

extension [UInt8] {
    fileprivate var containsHeaderEnd: Bool {
        guard count >= 4 else { return false }
        for i in 0...(count - 4) where self[i] == 13 && self[i + 1] == 10 && self[i + 2] == 13 && self[i + 3] == 10 {
            return true
        }
        return false
    }
}
