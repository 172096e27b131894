import CFileIO
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a `credential_process` command: `posix_spawnp` of its words (no shell), the chain's environment, standard
/// input from `/dev/null`, standard output read up to a limit, the first bytes of standard error kept for the
/// error message, and a deadline after which the process is killed (`SIGKILL`) and reaped.
///
/// The command runs in a process group of its own: on a timeout, too much output or cancellation the whole group
/// is killed (a shell script's own children — a `sleep` it started — included), and the run returns only once
/// no process of the group is left (or, should one outlive `SIGKILL`, after ``groupExitWait``).
///
/// Blocking work runs on a thread of its own, never on the concurrency pool. Thread-safe (no shared state).
enum CredentialProcessRunner {
    /// How a run ended.
    struct Outcome: Sendable {
        var status: Int32
        var output: Data
        /// The first line of standard error (at most 200 characters), for the error message.
        var errorLine: String
    }

    /// Why a run did not end normally.
    enum Failure: Error, Sendable {
        case cannotStart(Int32)
        case timedOut
        case outputTooLarge
        case signalled(Int32)
        /// The task that awaited the run was cancelled: the process group was killed.
        case cancelled
    }

    /// How long a run waits, after killing a process group, for its last process to be gone.
    static let groupExitWait: TimeInterval = 5

    /// Runs `arguments` and waits for it (on a thread of its own). Cancelling the calling task kills the process
    /// group and ends the run with ``Failure/cancelled``.
    static func run(
        _ arguments: [String], environment: [String: String], timeout: TimeInterval, outputLimit: Int
    ) async -> Result<Outcome, Failure> {
        // A pipe the blocking loop polls with the command's: one byte written to it on cancellation wakes it.
        var wake: [Int32] = [-1, -1]
        guard cfileio_pipe_cloexec(&wake) == 0 else { return .failure(.cannotStart(errno)) }
        let (wakeRead, wakeWrite) = (wake[0], wake[1])
        defer {
            close(wakeRead)
            close(wakeWrite)
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(
                        returning: runBlocking(
                            arguments, environment: environment, timeout: timeout, outputLimit: outputLimit,
                            cancel: wakeRead))
                }
            }
        } onCancel: {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    private static func runBlocking(
        _ arguments: [String], environment: [String: String], timeout: TimeInterval, outputLimit: Int,
        cancel: Int32
    ) -> Result<Outcome, Failure> {
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        guard cfileio_pipe_cloexec(&outPipe) == 0 else { return .failure(.cannotStart(errno)) }
        guard cfileio_pipe_cloexec(&errPipe) == 0 else {
            close(outPipe[0])
            close(outPipe[1])
            return .failure(.cannotStart(errno))
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        // Nothing else of the app's reaches the command: every descriptor past the three is closed in the child
        // (the app's own, opened without close-on-exec, included).
        _ = cfileio_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with default signal handling and nothing blocked, whatever this thread inherited.
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        // A process group of its own (its id is the child's pid): a timeout kills everything the command started.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        close(outPipe[1])
        close(errPipe[1])
        guard spawned == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            return .failure(.cannotStart(spawned))
        }
        let deadline = Date().addingTimeInterval(timeout)
        var output = Data()
        var errors = Data()
        var failure: Failure?
        var open = [outPipe[0], errPipe[0]]
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while !open.isEmpty, failure == nil {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                failure = .timedOut
                break
            }
            var fds = (open + [cancel]).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining * 1000, 1000).rounded(.up)))
            if ready < 0, errno != EINTR { break }
            if fds.last!.revents != 0 {
                failure = .cancelled
                break
            }
            for entry in fds.dropLast() where entry.revents != 0 {
                let n = read(entry.fd, &buffer, buffer.count)
                if n <= 0 {
                    open.removeAll { $0 == entry.fd }
                    close(entry.fd)
                } else if entry.fd == outPipe[0] {
                    output.append(contentsOf: buffer[0..<n])
                    if output.count > outputLimit { failure = .outputTooLarge }
                } else if errors.count < 4096 {
                    errors.append(contentsOf: buffer[0..<min(n, 4096 - errors.count)])
                }
            }
        }
        for fd in open { close(fd) }
        var status: Int32 = 0
        if let failure {
            killGroup(pid, status: &status)
            return .failure(failure)
        }
        // Both pipes are closed; the process may still be running (a daemon that let go of them): wait for it
        // until the deadline, then kill it.
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if result < 0, errno != EINTR { return .failure(.cannotStart(errno)) }
            if deadline.timeIntervalSinceNow <= 0 {
                killGroup(pid, status: &status)
                return .failure(.timedOut)
            }
            // Wait 5 ms for the exit (no descriptor tells it here), or for a cancellation.
            var wake = pollfd(fd: cancel, events: Int16(POLLIN), revents: 0)
            if poll(&wake, 1, 5) > 0 {
                killGroup(pid, status: &status)
                return .failure(.cancelled)
            }
        }
        if status & 0x7F != 0 { return .failure(.signalled(status & 0x7F)) }
        let exitCode = (status >> 8) & 0xFF
        let firstLine = String(decoding: errors, as: UTF8.self).split(whereSeparator: \.isNewline).first ?? ""
        return .success(
            Outcome(status: exitCode, output: output, errorLine: CredentialError.oneLine(firstLine, limit: 200)))
    }

    /// Kills the process group `pid` leads (`SIGKILL`), reaps `pid`, and waits — at most ``groupExitWait`` — until
    /// no process of the group is left (the others are reaped by whoever inherited them).
    private static func killGroup(_ pid: pid_t, status: inout Int32) {
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        let deadline = Date().addingTimeInterval(groupExitWait)
        while kill(-pid, 0) == 0 || errno == EPERM, deadline.timeIntervalSinceNow > 0 {
            var nothing = pollfd()
            _ = poll(&nothing, 0, 2)
        }
    }
}
