import Essentials
import FakeS3
import Foundation

// Issue 41, the first hour with a big existing bucket: `CA_BENCH_FIRST_HOUR_OBJECTS` objects (default 200,000)
// that another tool wrote with their `x-amz-meta-*` fields (creation date, pixel size, media type), stored by the
// bundled server *on disk* as a user runs it (`fake-s3 serve --root`, a child process). Each figure beside its
// reference, in this run, process start to exit:
// - `fake-s3 serve` starting on that root until it accepts a connection, against our first sync's whole time;
// - `cloudassets sync` until it prints "catalog ready" (every asset fetchable), against `rclone lsf -R`;
// - `cloudassets sync` to the end (every asset's metadata read), against `rclone lsf -R` (target <= 3x) and beside
//   `rclone lsf -R --format tpsm` (rclone's HEAD-per-object pass: modification time and MIME type).

func runFirstHourBenchmarks() async throws -> [BenchRow] {
    let count = ProcessInfo.processInfo.environment["CA_BENCH_FIRST_HOUR_OBJECTS"].flatMap { Int($0) } ?? 200_000
    let label = count >= 1_000_000 ? "\(count / 1_000_000)M" : "\(count / 1000)k"
    let scratch = try makeScratch("first-hour")
    defer { removeScratch(scratch) }
    // `CA_BENCH_FIRST_HOUR_ROOT=DIR` keeps the server's folder for the next run (writing it takes minutes).
    let kept = ProcessInfo.processInfo.environment["CA_BENCH_FIRST_HOUR_ROOT"].map { URL(fileURLWithPath: $0) }
    let root = kept ?? scratch.appendingPathComponent("server")
    let bucket = "photos"
    let marker = root.appendingPathComponent("ca-bench-objects")
    if (try? String(contentsOf: marker, encoding: .utf8)) != String(count) {
        try writeFirstHourBucket(root: root, bucket: bucket, count: count)
        try String(count).write(to: marker, atomically: true, encoding: .utf8)
    }
    // The server as a user starts it on that folder: until it accepts a connection.
    let loadStarted = Date()
    let server = try ChildServer(root: root, publicBucket: nil)
    defer { server.stop() }
    let loadSeconds = Date().timeIntervalSince(loadStarted)
    let serverRSS = server.peakRSS

    let rclone = rcloneEnvironment(endpoint: server.endpoint, accessKey: server.accessKey, secretKey: server.secretKey)
    // A kept folder holds what the last run's library wrote (its checkpoint, its journal): only the originals stay.
    _ = try run("/usr/bin/rclone", ["delete", "fake:\(bucket)", "--exclude", "originals/**"], environment: rclone)
    let (rows, syncSeconds) = try measureFirstSync(
        endpoint: server.endpoint, accessKey: server.accessKey, secretKey: server.secretKey, bucket: bucket,
        count: count, place: "\(label) objects on disk", library: scratch.appendingPathComponent("library"))
    return rows + [
        BenchRow(
            name: "first hour: fake-s3 serve of \(label) objects on disk, until it accepts",
            value: loadSeconds, unit: "s", reference: "our first sync", referenceValue: syncSeconds,
            ratio: syncSeconds / loadSeconds, target: "<= the sync (\(serverRSS >> 20) MiB)",
            met: loadSeconds <= syncSeconds)
    ]
}

/// The same rows on an in-process fake server holding the objects in memory (`CA_BENCH_ONLY="first hour"` runs
/// both; the server shares this process, the CLI and rclone are processes of their own).
func runFirstHourMemoryBenchmarks() async throws -> [BenchRow] {
    let count = ProcessInfo.processInfo.environment["CA_BENCH_FIRST_HOUR_OBJECTS"].flatMap { Int($0) } ?? 200_000
    let label = count >= 1_000_000 ? "\(count / 1_000_000)M" : "\(count / 1000)k"
    let scratch = try makeScratch("first-hour-memory")
    defer { removeScratch(scratch) }
    let server = try FakeS3Server(
        configuration: FakeS3Configuration(accessKeyID: "bench", secretAccessKey: "bench-secret"))
    try await server.start()
    do {
        try fillFirstHourBucket(server, bucket: "photos", count: count)
        let (rows, _) = try measureFirstSync(
            endpoint: server.endpoint.absoluteString, accessKey: "bench", secretKey: "bench-secret", bucket: "photos",
            count: count, place: "\(label) objects in memory", library: scratch.appendingPathComponent("library"))
        try await server.stop()
        return rows
    } catch {
        try? await server.stop()
        throw error
    }
}

