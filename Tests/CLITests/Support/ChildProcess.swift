import Essentials
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a finished `cloudassets` run ended.
struct CLIResult: Sendable, CustomStringConvertible {
    /// The exit status (or the signal number when ``killedBySignal``).
    var status: Int32
    /// True when the process died of a signal instead of exiting.
    var killedBySignal: Bool
    /// True when the watchdog had to kill it.
    var timedOut: Bool
    /// Standard output's raw bytes (for binary output such as `get -o -`).
    var stdoutData: Data
    var stderrData: Data

    /// Standard output as text (decoded on each access).
    var stdout: String { OutputCollector.decode(stdoutData) }
    /// Standard error as text.
    var stderr: String { OutputCollector.decode(stderrData) }

    /// Standard error's non-empty lines.
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }

    var description: String {
        "status \(status)\(killedBySignal ? " (signal)" : "")\(timedOut ? " (timed out)" : "")\n"
            + "stdout: \(stdout)\nstderr: \(stderr)"
    }
}

/// The exit of a child process, recorded by Foundation's termination handler, and the tasks waiting for it.
private final class ExitState: Sendable {
    private struct State {
        var exit: (status: Int32, signal: Bool)?
        var waiters: [CheckedContinuation<Void, Never>] = []
        var timedOut = false
    }

    private let state = Mutex(State())

    var exit: (status: Int32, signal: Bool)? { state.withLock { $0.exit } }
    var timedOut: Bool { state.withLock { $0.timedOut } }

    func record(status: Int32, signal: Bool) {
        let waiters = state.withLock { state in
            state.exit = (status, signal)
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Marks the process as timed out unless it has already exited; true when it had not.
    func markTimedOut() -> Bool {
        state.withLock { state in
            guard state.exit == nil else { return false }
            state.timedOut = true
            return true
        }
    }

    func waitForExit() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.exit != nil { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// A running child process with its output captured. A watchdog kills it (SIGKILL) after `timeout`, so
/// every wait on it is bounded even if the command hangs.
final class ChildProcess: Sendable {
    let stdout = OutputCollector()
    let stderr = OutputCollector()
    private let process: Process
    private let state = ExitState()
    private let watchdog: Task<Void, Never>

    /// Starts `executable` with exactly `arguments` and `environment` (nothing inherited).
    init(executable: URL, arguments: [String], environment: [String: String], timeout: Duration) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        self.process = process
        let state = self.state
        let entry = OpenResources.opened("child process \(executable.lastPathComponent) \(arguments.first ?? "")")
        process.terminationHandler = { finished in
            state.record(status: finished.terminationStatus, signal: finished.terminationReason == .uncaughtSignal)
            OpenResources.closed(entry)
        }
        do {
            try process.run()
        } catch {
            OpenResources.closed(entry)
            throw error
        }
        Self.drain(out.fileHandleForReading, into: stdout)
        Self.drain(err.fileHandleForReading, into: stderr)
        // The parent's copies of the write ends must be closed, or the readers never see end-of-file.
        try? out.fileHandleForWriting.close()
        try? err.fileHandleForWriting.close()
        let pid = process.processIdentifier
        watchdog = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            if state.markTimedOut() { kill(pid, SIGKILL) }
        }
    }

    /// Reads a pipe on a dedicated thread until end-of-file, then closes the collector.
    private static func drain(_ handle: FileHandle, into collector: OutputCollector) {
        let fd = handle.fileDescriptor
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    // Copy through the pointer: `Data(buffer[0..<n])` walks the bytes one by one in a debug build.
                    collector.append(buffer.withUnsafeBytes { Data(bytes: $0.baseAddress!, count: n) })
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            try? handle.close()
            collector.close()
        }
        thread.start()
    }

    /// Whether the process has ended.
    var hasExited: Bool { state.exit != nil }

    /// The child's process id.
    var pid: Int32 { process.processIdentifier }

    /// Sends SIGINT, as Ctrl-C in a terminal would.
    func interrupt() { kill(process.processIdentifier, SIGINT) }

    /// Sends a signal (`SIGKILL` for a crash).
    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits for the process to end and for both pipes to reach end-of-file.
    func finish() async -> CLIResult {
        await state.waitForExit()
        watchdog.cancel()
        await stdout.waitForEnd()
        await stderr.waitForEnd()
        let (status, signal) = state.exit ?? (-1, false)
        return CLIResult(
            status: status, killedBySignal: signal, timedOut: state.timedOut, stdoutData: stdout.data,
            stderrData: stderr.data)
    }
}
