import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP connection to 127.0.0.1 for sending a server whatever bytes a test likes, every wait bounded by
/// the socket's own timeouts (`SO_RCVTIMEO`, `SO_SNDTIMEO`). Used from one thread at a time.
final class RawConnection {
    /// How a server dealt with a connection.
    enum Verdict: Equatable, CustomStringConvertible {
        /// It closed the connection (end of stream or reset), after `status` if it answered first.
        case closed(status: Int?)
        /// It answered (a whole response head) and kept the connection open.
        case answered(status: Int)
        /// Neither within the time allowed.
        case hung

        var description: String {
            switch self {
            case .closed(let status): "closed" + (status.map { " after \($0)" } ?? "")
            case .answered(let status): "answered \(status)"
            case .hung: "neither answered nor closed"
            }
        }
    }

    private let fd: Int32

    /// Connects; nil when the connection is refused or not accepted within `timeout` seconds.
    init?(port: Int, timeout: Double = 5) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        setTimeouts(timeout)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            return nil
        }
    }

    deinit { Glibc.close(fd) }

    /// Sets how long one `send` or `recv` may block.
    func setTimeouts(_ seconds: Double) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends all of `bytes`; false when the connection broke or a send timed out (the server stopped reading).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Ends what this side sends (the server reads end-of-stream); the connection stays open for reading.
    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Closes with a TCP reset instead of an orderly close.
    func reset() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Reads until the server closes, or has sent a whole response head (status line to the empty line), or
    /// `seconds` pass. What arrived before it was asked is read even when `seconds` is 0.
    func verdict(within seconds: Double) -> Verdict {
        let deadline = Date() + seconds
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            setTimeouts(max(0.01, deadline.timeIntervalSinceNow))
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .hung }
            guard n > 0 else { return .closed(status: Self.status(received)) }
            received += buffer[0..<n]
            // One whole head is an answer; the connection may then stay open (keep-alive).
            if let status = Self.status(received), Self.headEnd(received) != nil { return .answered(status: status) }
        }
    }

    /// Reads one response to the end of the stream (send it with `Connection: close`): its status, headers (names
    /// lower-cased) and the body, or nil when none came whole within `seconds`.
    func response(within seconds: Double) -> (status: Int, headers: [String: String], body: [UInt8])? {
        let deadline = Date() + seconds
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            setTimeouts(max(0.01, left))
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            received += buffer[0..<n]
        }
        guard let status = Self.status(received), let end = Self.headEnd(received) else { return nil }
        var headers: [String: String] = [:]
        for line in String(decoding: received[..<end], as: UTF8.self).split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let body = Array(received[(end + 4)...])
        if let length = headers["content-length"].flatMap(Int.init), length != body.count { return nil }
        return (status, headers, body)
    }

    /// The status code of the response line at the start of `bytes`, once the line is whole.
    static func status(_ bytes: [UInt8]) -> Int? {
        guard let lineEnd = bytes.firstIndex(of: UInt8(ascii: "\r")) else { return nil }
        let line = String(decoding: bytes[..<lineEnd], as: UTF8.self).split(separator: " ")
        guard line.count >= 2, line[0].hasPrefix("HTTP/") else { return nil }
        return Int(line[1])
    }

    /// Where the head's closing empty line starts.
    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4)
        where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }
}

/// Runs `body(i)` for i in 0..<count, each on a thread of its own (blocking socket work off the concurrency pool),
/// and returns when every one has.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withTaskGroup(of: Void.self) { group in
        for index in 0..<count {
            group.addTask {
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    let thread = Thread {
                        body(index)
                        done.resume()
                    }
                    thread.stackSize = 1 << 20
                    thread.start()
                }
            }
        }
    }
}
