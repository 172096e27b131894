import AWSSigV4
import Foundation
import S3Transfer

#if canImport(Glibc)
    import Glibc
#endif

// Uploader benchmarks against `fake-s3 serve` (disk storage in a temp dir) run as a child process, so this
// process's peak RSS is the uploader's alone. The reference, `aws s3 cp` of the same file to the same server,
// runs in the same run, alternating with ours.

/// What the bench reads of the server's request log (`GET /_fake-s3/log`).
private struct UploadLogEntry: Decodable {
    var method: String
    var key: String?
    var status: Int
    var partNumber: Int?
    var uploadId: String?
    var date: Date
}

/// `CA_BENCH_UPLOAD_DETAIL=1` prints each of our runs' split (parts, completion) and CPU times (ours, the server's).
private let uploadDetail = ProcessInfo.processInfo.environment["CA_BENCH_UPLOAD_DETAIL"] == "1"

func runUploadBenchmarks() async throws -> [BenchRow] {
    let scratch = try makeScratch("upload")
    defer { removeScratch(scratch) }
    let server = try ChildServer(root: scratch.appendingPathComponent("root"), publicBucket: nil, faults: true)
    defer { server.stop() }
    let bucket = "uploads"
    let client = S3Client(
        configuration: S3ClientConfiguration(
            endpoint: server.endpointURL,
            credentials: AWSCredentials(accessKeyID: server.accessKey, secretAccessKey: server.secretKey),
            stallTimeout: 120, maxConnections: 16))
    try await client.createBucket(bucket)
    let size: Int64 = 1 << 30
    let file = scratch.appendingPathComponent("big.bin")
    try writeIncompressibleFile(file, size: size)
    let uploader = Uploader(
        client: client,
        configuration: UploaderConfiguration(
            partSize: 8 << 20, maxConcurrentParts: 4,
            retryPolicy: RetryPolicy(maxAttempts: 20, baseDelay: 0.01, maxDelay: 0.1)))
    var round = 0
    /// One upload of ours to a new key (removed afterwards, so the server's disk holds one copy at a time).
    func ours(_ prefix: String = "ours") async throws -> (seconds: Double, outcome: UploadOutcome) {
        round += 1
        let key = "\(prefix)-\(round).bin"
        var outcome: UploadOutcome?
        settleFileSystem()
        if uploadDetail { try server.admin("DELETE", "log") }
        let cpu = (ours: processCPUSeconds(), server: childCPUSeconds(server.process.processIdentifier))
        let started = Date()
        let time = try await seconds {
            outcome = try await uploader.upload(
                UploadRequest(bucket: bucket, key: key, file: file), resumingFrom: nil, checkpoint: { _ in })
        }
        if uploadDetail {
            let ended = Date()
            let log = try logDecoder.decode([UploadLogEntry].self, from: adminGet("log", server))
            let complete = log.last { $0.method == "POST" && $0.uploadId != nil }?.date ?? ended
            print(
                String(
                    format: "%@: %.2f s (parts %.2f s, completion %.2f s); CPU ours %.2f s, server %.2f s", key, time,
                    complete.timeIntervalSince(started), ended.timeIntervalSince(complete),
                    processCPUSeconds() - cpu.ours,
                    childCPUSeconds(server.process.processIdentifier) - cpu.server))
        }
        try await client.deleteObject(bucket: bucket, key: key)
        return (time, outcome!)
    }
    func awsCopy() async throws -> Double {
        round += 1
        let key = "aws-\(round).bin"
        settleFileSystem()
        let cpu = childCPUSeconds(server.process.processIdentifier)
        let time = try await seconds {
            try awsCLI(["s3", "cp", "--only-show-errors", file.path, "s3://\(bucket)/\(key)"], server)
        }
        if uploadDetail {
            print(
                String(
                    format: "%@: %.2f s; CPU server %.2f s", key, time,
                    childCPUSeconds(server.process.processIdentifier) - cpu))
        }
        try await client.deleteObject(bucket: bucket, key: key)
        return time
    }
    /// `cloudassets add FILE` end to end, as a user runs it (copied into a fresh library and hashed, then uploaded,
    /// into a fresh bucket): its time and the process's peak RSS (`/usr/bin/time -f %M`).
    func cliAdd() async throws -> (seconds: Double, peakRSS: Int64) {
        round += 1
        let cliBucket = "cli-\(round)"
        try await client.createBucket(cliBucket)
        let store = scratch.appendingPathComponent("library-\(round)")
        settleFileSystem()
        let measured = try timedRun(
            productsDirectory.appendingPathComponent("cloudassets").path,
            ["add", "--quiet", "--store", store.path, "--endpoint", server.endpoint, "--bucket", cliBucket, file.path],
            environment: ProcessInfo.processInfo.environment.merging([
                "AWS_ACCESS_KEY_ID": server.accessKey, "AWS_SECRET_ACCESS_KEY": server.secretKey,
            ]) { _, new in new })
        try? FileManager.default.removeItem(at: store)
        // Its object goes too, as every run's does: the server's page cache holds one upload at a time, so no later
        // run pays for reclaiming memory this one filled.
        for try await page in client.listAllObjects(bucket: cliBucket) {
            for object in page.objects { try await client.deleteObject(bucket: cliBucket, key: object.key) }
        }
        return measured
    }
    // One unmeasured upload each first (page cache, the server's first writes), then three alternating rounds;
    // each keeps its median.
    _ = try await awsCopy()
    resetPeakRSS()
    let baseRSS = peakRSS()
    var created = try await ours().outcome
    var ourTimes: [Double] = []
    var awsTimes: [Double] = []
    var cliTimes: [Double] = []
    var cliPeak: Int64 = 0
    for _ in 0..<3 {
        awsTimes.append(try await awsCopy())
        let run = try await ours()
        ourTimes.append(run.seconds)
        created = run.outcome
    }
    let peak = peakRSS()
    for _ in 0..<3 {
        let cli = try await cliAdd()
        cliTimes.append(cli.seconds)
        cliPeak = max(cliPeak, cli.peakRSS)
    }
    let cliRate = Double(size) / cliTimes.sorted()[1] / 1_048_576
    let ourTime = ourTimes.sorted()[1]
    let awsTime = awsTimes.sorted()[1]
    let ourRate = Double(size) / ourTime / 1_048_576
    let awsRate = Double(size) / awsTime / 1_048_576
    // The server checked the bytes it assembled against the full-object CRC-32C the uploader computed from the file
    // (a mismatch fails the completion): a created object with one is verified.
    var expectedCRC: String?
    if case .created(_, let checksums) = created { expectedCRC = checksums.crc32c }
    let verified = expectedCRC != nil
    var rows: [BenchRow] = []
    rows.append(
        BenchRow(
            name: "1 GiB upload, 8 MiB × 4 parts, CRC32C (MiB/s, median of 3)", value: ourRate, unit: "MiB/s",
            reference: "aws s3 cp, median of 3", referenceValue: awsRate, ratio: ourRate / awsRate,
            target: "≥ 1.5× aws s3 cp", met: verified && ourRate / awsRate >= 1.5))
    rows.append(
        BenchRow(
            name: "1 GiB: cloudassets add FILE (copy + SHA-256 + upload; MiB/s, median of 3)", value: cliRate,
            unit: "MiB/s", reference: "aws s3 cp, median of 3", referenceValue: awsRate, ratio: cliRate / awsRate,
            target: "≥ 1.5× aws s3 cp", met: cliRate / awsRate >= 1.5))
    rows.append(
        BenchRow(
            name: "1 GiB: cloudassets add peak RSS (whole process)", value: Double(cliPeak) / 1_048_576, unit: "MiB",
            reference: "limit", referenceValue: 64, ratio: Double(cliPeak) / 1_048_576 / 64, target: "≤ 64 MiB",
            met: cliPeak <= 64 << 20))
    let peakMiB = Double(peak) / 1_048_576
    let growthMiB = Double(peak - baseRSS) / 1_048_576
    rows.append(
        BenchRow(
            name: "1 GiB upload peak RSS (VmHWM; growth \(String(format: "%.1f", growthMiB)) MiB)", value: peakMiB,
            unit: "MiB", reference: "limit", referenceValue: 64, ratio: peakMiB / 64, target: "≤ 64 MiB",
            met: peakMiB <= 64))

    // (c) The same upload with a connection reset about every 100 MiB: one UploadPart in every 13 is cut after
    // 4 MiB of its body (the server keeps nothing of it and answers nothing).
    var faultTimes: [Double] = []
    // Each of five faulty runs follows a clean run of its own, and the row compares their medians: the machine's
    // speed drifts (clean runs of one build take 1.6–2.6 s here), and the ratio is to say what the resets cost, not
    // the drift.
    var cleanTimes: [Double] = []
    var sentTwice = 0
    var cuts: [Int] = []
    var faultVerified = true
    for _ in 0..<5 {
        cleanTimes.append(try await ours().seconds)
        try server.admin("DELETE", "faults")
        try server.admin("DELETE", "log")
        let key = "faulty-\(round + 1).bin"
        for n in 1...10 {
            try server.admin(
                "POST", "faults",
                json: #"{"keyPattern": "\#(key)", "method": "PUT", "afterRequests": \#(13 * n), "times": 1, "#
                    + #""fault": {"type": "resetAfter", "bytes": 4194304}}"#)
        }
        let run = try await ours("faulty")
        faultTimes.append(run.seconds)
        if case .created(_, let checksums) = run.outcome, checksums.crc32c == expectedCRC {
        } else {
            faultVerified = false
        }
        let log = try logDecoder.decode([UploadLogEntry].self, from: adminGet("log", server))
        var acknowledged: [String: Int] = [:]
        for entry in log where entry.method == "PUT" && entry.status == 200 {
            guard let id = entry.uploadId, let part = entry.partNumber else { continue }
            acknowledged["\(id)#\(part)", default: 0] += 1
        }
        sentTwice += acknowledged.values.filter { $0 > 1 }.count
        // A part cut by a reset is logged without an answer (status 0).
        cuts.append(log.filter { $0.method == "PUT" && $0.status == 0 }.count)
    }
    try server.admin("DELETE", "faults")
    let resets = cuts.min() ?? 0
    let faultTime = faultTimes.sorted()[2]
    let cleanTime = cleanTimes.sorted()[2]
    rows.append(
        BenchRow(
            name: "1 GiB upload, reset every ~100 MiB (\(resets) parts cut, median of 5)", value: faultTime, unit: "s",
            reference: "clean runs between, median", referenceValue: cleanTime, ratio: faultTime / cleanTime,
            target: "≤ 1.3× clean, verified", met: faultVerified && faultTime / cleanTime <= 1.3))
    rows.append(
        BenchRow(
            name: "1 GiB upload with resets: parts sent again after their ack", value: Double(sentTwice),
            unit: "parts", reference: "none", referenceValue: 0, ratio: nil, target: "= 0",
            met: sentTwice == 0 && resets >= 9))
    return rows
}

/// Decodes the admin endpoint's JSON (ISO 8601 dates).
private let logDecoder: JSONDecoder = {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .custom { decoder in
        let text = try decoder.singleValueContainer().decode(String.self)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: text))
        }
        return date
    }
    return decoder
}()