/// `rclone lsf -R`, `rclone lsf -R --format tpsm`, then `cloudassets sync` on a new library at `library`, each a
/// process of its own: the rows "until catalog ready", "metadata complete" and "beside tpsm", and our sync's time.
private func measureFirstSync(
    endpoint: String, accessKey: String, secretKey: String, bucket: String, count: Int, place: String,
    library: URL
) throws -> (rows: [BenchRow], syncSeconds: Double) {
    let rclone = rcloneEnvironment(endpoint: endpoint, accessKey: accessKey, secretKey: secretKey)
    var started = Date()
    let listed = try run(
        "/usr/bin/rclone", ["lsf", "-R", "--files-only", "fake:\(bucket)/originals"], environment: rclone)
    let rcloneSeconds = Date().timeIntervalSince(started)
    guard listed.status == 0 else { throw BenchError("rclone lsf exited \(listed.status)") }
    let rcloneCount = listed.output.split(separator: "\n").count
    started = Date()
    let detailed = try run(
        "/usr/bin/rclone", ["lsf", "-R", "--files-only", "--format", "tpsm", "fake:\(bucket)/originals"],
        environment: rclone)
    let detailedSeconds = Date().timeIntervalSince(started)
    guard detailed.status == 0 else { throw BenchError("rclone lsf --format tpsm exited \(detailed.status)") }

    // Our first sync, as a user runs it: the CLI, process start to exit.
    var environment = ProcessInfo.processInfo.environment
    environment["AWS_ACCESS_KEY_ID"] = accessKey
    environment["AWS_SECRET_ACCESS_KEY"] = secretKey
    let cli = productsDirectory.appendingPathComponent("cloudassets").path
    let sync = try runTimingLines(
        cli, ["sync", "--store", library.path, "--endpoint", endpoint, "--bucket", bucket, "--no-thumbnails"],
        environment: environment)
    guard sync.status == 0 else { throw BenchError("cloudassets sync exited \(sync.status)") }
    guard let ready = sync.lines.first(where: { $0.line.hasPrefix("catalog ready: \(count) assets") })?.seconds
    else { throw BenchError("cloudassets sync printed no \"catalog ready\" line") }
    // When the CLI says every asset's metadata is in the catalog (the sync then writes a checkpoint for other
    // libraries, which changes none: the row after this one reports the sync to its exit).
    guard
        let completed = sync.lines.first(where: {
            $0.line.hasPrefix("metadata complete: \(count) of \(count) assets")
        })?.seconds
    else { throw BenchError("cloudassets sync printed no \"metadata complete\" line") }
    let synced = sync.lines.contains {
        $0.line.contains("\(count) new") && $0.line.contains("\(count) read beyond the listing")
    }
    let status = try run(cli, ["status", "--json", "--store", library.path])
    let complete = synced && status.output.contains("\"metadataPending\":0")
    let rows = [
        BenchRow(
            name: "first hour: cloudassets sync of \(place), until catalog ready",
            value: ready, unit: "s", reference: "rclone lsf -R", referenceValue: rcloneSeconds,
            ratio: rcloneSeconds / ready, target: "<= 1.5x rclone",
            met: rcloneCount == count && ready <= 1.5 * rcloneSeconds),
        BenchRow(
            name: "first hour: cloudassets sync of \(place), metadata complete",
            value: completed, unit: "s", reference: "rclone lsf -R", referenceValue: rcloneSeconds,
            ratio: rcloneSeconds / completed, target: "<= 3x rclone",
            met: complete && completed <= 3 * rcloneSeconds),
        BenchRow(
            name: "first hour: the same sync (\(place)), metadata complete, beside rclone lsf -R --format tpsm",
            value: completed, unit: "s", reference: "rclone lsf tpsm", referenceValue: detailedSeconds,
            ratio: detailedSeconds / completed, target: "report", met: complete),
        BenchRow(
            name: "first hour: the same sync (\(place)) to its exit, a checkpoint written for other libraries",
            value: sync.seconds, unit: "s", reference: "rclone lsf -R", referenceValue: rcloneSeconds,
            ratio: rcloneSeconds / sync.seconds, target: "report", met: complete),
    ]
    return (rows, sync.seconds)
}

