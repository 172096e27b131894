import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A tiny HTTP/1.1 server on loopback for engine tests: every request is recorded and answered by a
/// closure. One thread per connection; keep-alive supported.
final class ScriptedHTTPServer: @unchecked Sendable {
    struct Request: Sendable {
        var method: String
        var path: String
        var headers: [String: String]
        var body: Data
        var connection: Int
    }

    struct Response: Sendable {
        var status: Int
        var headers: [(String, String)]
        var body: Data
        /// Send only this many body bytes, then close (a reset mid-body).
        var cutAfter: Int?
        /// Wait for this signal before sending the body (lets a test cancel mid-transfer).
        var holdBody: DispatchSemaphore?

        init(
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

    private let listenFD: Int32
    let port: Int
    private let handler: @Sendable (Request) -> Response
    private let log = LockedBox<[Request]>([])
    private let connections = LockedBox<Int>(0)

    init(handler: @escaping @Sendable (Request) -> Response) throws {
        self.handler = handler
        let listenFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listenFD = listenFD
        var one: Int32 = 1
        setsockopt(listenFD, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listenFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listenFD, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listenFD, $0, &len) }
        }
        port = Int(UInt16(bigEndian: addr.sin_port))
        let fd = listenFD
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }
                let number = connections.withLock { count -> Int in
                    count += 1
                    return count
                }
                Thread.detachNewThread { [self] in serve(client, connection: number) }
            }
        }
    }

    var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }
    var requests: [Request] { log.withLock { $0 } }
    var connectionCount: Int { connections.withLock { $0 } }

    func stop() {
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
    }

    private func serve(_ fd: Int32, connection: Int) {
        defer { close(fd) }
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            // Read the head.
            var headEnd: Int?
            while headEnd == nil {
                if let r = findHeadEnd(buffer) {
                    headEnd = r
                    break
                }
                let n = read(fd, &chunk, chunk.count)
                guard n > 0 else { return }
                buffer.append(contentsOf: chunk[0..<n])
            }
            let headText = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
            buffer.removeFirst(headEnd! + 4)
            var lines = headText.components(separatedBy: "\r\n")
            let requestLine = lines.removeFirst().split(separator: " ")
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
                method: String(requestLine[0]), path: String(requestLine[1]), headers: headers, body: body,
                connection: connection)
            log.withLock { $0.append(request) }
            let response = handler(request)
            var head = "HTTP/1.1 \(response.status) X\r\n"
            var hasLength = false
            for (name, value) in response.headers {
                head += "\(name): \(value)\r\n"
                if name.lowercased() == "content-length" { hasLength = true }
            }
            if !hasLength { head += "Content-Length: \(response.body.count)\r\n" }
            head += "\r\n"
            guard sendAll(fd, Array(head.utf8)) else { return }
            response.holdBody?.wait()
            if request.method == "HEAD" { continue }
            let toSend = response.cutAfter.map { min($0, response.body.count) } ?? response.body.count
            guard sendAll(fd, [UInt8](response.body.prefix(toSend))) else { return }
            if response.cutAfter != nil { return }
        }
    }

    private func findHeadEnd(_ b: [UInt8]) -> Int? {
        guard b.count >= 4 else { return nil }
        for i in 0...(b.count - 4) where b[i] == 13 && b[i + 1] == 10 && b[i + 2] == 13 && b[i + 3] == 10 {
            return i
        }
        return nil
    }

    private func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }
}

/// A lock-guarded value for test helpers.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    @discardableResult
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
