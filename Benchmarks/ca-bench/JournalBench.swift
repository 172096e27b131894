import CloudAssets
import FakeS3
import Foundation

// Issue 16: a sync costs O(changes), whatever the size of the bucket. An in-process fake server (memory) holds
// `CA_BENCH_JOURNAL_OBJECTS` objects (default 200,000; `make bench-scale` uses 1,000,000), put straight into its
// storage, not through HTTP. Each figure beside its reference, in this run:
// - the first (full) sync of the bucket, against `rclone lsf -R` and `aws s3 ls --recursive` listing it;
// - a sync with nothing new through the journal (time and requests), against a full re-sync of the same bucket;
// - a sync after 1,000 remote changes (1,000 journal entries of one change each, the worst case: each import
//   that finishes alone writes its own entry), against a full sync taking in another 1,000 new objects.

func runJournalBenchmarks() async throws -> [BenchRow] {
    let count = ProcessInfo.processInfo.environment["CA_BENCH_JOURNAL_OBJECTS"].flatMap { Int($0) } ?? 200_000
    let scratch = try makeScratch("journal")
    defer { removeScratch(scratch) }
    let server = try FakeS3Server(
        configuration: FakeS3Configuration(accessKeyID: "bench", secretAccessKey: "bench-secret"))
    try await server.start()
    do {
        let rows = try await measureJournal(server: server, scratch: scratch, count: count)
        try await server.stop()
        return rows
    } catch {
        try? await server.stop()
        throw error
    }
}

