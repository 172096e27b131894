import Foundation

// Issue 15 (b): import a folder of 2,000 files of 16 KiB with the command a user runs — `cloudassets add FOLDER`
// (the import, then the uploads until every asset is `uploaded`) — against `rclone copy --transfers 16` of the
// same folder to the same `fake-s3 serve` child server, alternating, each round into a fresh bucket.

private let importFileCount = 2_000
private let importFileSize = 16 << 10

func runImportBenchmarks() async throws -> [BenchRow] {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/rclone") else {
        throw BenchError("rclone is not installed (make deps installs it)")
    }
    let scratch = try makeScratch("import")
    defer { removeScratch(scratch) }
    let server = try ChildServer(root: scratch.appendingPathComponent("root"), publicBucket: nil)
    defer { server.stop() }
    let folder = scratch.appendingPathComponent("photos")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    var state: UInt64 = 0x1234_5678
    for index in 0..<importFileCount {
        var bytes = [UInt8](repeating: 0, count: importFileSize)
        for i in stride(from: 0, to: bytes.count, by: 8) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            withUnsafeBytes(of: state) { word in for j in 0..<8 { bytes[i + j] = word[j] } }
        }
        let url = folder.appendingPathComponent(String(format: "IMG_%05d.JPG", index))
        try Data(bytes).write(to: url)
    }
    let rclone = rcloneEnvironment(endpoint: server.endpoint, accessKey: server.accessKey, secretKey: server.secretKey)
    let ourEnvironment = ProcessInfo.processInfo.environment.merging([
        "AWS_ACCESS_KEY_ID": server.accessKey, "AWS_SECRET_ACCESS_KEY": server.secretKey,
    ]) { _, new in new }
    let cli = productsDirectory.appendingPathComponent("cloudassets").path

    var ours: [Double] = []
    var theirs: [Double] = []
    for round in 0..<3 {
        let rcloneBucket = "rclone\(round)"
        try server.createBucket(rcloneBucket)
        var started = Date()
        let copied = try run(
            "/usr/bin/rclone", ["copy", folder.path, "fake:\(rcloneBucket)/originals", "--transfers", "16"],
            environment: rclone)
        guard copied.status == 0 else { throw BenchError("rclone copy exited \(copied.status)") }
        theirs.append(Date().timeIntervalSince(started))

        let bucket = "ours\(round)"
        try server.createBucket(bucket)
        let store = scratch.appendingPathComponent("library\(round)")
        started = Date()
        let added = try run(
            cli,
            ["add", "--store", store.path, "--endpoint", server.endpoint, "--bucket", bucket, "--quiet", folder.path],
            environment: ourEnvironment)
        guard added.status == 0 else { throw BenchError("cloudassets add exited \(added.status)") }
        ours.append(Date().timeIntervalSince(started))
        // Every asset is in the bucket: the command waited for the uploads.
        let listed = try run(
            cli, ["ls", "--store", store.path, "--uploaded", "--quiet"], environment: ourEnvironment)
        let uploaded = listed.output.split(separator: "\n").count
        guard uploaded == importFileCount else {
            throw BenchError("\(uploaded) of \(importFileCount) assets uploaded after `cloudassets add`")
        }
    }
    let ourRate = Double(importFileCount) / (ours.min() ?? .infinity)
    let rcloneRate = Double(importFileCount) / (theirs.min() ?? .infinity)
    let download = try measureLibraryDownloads(
        server: server, bucket: "ours0", scratch: scratch, rclone: rclone, environment: ourEnvironment)
    return [
        BenchRow(
            name: "import 2,000 × 16 KiB: cloudassets add (import + uploads)", value: ourRate, unit: "obj/s",
            reference: "rclone copy --transfers 16", referenceValue: rcloneRate, ratio: ourRate / rcloneRate,
            target: ">= 1x", met: ourRate >= rcloneRate)
    ] + download
}

