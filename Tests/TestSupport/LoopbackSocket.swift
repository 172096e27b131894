import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// TCP sockets on 127.0.0.1 for tests: listening, probing, finding a free port.
public enum LoopbackSocket {
    /// A socket bound to 127.0.0.1:`port` (0: one the kernel picks) and listening, with the port it got; nil when
    /// the port cannot be bound.
    public static func listen(port: Int = 0, backlog: Int32 = 64) -> (fd: Int32, port: Int)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.address(port: port)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && Glibc.listen(fd, backlog) == 0
                    && getsockname(fd, pointer, &length) == 0
            }
        }
        guard ready else {
            close(fd)
            return nil
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A port that refuses connections for as long as the returned socket is open: bound to 127.0.0.1 (the kernel
    /// picks the port) but not listening, so a connection is refused at once and no other socket of any test can
    /// take the port meanwhile (as one could a stopped server's). Close `fd` when done.
    public static func refusingPort() -> (fd: Int32, port: Int)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = Self.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            return nil
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted.
    public static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = Self.address(port: port)
        return withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// A port in `range` that nothing is bound to right now (checked by binding it), or nil after 200 tries.
    /// The default range lies below the kernel's ephemeral ports (32768–60999), so no `bind(port: 0)` elsewhere
    /// is handed it meanwhile.
    public static func freePort(in range: Range<Int> = 21_000..<29_000) -> Int? {
        for _ in 0..<200 {
            let candidate = Int.random(in: range)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            var address = Self.address(port: candidate)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if bound == 0 { return candidate }
        }
        return nil
    }

    private static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
