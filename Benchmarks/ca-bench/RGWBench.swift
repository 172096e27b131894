import AWSSigV4
import Foundation
import S3Transfer

// The downloader against Ceph's RADOS Gateway (a throwaway one-node cluster from scripts/ceph-rgw.sh), beside curl
// against the same gateway in the same run. Skipped (with the reason on standard error) when the cluster cannot
// start: Ceph not installed and not root, or a failed boot.

/// A cluster booted by `scripts/ceph-rgw.sh start` for the bench, stopped by ``stop()`` (and by the script's
/// watchdog should the bench die first).
private final class RGWCluster {
    let folder: URL
    let script: String
    let endpoint: URL
    let credentials: AWSCredentials
    /// Wall time of `start`, seconds.
    let bootSeconds: Double
    /// Resident memory of the three daemons right after the boot, bytes.
    let bootRSS: Int64

    /// Boots a cluster; `nil` (with the reason on standard error) when it cannot start.
    init?() throws {
        script =
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/ceph-rgw.sh").path
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ca-bench-ceph-\(getpid())")
        try? FileManager.default.removeItem(at: folder)
        var environment = ProcessInfo.processInfo.environment
        environment["CEPH_RGW_DIR"] = folder.path
        environment["CEPH_RGW_PARENT_PID"] = String(getpid())
        let messages = FileManager.default.temporaryDirectory.appendingPathComponent("ca-bench-ceph-\(getpid()).log")
        defer { try? FileManager.default.removeItem(at: messages) }
        let start = now()
        let status = try spawnAndWait(
            ["/bin/bash", script, "start"], environment: environment, standardError: messages)
        bootSeconds = now() - start
        guard status == 0 else {
            let text = (try? String(contentsOf: messages, encoding: .utf8)) ?? ""
            // The script's own lines (the command that failed among them).
            let own = text.split(separator: "\n").filter { $0.hasPrefix("ceph-rgw:") }.suffix(8)
            FileHandle.standardError.write(
                Data("ca-bench: rgw skipped, the cluster did not start:\n\(own.joined(separator: "\n"))\n".utf8))
            return nil
        }
        var values: [String: String] = [:]
        let env = try String(contentsOf: folder.appendingPathComponent("env"), encoding: .utf8)
        for line in env.split(separator: "\n") {
            let assignment = line.hasPrefix("export ") ? line.dropFirst("export ".count) : line[...]
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        guard let url = values["AWS_ENDPOINT_URL"].flatMap(URL.init(string:)), let key = values["AWS_ACCESS_KEY_ID"],
            let secret = values["AWS_SECRET_ACCESS_KEY"]
        else { throw BenchError("the env file of scripts/ceph-rgw.sh lacks the endpoint or keys") }
        endpoint = url
        credentials = AWSCredentials(accessKeyID: key, secretAccessKey: secret)
        var rss: Int64 = 0
        for daemon in ["mon.a", "osd.0", "client.rgw"] {
            let pidText = try String(
                contentsOf: folder.appendingPathComponent("run/\(daemon).pid"), encoding: .utf8)
            rss += residentBytes(pid: Int32(pidText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0)
        }
        bootRSS = rss
    }

    func stop() {
        var environment = ProcessInfo.processInfo.environment
        environment["CEPH_RGW_DIR"] = folder.path
        _ = try? spawnAndWait(["/bin/bash", script, "stop"], environment: environment, standardError: nil)
    }
}

/// Runs a program to its end and returns its exit status: `posix_spawn` and `waitpid`, with only standard error
/// kept (to a file). Not Foundation's `Process`: its `waitUntilExit()` never
/// returned for `ceph-rgw.sh start` (the child stayed a zombie), whose daemons outlive it.
private func spawnAndWait(_ arguments: [String], environment: [String: String], standardError: URL?) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(
        &actions, 2, standardError?.path ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
    guard spawned == 0 else { throw BenchError("posix_spawn \(arguments[0]): errno \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + status & 0x7f
}

/// VmRSS of a process, in bytes.
private func residentBytes(pid: Int32) -> Int64 {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return (line.split(separator: " ").dropFirst().first.flatMap { Int64($0) } ?? 0) * 1024
    }
    return 0
}

func runRGWBenchmarks() async throws -> [BenchRow] {
    guard let cluster = try RGWCluster() else { return [] }
    defer { cluster.stop() }
    let scratch = try makeScratch("rgw")
    defer { removeScratch(scratch) }
    let client = S3Client(
        configuration: S3ClientConfiguration(
            endpoint: cluster.endpoint, credentials: cluster.credentials, stallTimeout: 120, maxConnections: 16))
    let bucket = "bench"
    try await client.createBucket(bucket)
    let downloader = Downloader(
        client: client,
        configuration: DownloaderConfiguration(
            maxConnections: 16, retryPolicy: RetryPolicy(maxAttempts: 20, baseDelay: 0.01, maxDelay: 0.1),
            stallTimeout: 60))
    let mib = 1_048_576.0
    var rows = [
        BenchRow(
            name: "rgw: boot (1 mon, 1 OSD on memstore, radosgw; daemons' RSS in ref)", value: cluster.bootSeconds,
            unit: "s", reference: "RSS of the daemons (MiB)", referenceValue: Double(cluster.bootRSS) / mib,
            ratio: nil, target: "≤ 30 s", met: cluster.bootSeconds <= 30)
    ]

    // 1 GiB in one PUT: its ETag is the MD5, which the downloader verifies (RGW 16 keeps no CRC-32C). The same
    // bytes in 64 MiB parts: an `md5-16` ETag and no checksum, so only the length is checked; the difference
    // between the two rows is the MD5, on two cores shared with the gateway.
    let size = 1 << 30
    do {
        let data = pseudoRandomData(size)
        try await client.putObject(bucket: bucket, key: "big.bin", body: data)
        let part = 64 << 20
        let upload = try await client.createMultipartUpload(bucket: bucket, key: "big-parts.bin")
        var parts: [S3CompletedPart] = []
        for (index, offset) in stride(from: 0, to: size, by: part).enumerated() {
            let etag = try await client.uploadPart(
                bucket: bucket, key: "big-parts.bin", uploadId: upload, partNumber: index + 1,
                body: data.subdata(in: offset..<min(size, offset + part)))
            parts.append(S3CompletedPart(partNumber: index + 1, etag: etag))
        }
        try await client.completeMultipartUpload(bucket: bucket, key: "big-parts.bin", uploadId: upload, parts: parts)
    }
    let md5 = try await largeObject(
        key: "big.bin", size: size, client: client, downloader: downloader, bucket: bucket, scratch: scratch)
    rows.append(
        BenchRow(
            name: "rgw: 1 GiB download, MD5-verified (MiB/s, median of 3)", value: md5.ours, unit: "MiB/s",
            reference: "curl -o, same RGW, median of 3", referenceValue: md5.curl, ratio: md5.ours / md5.curl,
            target: "≥ 0.9× curl", met: md5.verification.contains(.md5) && md5.ours / md5.curl >= 0.9))
    let parts = try await largeObject(
        key: "big-parts.bin", size: size, client: client, downloader: downloader, bucket: bucket, scratch: scratch)
    rows.append(
        BenchRow(
            name: "rgw: 1 GiB multipart (md5-16 ETag: length check only), MiB/s", value: parts.ours, unit: "MiB/s",
            reference: "curl -o, same RGW, median of 3", referenceValue: parts.curl, ratio: parts.ours / parts.curl,
            target: "≥ 0.9× curl", met: parts.verification.contains(.length) && parts.ours / parts.curl >= 0.9))
    rows.append(try await smallObjects(client: client, downloader: downloader, bucket: bucket, scratch: scratch))
    return rows
}

/// The key of small object `i`.
private func key(_ i: Int) -> String { String(format: "small/%05d.bin", i) }

/// MiB/s of the downloader and of `curl -o` (presigned URL) for one object: one unmeasured download each, then
/// three alternating pairs (as in the fake server's row), medians; and the checks the downloader's last run passed.
private func largeObject(
    key: String, size: Int, client: S3Client, downloader: Downloader, bucket: String, scratch: URL
) async throws -> (ours: Double, curl: Double, verification: Set<IntegrityCheck>) {
    let url = client.presignedURL(bucket: bucket, key: key)!
    let request = DownloadRequest(bucket: bucket, key: key, destination: scratch.appendingPathComponent("big.bin"))
    let (ourTime, curlTime, result) = try await alternateLargeDownloads(
        url: url, downloader: downloader, request: request, scratch: scratch)
    let mib = 1_048_576.0
    guard let result, result.size == Int64(size) else { throw BenchError("\(key): wrong size downloaded") }
    return (
        Double(size) / ourTime / mib, Double(size) / curlTime / mib,
        Set(result.verification)
    )
}

/// 2,000 objects of 16 KiB, 16 connections, beside `curl --parallel --parallel-max 16` over presigned URLs: three
/// alternating rounds into fresh folders (nothing deleted until the end), who goes first taking turns; medians.
private func smallObjects(client: S3Client, downloader: Downloader, bucket: String, scratch: URL) async throws
    -> BenchRow
{
    let count = 2000
    let small = pseudoRandomData(16 * 1024)
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<16 {
            group.addTask {
                for i in stride(from: worker, to: count, by: 16) {
                    try await client.putObject(bucket: bucket, key: key(i), body: small)
                }
            }
        }
        try await group.waitForAll()
    }
    var curlTimes: [Double] = []
    var ourTimes: [Double] = []
    var verified = 0
    let rounds = 3
    for round in 0..<rounds {
        let curlDir = scratch.appendingPathComponent("curl-small-\(round)")
        let ourDir = scratch.appendingPathComponent("our-small-\(round)")
        try FileManager.default.createDirectory(at: curlDir, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: ourDir, withIntermediateDirectories: true)
        var config = ""
        for i in 0..<count {
            config += "url = \"\(client.presignedURL(bucket: bucket, key: key(i))!.absoluteString)\"\n"
            config += "output = \"\(curlDir.path)/\(i).bin\"\n"
        }
        let configFile = scratch.appendingPathComponent("curl-\(round).cfg")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        func curlRound() async throws -> Double {
            settleFileSystem()
            return try await seconds { try curl(["-sf", "--parallel", "--parallel-max", "16", "-K", configFile.path]) }
        }
        func ourRound() async throws -> Double {
            let requests = (0..<count).map { i in
                DownloadRequest(bucket: bucket, key: key(i), destination: ourDir.appendingPathComponent("\(i).bin"))
            }
            settleFileSystem()
            var checked = 0
            let time = try await seconds {
                let handles = requests.map { downloader.download($0) }
                for handle in handles where try await handle.result().verification.contains(.md5) { checked += 1 }
            }
            verified = checked
            return time
        }
        if round % 2 == 1 {
            ourTimes.append(try await ourRound())
            curlTimes.append(try await curlRound())
        } else {
            curlTimes.append(try await curlRound())
            ourTimes.append(try await ourRound())
        }
    }
    let curlRate = Double(count) / curlTimes.sorted()[rounds / 2]
    let ourRate = Double(count) / ourTimes.sorted()[rounds / 2]
    return BenchRow(
        name: "rgw: 2,000 × 16 KiB, 16 connections (objects/s, median of 3)", value: ourRate, unit: "obj/s",
        reference: "curl --parallel, same RGW", referenceValue: curlRate, ratio: ourRate / curlRate,
        target: "≥ 0.9× curl", met: verified == count && ourRate / curlRate >= 0.9)
}
