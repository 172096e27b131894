import AWSSigV4
import Foundation
import Hashing
import S3Transfer

#if canImport(Glibc)
    import Glibc
#endif

// Downloader benchmarks against `fake-s3 serve` (disk storage in a temp dir) run as a child process, so
// this process's peak RSS is the downloader's alone. References (`curl`) run in the same run.

/// Context switches of this process so far (voluntary + involuntary, every thread).
private func contextSwitches() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_nvcsw + usage.ru_nivcsw
}

/// Extra unmeasured rounds of our downloads for profiling (`CA_BENCH_PROFILE_ROUNDS`), 0 by default.
private let profileRounds = ProcessInfo.processInfo.environment["CA_BENCH_PROFILE_ROUNDS"].flatMap(Int.init) ?? 0
/// Alternating curl/ours rounds of the small-object row (5 unless `CA_BENCH_SMALL_ROUNDS` says otherwise: fewer
/// when only the profile rounds matter).
private let smallRounds = ProcessInfo.processInfo.environment["CA_BENCH_SMALL_ROUNDS"].flatMap(Int.init) ?? 5

func runTransferBenchmarks(large: Bool, small: Bool) async throws -> [BenchRow] {
    let scratch = try makeScratch("transfer")
    defer { removeScratch(scratch) }
    let server = try ChildServer(root: scratch.appendingPathComponent("root"), publicBucket: nil, faults: true)
    defer { server.stop() }
    let bucket = "bench"
    let client = S3Client(
        configuration: S3ClientConfiguration(
            endpoint: server.endpointURL,
            credentials: AWSCredentials(accessKeyID: "bench", secretAccessKey: "bench-secret"),
            stallTimeout: 120, maxConnections: 16))
    try await client.createBucket(bucket)
    let work = scratch.appendingPathComponent("downloads")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    var rows: [BenchRow] = []

    if large { rows += try await largeObjectBenchmarks(server: server, client: client, bucket: bucket, work: work) }
    if small {
        rows += try await smallObjectBenchmarks(
            client: client, bucket: bucket, work: work, serverPID: server.process.processIdentifier)
    }
    return rows
}

