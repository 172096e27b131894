import CloudAssets
import FakeS3
import Foundation

/// The library against the fake server (issue 5): catalog sync of 100,000 objects (listing + store) in
/// objects/s, a re-sync of the unchanged bucket (must write nothing), the time from an opportunistic request to
/// its degraded (thumbnail) answer, and opening it with 20,000 local thumbnails after a clean close and after a
/// crash.
func runLibraryBenchmarks() async throws -> [BenchRow] {
    let scratch = try makeScratch("library")
    defer { removeScratch(scratch) }
    let server = try FakeS3Server(
        configuration: FakeS3Configuration(accessKeyID: "bench", secretAccessKey: "bench-secret"))
    try await server.start()
    do {
        let rows = try await measureLibrary(server: server, scratch: scratch)
        try await server.stop()
        return rows
    } catch {
        try? await server.stop()
        throw error
    }
}

private func measureLibrary(server: FakeS3Server, scratch: URL) async throws -> [BenchRow] {
    try server.createBucket("photos")
    let count = 100_000
    let payload = Data("x".utf8)
    for i in 0..<count {
        try server.putObject(bucket: "photos", key: String(format: "originals/%06d.jpg", i), data: payload)
    }
    // Thumbnails in the bucket for the first 20,000: the library holds them locally after its thumbnail sync, for
    // the open rows below (an open's crash repair looks at every local file).
    let localThumbnails = 20_000
    for i in 0..<localThumbnails {
        try server.putObject(
            bucket: "photos", key: String(format: "thumbnails/%06d.jpg.jpg", i), data: Data(repeating: 1, count: 2048))
    }

    var configuration = AssetLibrary.Configuration(storeURL: scratch.appendingPathComponent("store"))

    configuration.endpoint = server.endpoint

    configuration.bucket = "photos"

    configuration.credentials = .static(accessKeyID: "bench", secretAccessKey: "bench-secret")
    configuration.metadataSource = .listingOnly
    try FileManager.default.createDirectory(at: configuration.storeURL, withIntermediateDirectories: true)
    let library = try await AssetLibrary(configuration: configuration)
    defer { library.close() }

    let t0 = now()
    let first = try await library.sync(fetchThumbnails: false)
    let syncSeconds = now() - t0
    let token = library.currentChangeToken
    let t1 = now()
    // A full listing of the unchanged bucket (an automatic sync would read only the journal: see "journal").
    let second = try await library.sync(mode: .full, fetchThumbnails: false)
    let resyncSeconds = now() - t1
    let unchanged = library.currentChangeToken == token && second.transactions == 0

    // Opportunistic request of an asset whose thumbnail is local: time to the degraded answer.
    let fetched = try await library.sync(fetchThumbnails: true).thumbnailsFetched
    var latencies: [Double] = []
    if let asset = try library.asset(forKey: "originals/000000.jpg") {
        for _ in 0..<20 {
            var options = AssetRequestOptions()
            options.deliveryMode = .opportunistic
            options.isNetworkAccessAllowed = false
            let start = now()
            let elapsed: Double = await withCheckedContinuation { continuation in
                library.requestData(for: asset, options: options) { _, info in
                    if info.isDegraded { continuation.resume(returning: now() - start) }
                }
            }
            latencies.append(elapsed)
        }
    }
    latencies.sort()
    let median = latencies.isEmpty ? .nan : latencies[latencies.count / 2] * 1000

    // Opening the library with its 20,000 local thumbnails (`cloudassets status`, process start to exit, median of
    // three): after a clean close (the marker this library leaves as it closes, idle) and as a crash leaves it
    // (no marker: the open checks every local file).
    library.close()
    let marker = configuration.storeURL.appendingPathComponent(CleanClose.fileName).path
    let cli = productsDirectory.appendingPathComponent("cloudassets").path
    func statusSeconds(afterCrash: Bool) throws -> (seconds: Double, markerFound: Bool) {
        var times: [Double] = []
        var found = true
        for _ in 0..<3 {
            if afterCrash { try? FileManager.default.removeItem(atPath: marker) }
            found = found && (afterCrash || FileManager.default.fileExists(atPath: marker))
            times.append(try timedRun(cli, ["status", "--store", configuration.storeURL.path]).seconds)
        }
        return (times.sorted()[1], found)
    }
    let clean = try statusSeconds(afterCrash: false)
    let crashed = try statusSeconds(afterCrash: true)

    return [
        BenchRow(
            name: "library: sync 100k objects (list + store)", value: Double(first.listed) / syncSeconds,
            unit: "obj/s", reference: "seconds", referenceValue: syncSeconds, ratio: nil,
            target: "report", met: first.inserted == count),
        BenchRow(
            name: "library: full re-sync of unchanged 100k", value: resyncSeconds, unit: "s", reference: "writes",
            referenceValue: Double(second.transactions), ratio: nil, target: "0 writes, 0 changes",
            met: unchanged),
        BenchRow(
            name: "library: degraded answer (local thumbnail)", value: median, unit: "ms", reference: "-",
            referenceValue: nil, ratio: nil, target: "< 1 ms", met: median < 1),
        BenchRow(
            name: "library: status, 100k assets, 20k local thumbnails, after a clean close",
            value: clean.seconds * 1000, unit: "ms", reference: "after a crash (every file checked)",
            referenceValue: crashed.seconds * 1000, ratio: crashed.seconds / clean.seconds, target: "<= 200 ms",
            met: fetched == localThumbnails && clean.markerFound && clean.seconds <= 0.2),
    ]
}