private func measureJournal(server: FakeS3Server, scratch: URL, count: Int) async throws -> [BenchRow] {
    let bucket = "photos"
    try server.createBucket(bucket)
    let payload = Data("x".utf8)
    for i in 0..<count {
        try server.putObject(bucket: bucket, key: String(format: "originals/%07d.jpg", i), data: payload)
    }
    let label = count >= 1_000_000 ? "\(count / 1_000_000)M" : "\(count / 1000)k"

    // The tools a user would otherwise list the bucket with.
    var environment = rcloneEnvironment(
        endpoint: server.endpoint.absoluteString, accessKey: "bench", secretKey: "bench-secret")
    environment.merge([
        "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench-secret", "AWS_DEFAULT_REGION": "us-east-1",
    ]) { _, new in new }
    let tools = ProcessInfo.processInfo.environment["CA_BENCH_JOURNAL_TOOLS"] != "0"
    var started = Date()
    let rclone =
        !tools
        ? (status: Int32(0), output: "")
        : try run("/usr/bin/rclone", ["lsf", "-R", "fake:\(bucket)/originals"], environment: environment)
    let rcloneSeconds = Date().timeIntervalSince(started)
    guard rclone.status == 0 else { throw BenchError("rclone lsf exited \(rclone.status)") }
    started = Date()
    let aws =
        !tools
        ? (status: Int32(0), output: "")
        : try run(
            "/usr/bin/env",
            [
                "aws", "--endpoint-url", server.endpoint.absoluteString, "s3", "ls", "--recursive",
                "s3://\(bucket)/originals/",
            ],
            environment: environment)
    let awsSeconds = Date().timeIntervalSince(started)
    let awsListed = aws.status == 0 ? aws.output.split(separator: "\n").count : 0

    var configuration = AssetLibrary.Configuration(
        storeURL: scratch.appendingPathComponent("store"), endpoint: server.endpoint, bucket: bucket,
        credentials: .static(accessKeyID: "bench", secretAccessKey: "bench-secret"))
    configuration.metadataSource = .listingOnly
    configuration.checkpointInterval = 0  // written below, timed on its own
    let library = try await AssetLibrary(configuration: configuration)
    defer { library.close() }
    started = Date()
    let first = try await library.sync(fetchThumbnails: false)
    let firstSeconds = Date().timeIntervalSince(started)

    // Nothing new: the journal (one listing request), against listing everything again.
    _ = try await library.sync(fetchThumbnails: false)
    let requestsBefore = server.requestLog.entries().count
    started = Date()
    let idle = try await library.sync(fetchThumbnails: false)
    let idleSeconds = Date().timeIntervalSince(started)
    let idleRequests = server.requestLog.entries().count - requestsBefore
    started = Date()
    let fullIdle = try await library.sync(mode: .full, fetchThumbnails: false)
    let fullIdleSeconds = Date().timeIntervalSince(started)

    // 1,000 changes from another library: new objects, each announced by its own journal entry.
    let time = Int64(Date().timeIntervalSince1970 * 1000)
    for i in 0..<1000 {
        let key = String(format: "originals/new/%04d.jpg", i)
        let etag = try server.putObject(bucket: bucket, key: key, data: payload)
        let entry =
            #"{"format":1,"device":"bench","changes":[{"op":"put","key":"\#(key)","size":1,"etag":\#(etag),"#
            + #""metadata":{"pixel-width":"4032","pixel-height":"3024","media-type":"image"}}]}"#
        try server.putObject(
            bucket: bucket, key: String(format: "journal/%013lld-bench-%d.json", time + Int64(i), i),
            data: Data(entry.utf8))
    }
    started = Date()
    let changed = try await library.sync(fetchThumbnails: false)
    let changedSeconds = Date().timeIntervalSince(started)
    for i in 0..<1000 {
        try server.putObject(bucket: bucket, key: String(format: "originals/other/%04d.jpg", i), data: payload)
    }
    started = Date()
    let fullChanged = try await library.sync(mode: .full, fetchThumbnails: false)
    let fullChangedSeconds = Date().timeIntervalSince(started)

    // Opening the library as a user does, alone (so each open is the first, which checks the files against the
    // catalog): `cloudassets status`, process start to exit, median of three.
    library.close()
    var statusRuns: [(seconds: Double, peakRSS: Int64)] = []
    for _ in 0..<3 {
        statusRuns.append(
            try timedRun(
                productsDirectory.appendingPathComponent("cloudassets").path,
                ["status", "--store", configuration.storeURL.path]))
    }
    statusRuns.sort { $0.seconds < $1.seconds }
    let status = statusRuns[1]

    // A checkpoint of the catalog, then 1,000 more changes in the journal; a new library bootstraps from both,
    // against a new library listing the whole bucket (with the HEAD per object that reads each one's metadata).
    var checkpointing = configuration
    checkpointing.checkpointInterval = 24 * 3600
    let writer = try await AssetLibrary(configuration: checkpointing)
    started = Date()
    let wrote = try await writer.sync(fetchThumbnails: false).wroteCheckpoint
    let checkpointSeconds = Date().timeIntervalSince(started)
    writer.close()
    let later = Int64(Date().timeIntervalSince1970 * 1000) + 10_000
    for i in 0..<1000 {
        let key = String(format: "originals/tail/%04d.jpg", i)
        let etag = try server.putObject(bucket: bucket, key: key, data: payload)
        let entry =
            #"{"format":1,"device":"bench","changes":[{"op":"put","key":"\#(key)","size":1,"etag":\#(etag)}]}"#
        try server.putObject(
            bucket: bucket, key: String(format: "journal/%013lld-bench-t%d.json", later + Int64(i), i),
            data: Data(entry.utf8))
    }
    var fresh = configuration
    fresh.metadataSource = .headObject
    fresh.checkpointInterval = 24 * 3600
    fresh.storeURL = scratch.appendingPathComponent("bootstrap")
    let bootstrapping = try await AssetLibrary(configuration: fresh)
    started = Date()
    let bootstrap = try await bootstrapping.sync(fetchThumbnails: false)
    let bootstrapSeconds = Date().timeIntervalSince(started)
    bootstrapping.close()
    fresh.storeURL = scratch.appendingPathComponent("listing")
    fresh.checkpointInterval = 0
    let listing = try await AssetLibrary(configuration: fresh)
    started = Date()
    let listed = try await listing.sync(mode: .full, fetchThumbnails: false)
    let listingSeconds = Date().timeIntervalSince(started)
    listing.close()
    let total = count + 3000

    return [
        BenchRow(
            name: "journal: cloudassets status on \(label) assets (start to exit)", value: status.seconds * 1000,
            unit: "ms", reference: "peak RSS MiB", referenceValue: Double(status.peakRSS) / 1_048_576, ratio: nil,
            target: "<= 200 ms, <= 200 MiB", met: status.seconds <= 0.2 && status.peakRSS <= 200 << 20),
        BenchRow(
            name: "journal: write a checkpoint of \(label) assets", value: checkpointSeconds, unit: "s",
            reference: "-", referenceValue: nil, ratio: nil, target: "report", met: wrote),
        BenchRow(
            name: "journal: bootstrap from checkpoint + 1,000 entries, \(label)", value: bootstrapSeconds, unit: "s",
            reference: "full listing + HEADs", referenceValue: listingSeconds, ratio: listingSeconds / bootstrapSeconds,
            target: "<= 30 s, >= 10x",
            met: bootstrapSeconds <= 30 && listingSeconds / bootstrapSeconds >= 10 && bootstrap.checkpointAssets > 0
                && bootstrap.inserted == total && listed.inserted == total),
        BenchRow(
            name: "journal: first sync of \(label) objects (list + store)", value: firstSeconds, unit: "s",
            reference: "rclone lsf -R", referenceValue: rcloneSeconds, ratio: rcloneSeconds / firstSeconds,
            target: ">= 0.33x", met: first.inserted == count && rcloneSeconds / firstSeconds >= 1.0 / 3),
        BenchRow(
            name: "journal: first sync of \(label) vs aws s3 ls --recursive", value: firstSeconds, unit: "s",
            reference: "aws s3 ls", referenceValue: awsSeconds, ratio: awsSeconds / firstSeconds, target: "report",
            met: awsListed == count),
        BenchRow(
            name: "journal: sync with nothing new, \(label) assets", value: idleSeconds, unit: "s",
            reference: "full re-sync", referenceValue: fullIdleSeconds, ratio: fullIdleSeconds / idleSeconds,
            target: "<= 0.3 s, <= 3 requests (\(idleRequests))",
            met: idleSeconds <= 0.3 && idleRequests <= 3 && idle.mode == .incremental && fullIdle.transactions == 0),
        BenchRow(
            name: "journal: sync after 1,000 remote changes, \(label)", value: changedSeconds, unit: "s",
            reference: "full sync, 1,000 new", referenceValue: fullChangedSeconds,
            ratio: fullChangedSeconds / changedSeconds, target: "<= 2 s",
            met: changedSeconds <= 2 && changed.inserted == 1000 && fullChanged.inserted == 1000),
    ]
}