/// Issue 16: downloads through the library, as a user runs them — `cloudassets get --network --prefix ""` of the
/// 2,000 originals into a library synced from the bucket (process start to exit: open, download, commit) — against
/// `rclone copy --transfers 16` of the same objects from the same server into a fresh folder. Alternating three
/// times, each round into a new library (synced before the timing) and a new folder: nothing is deleted before
/// the timings, as deleting thousands of files makes this VM's ext4 create the next ones up to ten times slower
/// (see docs/benchmarks.md). Each keeps its best.
private func measureLibraryDownloads(
    server: ChildServer, bucket: String, scratch: URL, rclone: [String: String], environment: [String: String]
) throws -> [BenchRow] {
    let cli = productsDirectory.appendingPathComponent("cloudassets").path
    var ours: [Double] = []
    var theirs: [Double] = []
    var copiedOut: [Double] = []
    for round in 0..<3 {
        let common = [
            "--store", scratch.appendingPathComponent("downloads\(round)").path, "--endpoint", server.endpoint,
            "--bucket", bucket, "--quiet",
        ]
        let synced = try run(cli, ["sync"] + common, environment: environment)
        guard synced.status == 0 else { throw BenchError("cloudassets sync exited \(synced.status)") }

        settleFileSystem()
        var started = Date()
        let copied = try run(
            "/usr/bin/rclone",
            [
                "copy", "fake:\(bucket)/originals", scratch.appendingPathComponent("copy\(round)").path, "--transfers",
                "16",
            ],
            environment: rclone)
        guard copied.status == 0 else { throw BenchError("rclone copy exited \(copied.status)") }
        theirs.append(Date().timeIntervalSince(started))

        settleFileSystem()
        started = Date()
        // Every original, as rclone copies every object under the prefix.
        let got = try run(cli, ["get", "--network", "--prefix", ""] + common, environment: environment)
        guard got.status == 0 else { throw BenchError("cloudassets get exited \(got.status)") }
        ours.append(Date().timeIntervalSince(started))
        let full = try run(cli, ["ls", "--state", "full", "--no-header"] + common, environment: environment)
        let count = full.output.split(separator: "\n").count
        guard count == importFileCount else {
            throw BenchError("\(count) of \(importFileCount) assets full after `cloudassets get --network`")
        }

        // Issue 41: the same originals copied out to a folder, as rclone copies them (a new library, so that
        // every one is downloaded: the one above holds them all now).
        let other = [
            "--store", scratch.appendingPathComponent("copyout\(round)").path, "--endpoint", server.endpoint,
            "--bucket", bucket, "--quiet",
        ]
        guard try run(cli, ["sync"] + other, environment: environment).status == 0 else {
            throw BenchError("cloudassets sync exited non-zero")
        }
        let folder = scratch.appendingPathComponent("ours\(round)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        settleFileSystem()
        started = Date()
        let out = try run(
            cli, ["get", "--network", "--prefix", "", "--output-folder", folder.path] + other, environment: environment)
        guard out.status == 0 else { throw BenchError("cloudassets get --output-folder exited \(out.status)") }
        copiedOut.append(Date().timeIntervalSince(started))
    }
    let copyRate = Double(importFileCount) / (copiedOut.min() ?? .infinity)
    let ourRate = Double(importFileCount) / (ours.min() ?? .infinity)
    let rcloneRate = Double(importFileCount) / (theirs.min() ?? .infinity)
    return [
        BenchRow(
            name: "get 2,000 × 16 KiB: cloudassets get --network (start to exit)", value: ourRate, unit: "obj/s",
            reference: "rclone copy --transfers 16", referenceValue: rcloneRate, ratio: ourRate / rcloneRate,
            target: ">= 1.5x", met: ourRate >= 1.5 * rcloneRate),
        BenchRow(
            name: "get 2,000 × 16 KiB: cloudassets get --network --output-folder (start to exit)", value: copyRate,
            unit: "obj/s", reference: "rclone copy --transfers 16", referenceValue: rcloneRate,
            ratio: copyRate / rcloneRate, target: ">= 1x", met: copyRate >= rcloneRate),
    ]
}
