import Essentials
import Foundation
import S3Transfer

/// The directory of this executable: the release build's products (`fake-s3` sits beside `ca-bench`).
let productsDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    .deletingLastPathComponent()

/// Runs a command to completion; returns its exit status and standard output.
@discardableResult
func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (
    status: Int32, output: String
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// `/usr/bin/curl` with the given arguments; fails when curl exits non-zero.
@discardableResult
func curl(_ arguments: [String]) throws -> String {
    let result = try run("/usr/bin/curl", arguments)
    guard result.status == 0 else {
        throw BenchError("curl \(arguments.joined(separator: " ")) exited \(result.status)")
    }
    return result.output
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A `fake-s3 serve` child process on a free port (so its memory is measured apart from this process).
final class ChildServer {
    let process = Process()
    let port: Int
    let accessKey = "bench"
    let secretKey = "bench-secret"
    var endpoint: String { "http://127.0.0.1:\(port)" }
    var endpointURL: URL { URL(string: endpoint)! }

    init(root: URL, publicBucket: String?, faults: Bool = false) throws {
        process.executableURL = productsDirectory.appendingPathComponent("fake-s3")
        var arguments = [
            "serve", "--root", root.path, "--port", "0", "--access-key", accessKey, "--secret-key", secretKey,
        ]
        if let publicBucket { arguments += ["--public", publicBucket] }
        if faults { arguments.append("--faults") }
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line names the endpoint: "fake-s3 listening on http://127.0.0.1:PORT".
        var buffer = Data()
        var found: Int?
        while found == nil {
            let chunk = pipe.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            buffer.append(chunk)
            let text = String(decoding: buffer, as: UTF8.self)
            if let range = text.range(of: "127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if text[range.upperBound...].dropFirst(digits.count).first != nil { found = Int(digits) }
            }
        }
        guard let found else { throw BenchError("fake-s3 did not report its port") }
        port = found
    }

    /// curl arguments that sign a request for this server.
    var signing: [String] {
        [
            "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "\(accessKey):\(secretKey)", "-H",
            "x-amz-content-sha256: UNSIGNED-PAYLOAD",
        ]
    }

    func createBucket(_ name: String) throws {
        try curl(["-sf", "-X", "PUT"] + signing + ["\(endpoint)/\(name)"])
    }

    func upload(_ file: URL, bucket: String, key: String) throws {
        try curl(["-sf", "-T", file.path] + signing + ["\(endpoint)/\(bucket)/\(key)"])
    }

    /// Calls the admin endpoint (`/_fake-s3/PATH`, answered when started with `faults: true`).
    func admin(_ method: String, _ path: String, json: String? = nil) throws {
        var arguments = ["-sf", "-o", "/dev/null", "-X", method, "\(endpoint)/_fake-s3/\(path)"]
        if let json { arguments += ["-H", "Content-Type: application/json", "--data", json] }
        try curl(arguments)
    }

    /// Peak resident memory of the server process so far.
    var peakRSS: Int64 { peakRSSOf(pid: process.processIdentifier) }

    func stop() {
        // SIGKILL: children spawned from a dispatch thread may inherit a mask that blocks SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// VmHWM of a process, in bytes.
func peakRSSOf(pid: Int32) -> Int64 {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return (line.split(separator: " ").dropFirst().first.flatMap { Int64($0) } ?? 0) * 1024
    }
    return 0
}

/// `count` bytes of a fixed xorshift stream: not compressible, the same for a given seed.
func pseudoRandomData(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
    var data = Data(count: count)
    var state = seed
    data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
        let words = raw.bindMemory(to: UInt64.self)
        for i in 0..<words.count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            words[i] = state
        }
    }
    return data
}

/// Writes `size` bytes of ``pseudoRandomData(_:seed:)`` in 8 MiB pieces (different seeds per piece).
func writeTestFile(_ url: URL, size: Int64, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) throws {
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
        throw BenchError("cannot create \(url.path)")
    }
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    var remaining = size
    var piece: UInt64 = 0
    while remaining > 0 {
        let n = Int(min(remaining, 8 << 20))
        try handle.write(contentsOf: pseudoRandomData(n, seed: seed &+ piece))
        piece += 1
        remaining -= Int64(n)
    }
}

/// Whether scratch files stay behind (`CA_BENCH_KEEP_FILES=1`): on ext4 without a journal, creating files is
/// several times slower for minutes after many were deleted (the allocator skips recently deleted inodes), so
/// back-to-back runs for an A/B comparison keep their files and the caller removes them all at the end.
let keepBenchFiles = ProcessInfo.processInfo.environment["CA_BENCH_KEEP_FILES"] == "1"

/// Writes every dirty page of the system to disk (`sync(2)`), before a timed run and outside its timing: a run
/// then never pays for writing back what an earlier run left in the page cache (curl leaves its files to the
/// kernel's writeback; a downloader that syncs its files with `syncfs` would otherwise flush curl's too).
func settleFileSystem() {
    sync()
}

/// Scratch folders a section is done with, removed together once every row is measured.
private let finishedScratch = LockedBox<[URL]>([])

