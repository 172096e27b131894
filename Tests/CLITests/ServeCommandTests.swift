import FakeS3
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("cloudassets serve", .heavy)
struct ServeCommandTests {
    /// The process's peak resident set in kB (VmHWM of /proc/PID/status).
    static func peakResidentKB(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try #require(Int(line.split(whereSeparator: \.isWhitespace)[1]))
    }

    /// GETs `target` from 127.0.0.1:`port` on its own thread and reads the whole answer, keeping only the status
    /// line and the number of body bytes (the answer is never held whole).
    static func countingGET(port: Int, _ target: String) async -> (status: String, bodyBytes: Int) {
        await withCheckedContinuation { continuation in
            Thread {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                defer { close(fd) }
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                var timeout = timeval(tv_sec: 60, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard connected == 0 else { return continuation.resume(returning: ("no connection", 0)) }
                let request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
                _ = request.withCString { send(fd, $0, strlen($0), 0) }
                var head = Data()
                var headDone = false
                var body = 0
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let n = read(fd, &buffer, buffer.count)
                    guard n > 0 else { break }
                    if headDone {
                        body += n
                    } else {
                        head.append(contentsOf: buffer[0..<n])
                        if let end = head.range(of: Data("\r\n\r\n".utf8)) {
                            body = head.count - end.upperBound
                            head = head[..<end.lowerBound]
                            headDone = true
                        }
                    }
                }
                let status = String(decoding: head, as: UTF8.self).split(separator: "\r\n").first.map(String.init) ?? ""
                continuation.resume(returning: (status, body))
            }.start()
        }
    }

    @Test func aLargeOriginalIsStreamedWithoutHoldingItInMemory() async throws {
        try await withFixture(assets: 1, large: 1, largeSize: 64 << 20) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let large = try #require(try await fixture.list(["--sort=-size", "--limit", "1"]).first)
            #expect(large.size == 64 << 20)
            expectSuccess(try await fixture.run("get", [large.id, "--network"], timeout: .seconds(120)))

            let serve = try fixture.start("serve", ["--port", "0"], timeout: .seconds(120))
            #expect(await serve.stdout.wait { $0.contains("token=") }, "\(serve.stderr.text)")
            let address = try #require(URL(string: serve.stdout.text.trimmingCharacters(in: .whitespacesAndNewlines)))
            let port = try #require(address.port)
            let token = try #require(address.query?.split(separator: "=").last.map(String.init))
            // Warm: a first small answer (the server's own allocations), then the peak before the large one.
            _ = await Self.countingGET(port: port, "/api/info?token=\(token)")
            let before = try Self.peakResidentKB(of: serve.pid)
            let answer = await Self.countingGET(port: port, "/api/originals/\(large.id)?token=\(token)")
            #expect(answer.status.hasPrefix("HTTP/1.1 200"), "\(answer.status)")
            #expect(answer.bodyBytes == 64 << 20)
            let after = try Self.peakResidentKB(of: serve.pid)
            // Held whole, the original alone would add 65,536 kB.
            #expect(after - before < 16 << 10, "peak RSS grew by \(after - before) kB serving 64 MiB")
            serve.interrupt()
            _ = await serve.finish()
        }
    }

    @Test func aPortInUseExitsWithTheAddressInUseStatus() async throws {
        try await withFixture(assets: 0) { fixture in
            let (fd, port) = try #require(LoopbackSocket.listen())
            defer { close(fd) }
            let result = try await fixture.run("serve", ["--port", String(port)])
            expectUserError(result, status: 17, mentioning: "in use")
        }
    }

    @Test(arguments: ["", "two words", "a/b"])
    func anActionNameThatCannotBeShownIsAUsageError(name: String) async throws {
        try await withFixture(assets: 0) { fixture in
            let result = try await fixture.run("serve", ["--port", "0", "--action", "Share", "--action", name])
            expectUserError(result, status: 2, mentioning: "identifier")
        }
    }
}