/// Runs the aws CLI against the child server; fails when it exits non-zero.
private func awsCLI(_ arguments: [String], _ server: ChildServer) throws {
    var environment = ProcessInfo.processInfo.environment
    environment["AWS_ACCESS_KEY_ID"] = server.accessKey
    environment["AWS_SECRET_ACCESS_KEY"] = server.secretKey
    environment["AWS_DEFAULT_REGION"] = "us-east-1"
    environment["AWS_EC2_METADATA_DISABLED"] = "true"
    environment["AWS_CONFIG_FILE"] = "/dev/null"
    environment["AWS_SHARED_CREDENTIALS_FILE"] = "/dev/null"
    environment["PATH"] = (environment["PATH"] ?? "/usr/bin:/bin") + ":/root/.pyenv/shims:/usr/local/bin"
    let result = try run(
        "/usr/bin/env", ["aws", "--endpoint-url", server.endpoint] + arguments, environment: environment)
    guard result.status == 0 else {
        throw BenchError("aws \(arguments.joined(separator: " ")) exited \(result.status) (is the aws CLI installed?)")
    }
}

/// The body of an admin GET (`/_fake-s3/PATH`).
private func adminGet(_ path: String, _ server: ChildServer) throws -> Data {
    Data(try curl(["-sf", "\(server.endpoint)/_fake-s3/\(path)"]).utf8)
}

/// Writes `size` incompressible bytes (``pseudoRandomData(_:seed:)``'s generator) through one 1 MiB buffer: no
/// allocation large enough to move the C heap's thresholds before the uploader's memory is measured.
private func writeIncompressibleFile(_ url: URL, size: Int64) throws {
    let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw BenchError("cannot create \(url.path)") }
    defer { close(fd) }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
    defer { buffer.deallocate() }
    let words = buffer.bindMemory(to: UInt64.self)
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    var written: Int64 = 0
    while written < size {
        for i in 0..<words.count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            words[i] = state
        }
        let n = Int(min(Int64(buffer.count), size - written))
        guard write(fd, buffer.baseAddress, n) == n else { throw BenchError("cannot write \(url.path)") }
        written += Int64(n)
    }
}
