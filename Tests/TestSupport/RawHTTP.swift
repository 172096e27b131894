import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// HTTP/1.1 over a plain socket, so a test can send exactly the request line and headers it wants (a hostile
/// path, a forged `Host`) — no client library normalises them.
public enum RawHTTP {
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Connects to 127.0.0.1:`port` with a receive timeout.
    public static func connect(port: Int, timeout: Double = 30) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        return fd
    }

    /// Sends `requestLine` (`METHOD target`) with `headers` (a `Host` naming 127.0.0.1 unless given; `nil` value:
    /// leave the header out) and `body`, and reads the whole response (`Connection: close`).
    public static func send(
        port: Int, _ requestLine: String, headers: [String: String?] = [:], body: Data = Data()
    ) async throws -> Response {
        try await offThePool { try sendBlocking(port: port, requestLine, headers: headers, body: body) }
    }

    public static func sendBlocking(
        port: Int, _ requestLine: String, headers: [String: String?], body: Data
    ) throws -> Response {
        let fd = try connect(port: port)
        defer { close(fd) }
        var all = ["Host": "127.0.0.1:\(port)", "Connection": "close", "Content-Length": "\(body.count)"]
        for (name, value) in headers { all[name] = value }
        var head = requestLine + " HTTP/1.1\r\n"
        for (name, value) in all.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try write(fd, Data(head.utf8) + body)
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return try parse(received)
    }

    public static func write(_ fd: Int32, _ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let sent = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                guard sent > 0 else { throw POSIXError(.EPIPE) }
                offset += sent
            }
        }
    }

    public static func parse(_ data: Data) throws -> Response {
        guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else { throw POSIXError(.EBADMSG) }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(head[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: Data(data[end.upperBound...]))
    }
}

/// Runs blocking socket I/O on a thread of its own: blocking the tests' cooperative threads would starve the
/// server under test, which answers on the same pool.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
