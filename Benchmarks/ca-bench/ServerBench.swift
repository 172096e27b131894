import Foundation

/// The fake server against references measured in the same run (issue 2, §5):
/// - single-stream GET of a 1 GiB object with `curl -o /dev/null`, against the same file from a plain static
///   file server (Python's `http.server`);
/// - 16 KiB GETs per second with 16 parallel clients (`curl --parallel --parallel-max 16`);
/// - the server's peak RSS while serving the 1 GiB object.
func runServerBenchmarks() async throws -> [BenchRow] {
    let scratch = try makeScratch("server")
    defer { removeScratch(scratch) }
    let server = try ChildServer(root: scratch.appendingPathComponent("root"), publicBucket: "bench")
    defer { server.stop() }
    try server.createBucket("bench")

    let files = scratch.appendingPathComponent("files")
    try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
    let big = files.appendingPathComponent("big.bin")
    try writeTestFile(big, size: 1 << 30)
    try server.upload(big, bucket: "bench", key: "big.bin")
    let rssBefore = server.peakRSS

    func speed(_ url: String) throws -> Double {
        var best = 0.0
        for _ in 0..<2 {
            let out = try curl(["-s", "-o", "/dev/null", "-w", "%{speed_download}", url])
            best = max(best, Double(out) ?? 0)
        }
        return best
    }
    let fakeSpeed = try speed("\(server.endpoint)/bench/big.bin")
    let serverRSS = server.peakRSS

    // The reference: a plain static file server on the same file.
    let python = Process()
    python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    let staticPort = 20_000 + Int(getpid() % 20_000)
    python.arguments = [
        "python3", "-m", "http.server", String(staticPort), "--bind", "127.0.0.1", "--directory", files.path,
    ]
    python.standardOutput = FileHandle.nullDevice
    python.standardError = FileHandle.nullDevice
    try python.run()
    defer {
        // SIGKILL: children spawned from a dispatch thread may inherit a mask that blocks SIGTERM.
        kill(python.processIdentifier, SIGKILL)
        python.waitUntilExit()
    }
    var staticSpeed = 0.0
    for _ in 0..<50 where staticSpeed == 0 {
        // Wait for the listener: retry the connection (curl fails fast while nothing listens).
        if let s = try? speed("http://127.0.0.1:\(staticPort)/big.bin") {
            staticSpeed = s
        } else {
            usleep(100_000)
        }
    }

    // Small objects: 2,000 × 16 KiB, fetched by 16 parallel clients.
    let small = files.appendingPathComponent("small.bin")
    try writeTestFile(small, size: 16 << 10, seed: 7)
    let config = scratch.appendingPathComponent("put.cfg")
    var putLines = ""
    var getLines = ""
    for i in 0..<2_000 {
        let url = "\(server.endpoint)/bench/small/\(i).bin"
        putLines += "upload-file = \"\(small.path)\"\nurl = \"\(url)\"\n"
        getLines += "url = \"\(url)\"\noutput = \"/dev/null\"\n"
    }
    try putLines.write(to: config, atomically: true, encoding: .utf8)
    try curl(["-sf", "--parallel", "--parallel-max", "16", "-K", config.path] + server.signing)
    let getConfig = scratch.appendingPathComponent("get.cfg")
    try getLines.write(to: getConfig, atomically: true, encoding: .utf8)
    let t0 = now()
    try curl(["-sf", "--parallel", "--parallel-max", "16", "-K", getConfig.path])
    let getsPerSecond = 2_000 / (now() - t0)

    let gb = 1e9
    return [
        BenchRow(
            name: "fake server: 1 GiB GET, 1 stream (curl)", value: fakeSpeed / gb, unit: "GB/s",
            reference: "python http.server", referenceValue: staticSpeed / gb,
            ratio: staticSpeed > 0 ? fakeSpeed / staticSpeed : nil, target: ">= 1 GB/s", met: fakeSpeed >= gb),
        BenchRow(
            name: "fake server: 16 KiB GETs, 16 clients", value: getsPerSecond, unit: "GET/s",
            reference: "-", referenceValue: nil, ratio: nil, target: ">= 3000/s", met: getsPerSecond >= 3_000),
        BenchRow(
            name: "fake server: peak RSS serving 1 GiB", value: Double(serverRSS) / 1_048_576, unit: "MiB",
            reference: "RSS before GETs", referenceValue: Double(rssBefore) / 1_048_576, ratio: nil,
            target: "< 100 MiB", met: serverRSS < 100 << 20),
    ]
}
