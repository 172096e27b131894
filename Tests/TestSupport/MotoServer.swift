import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `moto_server` on a free port, stopped with the test.
// @unchecked: `Process` is not Sendable; it is set up in `init` and afterwards only queried and signalled.
public final class MotoServer: @unchecked Sendable {
    let process = Process()
    public let port: Int
    public var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }

    public init() throws {
        guard let free = LoopbackSocket.freePort() else { throw MotoError("no free port between 21000 and 29000") }
        port = free
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Polls until the server answers (moto takes a few seconds to import), for at most 60 s.
    public func waitUntilReady() throws {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            guard process.isRunning else { throw MotoError("moto_server exited with \(process.terminationStatus)") }
            if LoopbackSocket.canConnect(port: port) { return }
            usleep(100_000)  // polling a real condition (the listener), bounded by the deadline
        }
        throw MotoError("moto_server did not start listening within 60 s")
    }

    public func stop() {
        if process.isRunning {
            // SIGKILL: a child started from a dispatch thread can inherit a signal mask that blocks SIGTERM.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

public struct MotoError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