/// Runs a command to completion, noting when each line of its standard output arrived (seconds from the start).
func runTimingLines(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (
    status: Int32, seconds: Double, lines: [(seconds: Double, line: String)]
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = environment
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    let started = Date()
    try process.run()
    var lines: [(seconds: Double, line: String)] = []
    var pending = Data()
    while true {
        let chunk = pipe.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        let now = Date().timeIntervalSince(started)
        pending.append(chunk)
        while let newline = pending.firstIndex(of: 0x0A) {
            lines.append((now, String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)))
            pending.removeSubrange(pending.startIndex...newline)
        }
    }
    process.waitUntilExit()
    return (process.terminationStatus, Date().timeIntervalSince(started), lines)
}

/// Writes `count` objects with their `x-amz-meta-*` fields into a new bucket under `root`, through the server's
/// own storage (as any client's PUTs would leave it).
private func writeFirstHourBucket(root: URL, bucket: String, count: Int) throws {
    try? FileManager.default.removeItem(at: root)
    let writer = try FakeS3Server(
        configuration: FakeS3Configuration(
            accessKeyID: "bench", secretAccessKey: "bench-secret", storage: .disk(root: root)))
    let setupStarted = Date()
    try fillFirstHourBucket(writer, bucket: bucket, count: count)
    FileHandle.standardError.write(
        Data("ca-bench: \(count) objects written in \(Int(Date().timeIntervalSince(setupStarted))) s\n".utf8))
}

/// Creates `bucket` in `server` and puts `count` objects with their `x-amz-meta-*` fields into it, straight into
/// its storage (as any client's PUTs would leave it), in parallel (on disk the time goes to the file system).
private func fillFirstHourBucket(_ writer: FakeS3Server, bucket: String, count: Int) throws {
    try writer.createBucket(bucket)
    let base = Date(timeIntervalSince1970: 1_500_000_000)
    let payload = Data([0xFF])
    let failures = LockedBox(0)
    DispatchQueue.concurrentPerform(iterations: 16) { worker in
        let formatter = ISO8601DateFormatter()
        for i in stride(from: worker, to: count, by: 16) {
            let taken = base.addingTimeInterval(Double((i * 7919) % count) * 60)
            do {
                try writer.putObject(
                    bucket: bucket, key: String(format: "originals/%04d/IMG_%07d.jpg", i / 1000, i), data: payload,
                    metadata: [
                        "creation-date": formatter.string(from: taken), "pixel-width": "4032",
                        "pixel-height": "3024", "media-type": "image",
                    ])
            } catch {
                failures.withLock { $0 += 1 }
            }
        }
    }
    guard failures.withLock({ $0 }) == 0 else { throw BenchError("could not write the bucket") }
}