/// (a) one 1 GiB object, its peak RSS, and (c) the same with a reset every 100 MiB.
private func largeObjectBenchmarks(server: ChildServer, client: S3Client, bucket: String, work: URL) async throws
    -> [BenchRow]
{
    var rows: [BenchRow] = []
    let size = 1 << 30
    do {
        var data: Data? = pseudoRandomData(size)
        // Stored with a CRC-32C, as S3 keeps a checksum for objects uploaded with one: downloads verify it.
        try await client.putObject(bucket: bucket, key: "big.bin", body: data!, checksum: .crc32c)
        data = nil
    }
    resetPeakRSS()
    let baseRSS = peakRSS()
    let url = client.presignedURL(bucket: bucket, key: "big.bin")!
    let downloader = Downloader(
        client: client,
        configuration: DownloaderConfiguration(
            maxConnections: 16, retryPolicy: RetryPolicy(maxAttempts: 20, baseDelay: 0.01, maxDelay: 0.1),
            stallTimeout: 60))
    let destination = work.appendingPathComponent("big.bin")
    // `CA_BENCH_PROFILE_ROUNDS=N` adds N unmeasured downloads (for a profiler).
    let (ourTime, curlTime, result) = try await alternateLargeDownloads(
        url: url, downloader: downloader,
        request: DownloadRequest(bucket: bucket, key: "big.bin", destination: destination), scratch: work,
        extraWarmups: profileRounds)
    let peak = peakRSS()
    let curlRate = Double(size) / curlTime / 1_048_576
    let ourRate = Double(size) / ourTime / 1_048_576
    let verified = result?.verification.contains(.crc32c) == true
    rows.append(
        BenchRow(
            name: "1 GiB download, CRC32C-verified (MiB/s, median of 3)", value: ourRate, unit: "MiB/s",
            reference: "curl -o, median of 3",
            referenceValue: curlRate, ratio: ourRate / curlRate, target: "≥ 0.9× curl",
            met: verified && ourRate / curlRate >= 0.9))
    let peakMiB = Double(peak) / 1_048_576
    let growthMiB = Double(peak - baseRSS) / 1_048_576
    rows.append(
        BenchRow(
            name: "1 GiB download peak RSS (VmHWM; growth \(String(format: "%.1f", growthMiB)) MiB)", value: peakMiB,
            unit: "MiB", reference: "limit", referenceValue: 64, ratio: peakMiB / 64, target: "≤ 64 MiB",
            met: peakMiB <= 64))

    // (c) The same object with a connection reset every 100 MiB.
    try server.admin(
        "POST", "faults",
        json: #"{"keyPattern": "big.bin", "method": "GET", "fault": {"type": "resetAfter", "bytes": 104857600}}"#)
    // Median of three, like the clean run it is compared with.
    var faulty: DownloadResult?
    var faultTimes: [Double] = []
    for _ in 0..<3 {
        settleFileSystem()
        faultTimes.append(
            try await seconds {
                faulty = try await downloader.download(
                    DownloadRequest(bucket: bucket, key: "big.bin", destination: destination)
                ).result()
            })
        try? FileManager.default.removeItem(at: destination)
    }
    let faultTime = faultTimes.sorted()[1]
    try server.admin("DELETE", "faults")
    let faultVerified = faulty?.verification.contains(.crc32c) == true && faulty?.size == Int64(size)
    rows.append(
        BenchRow(
            name: "1 GiB, reset every 100 MiB (\(faulty?.attempts ?? 0) attempts, median of 3)", value: faultTime,
            unit: "s",
            reference: "clean run", referenceValue: ourTime, ratio: faultTime / ourTime,
            target: "≤ 1.3× clean, verified",
            met: faultVerified && faultTime / ourTime <= 1.3))
    try? FileManager.default.removeItem(at: destination)

    // The same object verified with every check (also the ETag's MD5): MD5 cannot run faster than one core
    // hashes, so its reference is MD5 alone over the same bytes in this process.
    let md5Rate = md5Throughput()
    let all = Downloader(
        client: client,
        configuration: DownloaderConfiguration(
            maxConnections: 16, retryPolicy: RetryPolicy(maxAttempts: 20, baseDelay: 0.01, maxDelay: 0.1),
            stallTimeout: 60, integrity: .all))
    var md5Result: DownloadResult?
    let md5Time = try await seconds {
        md5Result = try await all.download(
            DownloadRequest(bucket: bucket, key: "big.bin", destination: destination)
        ).result()
    }
    let md5Download = Double(size) / md5Time / 1_048_576
    rows.append(
        BenchRow(
            name: "1 GiB download, every check incl. MD5 (MiB/s)", value: md5Download, unit: "MiB/s",
            reference: "MD5 alone, 1 core", referenceValue: md5Rate, ratio: md5Download / md5Rate,
            target: "≥ 0.8× MD5 alone",
            met: md5Result?.verification.isSuperset(of: [.md5, .crc32c]) == true && md5Download / md5Rate >= 0.8))
    try? FileManager.default.removeItem(at: destination)
    rows.append(try await copyOutBenchmark(server: server, client: client, size: size, work: work))
    return rows
}

/// Issue 41: what a user runs to copy an original out, `cloudassets get --network -o FILE ID` (process start to
/// exit: opening the library, the request, the file under its name), beside `curl -o` of the same 1 GiB object,
/// alternating three times each after one unmeasured run of each, medians. The library keeps no copy (the default
/// with -o), so every run downloads.
private func copyOutBenchmark(server: ChildServer, client: S3Client, size: Int, work: URL) async throws -> BenchRow {
    let bucket = "cli"
    try await client.createBucket(bucket)
    do {
        let data = pseudoRandomData(size, seed: 41)
        try await client.putObject(bucket: bucket, key: "originals/big.bin", body: data, checksum: .crc32c)
    }
    var environment = ProcessInfo.processInfo.environment
    environment["AWS_ACCESS_KEY_ID"] = server.accessKey
    environment["AWS_SECRET_ACCESS_KEY"] = server.secretKey
    let cli = productsDirectory.appendingPathComponent("cloudassets").path
    let store = work.appendingPathComponent("cli-library").path
    let common = ["--store", store, "--endpoint", server.endpoint, "--bucket", bucket]
    guard try run(cli, ["sync", "--no-thumbnails", "-q"] + common, environment: environment).status == 0 else {
        throw BenchError("cloudassets sync failed")
    }
    let output = work.appendingPathComponent("copy.bin")
    let curlFile = work.appendingPathComponent("curl.bin")
    let url = client.presignedURL(bucket: bucket, key: "originals/big.bin")!
    func ours() throws -> Double {
        defer { try? FileManager.default.removeItem(at: output) }
        settleFileSystem()
        let started = Date()
        let result = try run(
            cli, ["get", "--network", "-q", "-o", output.path, "originals/big.bin"] + common, environment: environment)
        guard result.status == 0 else { throw BenchError("cloudassets get -o exited \(result.status)") }
        let seconds = Date().timeIntervalSince(started)
        let attributes = try FileManager.default.attributesOfItem(atPath: output.path)
        guard (attributes[.size] as? NSNumber)?.intValue == size else { throw BenchError("get -o wrote a short file") }
        return seconds
    }
    func theirs() throws -> Double {
        defer { try? FileManager.default.removeItem(at: curlFile) }
        settleFileSystem()
        let started = Date()
        _ = try curl(["-sf", "-o", curlFile.path, url.absoluteString])
        return Date().timeIntervalSince(started)
    }
    _ = try theirs()
    _ = try ours()
    var ourTimes: [Double] = []
    var curlTimes: [Double] = []
    for _ in 0..<3 {
        curlTimes.append(try theirs())
        ourTimes.append(try ours())
    }
    let ourRate = Double(size) / ourTimes.sorted()[1] / 1_048_576
    let curlRate = Double(size) / curlTimes.sorted()[1] / 1_048_576
    return BenchRow(
        name: "cloudassets get --network -o FILE, 1 GiB (MiB/s, process start to exit, median of 3)",
        value: ourRate, unit: "MiB/s", reference: "curl -o, median of 3", referenceValue: curlRate,
        ratio: ourRate / curlRate, target: "≥ 0.9× curl", met: ourRate / curlRate >= 0.9)
}

/// MiB/s of MD5 over 256 MiB of incompressible bytes in 1 MiB updates (the downloader's chunk size).
private func md5Throughput() -> Double {
    let chunk = pseudoRandomData(1 << 20)
    var md5 = Insecure.MD5()
    let start = DispatchTime.now().uptimeNanoseconds
    chunk.withUnsafeBytes { raw in
        for _ in 0..<256 { md5.update(bufferPointer: raw) }
    }
    _ = md5.finalize()
    return 256 / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

/// (b) 2,000 objects of 16 KiB with 16 connections.
private func smallObjectBenchmarks(client: S3Client, bucket: String, work: URL, serverPID: Int32) async throws
    -> [BenchRow]
{
    let downloader = Downloader(
        client: client,
        configuration: DownloaderConfiguration(
            maxConnections: 16, retryPolicy: RetryPolicy(maxAttempts: 20, baseDelay: 0.01, maxDelay: 0.1),
            stallTimeout: 60))
    let count = 2000
    let small = pseudoRandomData(16 * 1024)
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<16 {
            group.addTask {
                for i in stride(from: worker, to: count, by: 16) {
                    try await client.putObject(bucket: bucket, key: String(format: "small/%05d.bin", i), body: small)
                }
            }
        }
        try await group.waitForAll()
    }
    /// One round of ours into `dir`: wall time, this process's CPU time, and how many files were MD5-verified.
    func ourRound(into dir: URL) async throws -> (seconds: Double, cpu: Double, verified: Int) {
        let requests = (0..<count).map { i in
            DownloadRequest(
                bucket: bucket, key: String(format: "small/%05d.bin", i),
                destination: dir.appendingPathComponent("\(i).bin"))
        }
        var verified = 0
        settleFileSystem()
        let cpuBefore = processCPUSeconds()
        let time = try await seconds {
            let handles = requests.map { downloader.download($0) }
            for handle in handles where try await handle.result().verification.contains(.md5) { verified += 1 }
        }
        return (time, processCPUSeconds() - cpuBefore, verified)
    }
    // The file system's cost of creating 2,000 inodes swings between runs (ext4 without a journal skips inodes
    // deleted in the last minutes, one by one, when it allocates: creating a file can cost 5× more for minutes
    // after a test run or an earlier bench removed its files), and so does this shared VM's speed, so curl and
    // the downloader alternate five times over fresh folders (nothing is deleted until the end), taking turns
    // to go first, and each keeps its median.
    // CPU time per object (ours: this process; curl: the child) is the median too.
    var verifiedSmall = 0
    var curlTimes: [Double] = []
    var ourTimes: [Double] = []
    var curlCPUs: [Double] = []
    var ourCPUs: [Double] = []
    let rounds = max(1, smallRounds)
    for round in 0..<rounds {
        let curlDir = work.appendingPathComponent("curl-small-\(round)")
        let ourDir = work.appendingPathComponent("our-small-\(round)")
        try FileManager.default.createDirectory(at: curlDir, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: ourDir, withIntermediateDirectories: true)
        var config = ""
        for i in 0..<count {
            let key = String(format: "small/%05d.bin", i)
            config += "url = \"\(client.presignedURL(bucket: bucket, key: key)!.absoluteString)\"\n"
            config += "output = \"\(curlDir.path)/\(i).bin\"\n"
        }
        let configFile = work.appendingPathComponent("curl-\(round).cfg")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        /// curl's run: wall time, its CPU time and the server's.
        func curlRound() async throws -> (seconds: Double, cpu: Double, server: Double) {
            settleFileSystem()
            let cpuBefore = processCPUSeconds(RUSAGE_CHILDREN)
            let serverBefore = childCPUSeconds(serverPID)
            let time = try await seconds {
                try curl(["-s", "--parallel", "--parallel-max", "16", "-K", configFile.path])
            }
            return (time, processCPUSeconds(RUSAGE_CHILDREN) - cpuBefore, childCPUSeconds(serverPID) - serverBefore)
        }
        /// Our run (``ourRound(into:)``) and the server's CPU time for it.
        func ourMeasuredRound() async throws -> (seconds: Double, cpu: Double, verified: Int, server: Double) {
            let serverBefore = childCPUSeconds(serverPID)
            let run = try await ourRound(into: ourDir)
            return (run.seconds, run.cpu, run.verified, childCPUSeconds(serverPID) - serverBefore)
        }
        // Who goes first alternates: a round's second run finds the file system a little further from whatever
        // happened before the round (see above).
        let curlRun: (seconds: Double, cpu: Double, server: Double)
        let ours: (seconds: Double, cpu: Double, verified: Int, server: Double)
        if round % 2 == 1 {
            ours = try await ourMeasuredRound()
            curlRun = try await curlRound()
        } else {
            curlRun = try await curlRound()
            ours = try await ourMeasuredRound()
        }
        curlTimes.append(curlRun.seconds)
        ourTimes.append(ours.seconds)
        verifiedSmall = ours.verified
        curlCPUs.append(curlRun.cpu / Double(count) * 1e6)
        ourCPUs.append(ours.cpu / Double(count) * 1e6)
        if profileRounds > 0 {
            print(
                "round \(round): curl \(Int(Double(count) / curlRun.seconds)) obj/s, "
                    + "\(Int(curlRun.cpu / Double(count) * 1e6)) µs CPU per object; ours "
                    + "\(Int(Double(count) / ours.seconds)) obj/s, \(Int(ours.cpu / Double(count) * 1e6)) µs; server "
                    + "\(Int(curlRun.server / Double(count) * 1e6)) µs for curl's, "
                    + "\(Int(ours.server / Double(count) * 1e6)) µs for ours")
        }
    }
    for round in 0..<profileRounds {
        let dir = work.appendingPathComponent("profile-small-\(round)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let switchesBefore = contextSwitches()
        let syncsBefore = Downloader.fileSyncStatistics
        let (time, cpu, _) = try await ourRound(into: dir)
        let switches = Double(contextSwitches() - switchesBefore) / Double(count)
        print(
            "profile round \(round): \(Int(Double(count) / time)) obj/s, \(Int(cpu / Double(count) * 1e6)) µs CPU per object, "
                + "\(String(format: "%.1f", switches)) context switches per object, "
                + "\(String(format: "%.1f", Double(Downloader.fileSyncStatistics.files - syncsBefore.files) / Double(max(1, Downloader.fileSyncStatistics.groups - syncsBefore.groups)))) files per sync group"
        )
        removeScratch(dir)
    }
    let curlSmall = curlTimes.sorted()[rounds / 2]
    let ourSmall = ourTimes.sorted()[rounds / 2]
    let curlRateSmall = Double(count) / curlSmall
    let ourRateSmall = Double(count) / ourSmall
    return [
        BenchRow(
            name:
                "2,000 × 16 KiB, 16 connections (objects/s; CPU per object \(Int(ourCPUs.sorted()[rounds / 2])) µs, "
                + "curl \(Int(curlCPUs.sorted()[rounds / 2])) µs)", value: ourRateSmall, unit: "obj/s",
            reference: "curl --parallel", referenceValue: curlRateSmall, ratio: ourRateSmall / curlRateSmall,
            target: "≥ 1× curl", met: verifiedSmall == count && ourRateSmall >= curlRateSmall)
    ]
}
