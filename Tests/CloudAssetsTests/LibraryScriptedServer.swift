import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A minimal HTTP/1.1 server on 127.0.0.1 answering every request with what `respond` returns for its request
/// line — for answers the fake server cannot give (a malformed listing). One connection at a time; every response
/// closes its connection.
final class ScriptedServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let respond: @Sendable (String) -> (status: Int, body: String)
    private let finished = DispatchSemaphore(value: 0)
    let requestLines = Shared<[String]>([])

    init(respond: @escaping @Sendable (_ requestLine: String) -> (status: Int, body: String)) throws {
        self.respond = respond
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Stops accepting and waits for the accept loop to end.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        finished.wait()
        close(listener)
    }

    private func serve() {
        defer { finished.signal() }
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            handle(connection)
            close(connection)
        }
    }

    private func handle(_ connection: Int32) {
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        while !received.ends(with: terminator) && !received.containsSubsequence(terminator) {
            let n = read(connection, &buffer, buffer.count)
            if n <= 0 { return }
            received += buffer[0..<n]
        }
        let head = String(decoding: received, as: UTF8.self)
        let requestLine = String(head.prefix { $0 != "\r" })
        requestLines.withLock { $0.append(requestLine) }
        let (status, body) = respond(requestLine)
        let bodyBytes = Array(body.utf8)
        let response =
            "HTTP/1.1 \(status) Scripted\r\nContent-Type: application/xml\r\nContent-Length: \(bodyBytes.count)\r\n"
            + "Connection: close\r\n\r\n"
        let bytes = Array(response.utf8) + bodyBytes
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            sent += n
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }

    fileprivate func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard count >= needle.count else { return false }
        for start in 0...(count - needle.count) where Array(self[start..<(start + needle.count)]) == needle {
            return true
        }
        return false
    }
}