// Issue 41, thumbnails for a whole bucket: `CA_BENCH_FIRST_HOUR_PHOTOS` (default 200) 12 MP camera JPEGs another
// tool uploaded (no `x-amz-meta-*`; 25 distinct images, an EXIF thumbnail in each, as cameras write them), on the
// bundled server on disk. `cloudassets sync` on a new library (every asset's thumbnail made from the one ranged
// read of its head: the embedded thumbnail) beside what a user would otherwise run: `rclone copy --transfers 16`
// of the originals, then `vipsthumbnail -s 256` over them in two processes. Thumbnails per second, and bytes
// fetched per thumbnail (ours from the server's request log).
func runFirstHourThumbnailBenchmarks() async throws -> [BenchRow] {
    let count = ProcessInfo.processInfo.environment["CA_BENCH_FIRST_HOUR_PHOTOS"].flatMap { Int($0) } ?? 200
    let scratch = try makeScratch("first-hour-photos")
    defer { removeScratch(scratch) }
    let root = scratch.appendingPathComponent("server")
    let bucket = "photos"
    do {
        let writer = try FakeS3Server(
            configuration: FakeS3Configuration(
                accessKeyID: "bench", secretAccessKey: "bench-secret", storage: .disk(root: root)))
        try writer.createBucket(bucket)
        let samples = scratch.appendingPathComponent("samples")
        try FileManager.default.createDirectory(at: samples, withIntermediateDirectories: true)
        let shapes = [(4000, 3000), (3000, 4000), (4032, 3024)]
        var distinct: [Data] = []
        for i in 0..<25 {
            let url = samples.appendingPathComponent("s\(i).jpg")
            let (w, h) = shapes[i % shapes.count]
            try writeSampleJPEG(
                url, width: w, height: h, orientation: 1, seed: UInt64(400 + i), embeddedThumbnail: true)
            distinct.append(try Data(contentsOf: url))
        }
        for i in 0..<count {
            try writer.putObject(
                bucket: bucket, key: String(format: "originals/DCIM/IMG_%04d.jpg", i), data: distinct[i % 25])
        }
    }
    let server = try ChildServer(root: root, publicBucket: nil, faults: true)
    defer { server.stop() }
    let rclone = rcloneEnvironment(endpoint: server.endpoint, accessKey: server.accessKey, secretKey: server.secretKey)
    let copied = scratch.appendingPathComponent("copied")
    settleFileSystem()
    var started = Date()
    let copy = try run(
        "/usr/bin/rclone", ["copy", "fake:\(bucket)/originals", copied.path, "--transfers", "16"], environment: rclone)
    guard copy.status == 0 else { throw BenchError("rclone copy exited \(copy.status)") }
    let files =
        (FileManager.default.enumerator(atPath: copied.path)?.compactMap { $0 as? String } ?? [])
        .filter { $0.hasSuffix(".jpg") }.map { copied.appendingPathComponent($0).path }
    guard files.count == count else { throw BenchError("rclone copied \(files.count) of \(count)") }
    let thumbnails = scratch.appendingPathComponent("vips")
    try FileManager.default.createDirectory(at: thumbnails, withIntermediateDirectories: true)
    let half = files.count / 2
    _ = try spawnTogether([
        ("/usr/bin/vipsthumbnail", Array(files[..<half]) + ["-s", "256", "-o", thumbnails.path + "/%s.jpg"]),
        ("/usr/bin/vipsthumbnail", Array(files[half...]) + ["-s", "256", "-o", thumbnails.path + "/%s.jpg"]),
    ])
    let theirSeconds = Date().timeIntervalSince(started)
    let theirBytes = files.reduce(0) { sum, path in
        sum + (((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0)
    }

    var environment = ProcessInfo.processInfo.environment
    environment["AWS_ACCESS_KEY_ID"] = server.accessKey
    environment["AWS_SECRET_ACCESS_KEY"] = server.secretKey
    let cli = productsDirectory.appendingPathComponent("cloudassets").path
    let store = scratch.appendingPathComponent("library").path
    try server.admin("DELETE", "log")
    settleFileSystem()
    started = Date()
    let sync = try run(
        cli, ["sync", "-q", "--store", store, "--endpoint", server.endpoint, "--bucket", bucket],
        environment: environment)
    let ourSeconds = Date().timeIntervalSince(started)
    guard sync.status == 0 else { throw BenchError("cloudassets sync exited \(sync.status)") }
    let status = try run(cli, ["status", "--json", "--store", store], environment: environment)
    let made = status.output.contains("\"thumbnail\":\(count)")
    let log = try curl(["-sf", "\(server.endpoint)/_fake-s3/log"])
    struct Entry: Decodable {
        var key: String?
        var bytesSent: Int
    }
    let entries = try JSONDecoder().decode([Entry].self, from: Data(log.utf8))
    let ourBytes = entries.filter { $0.key?.hasPrefix("originals/") == true }.reduce(0) { $0 + $1.bytesSent }
    let ourRate = Double(count) / ourSeconds
    let theirRate = Double(count) / theirSeconds
    return [
        BenchRow(
            name: "first hour: thumbnails of \(count) camera photos (12 MP), cloudassets sync", value: ourRate,
            unit: "thumb/s", reference: "rclone copy + vipsthumbnail", referenceValue: theirRate,
            ratio: ourRate / theirRate, target: ">= 1x", met: made && ourRate >= theirRate),
        BenchRow(
            name: "first hour: bytes fetched per thumbnail (\(count) camera photos)",
            value: Double(ourBytes) / Double(count) / 1024, unit: "KiB", reference: "rclone copy (whole files)",
            referenceValue: Double(theirBytes) / Double(count) / 1024,
            ratio: Double(theirBytes) / Double(max(1, ourBytes)), target: "report", met: made),
    ]
}