/// Marks a scratch file or folder for removal at the end of the run (``removeFinishedScratch()``): a section's
/// deletions would otherwise slow the file creation of the sections after it (see ``keepBenchFiles``), and rows
/// whose both sides create thousands of files (imports, small downloads, `get` beside rclone) would swing with
/// the order of the sections.
func removeScratch(_ url: URL) {
    finishedScratch.withLock { $0.append(url) }
}

/// Removes every scratch folder the sections are done with (unless ``keepBenchFiles``).
func removeFinishedScratch() {
    let urls = finishedScratch.withLock { urls in
        defer { urls = [] }
        return urls
    }
    if !keepBenchFiles { for url in urls { try? FileManager.default.removeItem(at: url) } }
}

/// A scratch folder under the system temporary directory, for ``removeScratch(_:)`` once done.
func makeScratch(_ name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ca-bench-\(name)-\(getpid())")
    try? FileManager.default.removeItem(at: url)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Wall seconds of `body`.
func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// One large object fetched by `curl -o` (over `url`, presigned) and by `downloader`, each file removed after its
/// run and every run started from a synced file system. One unmeasured download each first (in a VM, the first
/// writes into never-used guest memory run several times slower, whoever makes them) plus `extraWarmups` of ours
/// (for a profiler); then the two alternate three times and each keeps its median (a best-of would pick the
/// luckiest run of the noisier side: curl's page-cache writes swing more than the downloader's fsync-bound ones).
/// - Returns: Median seconds of each, and the downloader's last result.
func alternateLargeDownloads(
    url: URL, downloader: Downloader, request: DownloadRequest, scratch: URL, extraWarmups: Int = 0
) async throws -> (ours: Double, curl: Double, result: DownloadResult?) {
    let curlFile = scratch.appendingPathComponent("curl.bin")
    func curlDownload() async throws -> Double {
        defer { try? FileManager.default.removeItem(at: curlFile) }
        settleFileSystem()
        return try await seconds { _ = try curl(["-sf", "-o", curlFile.path, url.absoluteString]) }
    }
    var result: DownloadResult?
    func ourDownload() async throws -> Double {
        defer { try? FileManager.default.removeItem(at: request.destination) }
        settleFileSystem()
        return try await seconds { result = try await downloader.download(request).result() }
    }
    _ = try await curlDownload()
    for _ in 0..<(1 + extraWarmups) { _ = try await ourDownload() }
    var curlTimes: [Double] = []
    var ourTimes: [Double] = []
    for _ in 0..<3 {
        curlTimes.append(try await curlDownload())
        ourTimes.append(try await ourDownload())
    }
    return (ourTimes.sorted()[1], curlTimes.sorted()[1], result)
}

/// Resets VmHWM to the current RSS (Linux: `echo 5 > /proc/self/clear_refs`).
func resetPeakRSS() {
    let fd = open("/proc/self/clear_refs", O_WRONLY)
    if fd >= 0 {
        _ = write(fd, "5", 1)
        close(fd)
    }
}

/// User + system CPU time of this process (or of its waited-for children) so far.
func processCPUSeconds(_ who: __rusage_who = RUSAGE_SELF) -> Double {
    var usage = rusage()
    getrusage(who.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// User + system CPU time of another process so far (`/proc/PID/stat`, in clock ticks), 0 when unreadable.
func childCPUSeconds(_ pid: Int32) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return 0 }
    // Fields after the command name: state is field 3, utime 14, stime 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Runs a command under `/usr/bin/time -f %M`: its wall time and the process's peak RSS; fails when it exits
/// non-zero.
func timedRun(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (
    seconds: Double, peakRSS: Int64
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
    process.arguments = ["-f", "%M", executable] + arguments
    if let environment { process.environment = environment }
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    let started = Date()
    try process.run()
    let output = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let seconds = Date().timeIntervalSince(started)
    guard process.terminationStatus == 0 else {
        throw BenchError("\(URL(fileURLWithPath: executable).lastPathComponent) exited \(process.terminationStatus)")
    }
    let kilobytes = String(decoding: output, as: UTF8.self).split(separator: "\n").last.flatMap { Int64($0) } ?? 0
    return (seconds, kilobytes * 1024)
}

/// This process's environment for rclone against an S3 endpoint as remote `fake:` (rclone v1.60 refuses an
/// `AWS_CA_BUNDLE` on a plain-HTTP endpoint: left out for it).
func rcloneEnvironment(endpoint: String, accessKey: String, secretKey: String) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["AWS_CA_BUNDLE"] = nil
    return environment.merging([
        "RCLONE_CONFIG_FAKE_TYPE": "s3", "RCLONE_CONFIG_FAKE_PROVIDER": "Other",
        "RCLONE_CONFIG_FAKE_ACCESS_KEY_ID": accessKey, "RCLONE_CONFIG_FAKE_SECRET_ACCESS_KEY": secretKey,
        "RCLONE_CONFIG_FAKE_ENDPOINT": endpoint, "RCLONE_CONFIG_FAKE_REGION": "us-east-1",
    ]) { _, new in new }
}
