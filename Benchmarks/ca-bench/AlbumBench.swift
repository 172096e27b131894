import AssetStore
import CloudAssets
import Essentials
import FakeS3
import Foundation

// Issue 42's scale rows (CA_BENCH_ONLY=albums): a synthetic library of CA_BENCH_ALBUM_ASSETS assets (default
// 1,000,000) with 10,000 albums of 10 assets and one of 100,000, in an offline library (no bucket: the rows measure
// the catalog). Writing the library takes about a minute for a million assets.

/// Runs only when asked for by name (`CA_BENCH_ONLY=albums`).
func runAlbumBenchmarks() async throws -> [BenchRow] {
    guard let onlySections, onlySections.contains(where: { "albums".contains($0) }) else { return [] }
    let environment = ProcessInfo.processInfo.environment
    let count = max(200_000, environment["CA_BENCH_ALBUM_ASSETS"].flatMap { Int($0) } ?? 1_000_000)
    let bigSize = 100_000
    let smallAlbums = 10_000
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ca-bench-albums-\(UUID().uuidString)")
    defer { removeScratch(folder) }
    var configuration = AssetLibrary.Configuration(storeURL: folder)
    configuration.bucket = "bench"
    configuration.credentials = .anonymous
    configuration.networkPolicy = .offline
    configuration.startsBackgroundTransfers = false
    let library = try await AssetLibrary(configuration: configuration)
    defer { library.close() }

    // The assets, in batches (one transaction each).
    let store = try AssetStore(folder: folder)
    var random = SplitMix64(seed: 42)
    let batch = 50_000
    for start in stride(from: 0, to: count, by: batch) {
        _ = try store.write { tx in
            for index in start..<min(count, start + batch) {
                _ = try tx.insert(
                    AssetRecord(
                        key: String(format: "originals/%07d.jpg", index), size: 1000, etag: "e\(index)",
                        lastModified: Date(timeIntervalSince1970: 1_700_000_000),
                        creationDate: Date(timeIntervalSince1970: 1_600_000_000 + Double(random.next(below: 1 << 27))),
                        mediaType: .image, pixelWidth: 10, pixelHeight: 10))
            }
        }
    }
    let all = try library.fetchAssets(FetchOptions(limit: bigSize + smallAlbums * 10))
    let members = Array(all.prefix(bigSize))
    var big: CollectionPlaceholder!
    try await library.performChanges { requests in
        big = requests.createAlbum(title: "Big")
        requests.addAssets(members, to: big)
    }
    try await library.performChanges { requests in
        for index in 0..<smallAlbums {
            let album = requests.createAlbum(title: String(format: "Album %05d", index))
            let start = bigSize + index * 10
            requests.addAssets(Array(all[start..<(start + 10)]), to: album)
        }
    }
    let album = try library.collection(withLocalIdentifier: big.localIdentifier)!
    var rows: [BenchRow] = []
    let label = "\(count / 1000)k-asset library"

    func median(_ runs: Int, _ body: () throws -> Void) rethrows -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            let start = now()
            try body()
            times.append(now() - start)
        }
        return times.sorted()[runs / 2]
    }

    // 1. The first page of the 100,000-asset album: the fetch and its first 256 assets read.
    let firstPage = try median(9) {
        let result = try library.fetchAssets(in: album)
        for index in 0..<256 { _ = result[index].key }
    }
    let byDate = try median(9) {
        let result = try library.fetchAssets(FetchOptions(sortBy: [.creationDate()], limit: bigSize))
        for index in 0..<256 { _ = result[index].key }
    }
    rows.append(
        BenchRow(
            name: "albums: first page of a 100k-asset album (fetch + 256 assets; \(label))", value: firstPage * 1000,
            unit: "ms", reference: "the library's first 100k by date, same page", referenceValue: byDate * 1000,
            ratio: byDate / firstPage, target: "<= 5 ms", met: firstPage <= 0.005))

    // 2. Change details for one insertion into it (live change, as an observer gets it).
    let before = try library.fetchAssets(in: album)
    let outsider = all[bigSize + smallAlbums * 10 - 1]
    // The change as an observer receives it (the library's own change stream).
    let stream = library.changes
    try await library.performChanges { $0.insertAssets([outsider], into: album, at: bigSize / 2) }
    var iterator = stream.makeAsyncIterator()
    guard let change = await iterator.next() else { throw CocoaError(.featureUnsupported) }
    var details: FetchResultChangeDetails?
    let detailsTime = median(9) { details = change.details(for: before) }
    let correct = details?.insertedIndexes == IndexSet([bigSize / 2]) && details?.removedIndexes?.isEmpty == true
    let beforeIDs = before.map(\.localIdentifier)
    let afterIDs = details?.fetchResultAfterChanges.map(\.localIdentifier) ?? []
    let stdlib = median(3) { _ = afterIDs.difference(from: beforeIDs).inferringMoves().count }
    rows.append(
        BenchRow(
            name: "albums: change details, one insertion into the 100k album", value: detailsTime * 1000, unit: "ms",
            reference: "stdlib difference(from:).inferringMoves()", referenceValue: stdlib * 1000,
            ratio: stdlib / detailsTime, target: "<= 2 ms", met: correct && detailsTime <= 0.002))

    // 3. Every collection: 10,001 albums with their counts, and the smart albums.
    let collections = try median(9) {
        _ = try library.fetchAllAlbums()
        _ = try library.fetchSmartAlbums()
    }
    let assetsByKey = try median(9) { _ = try library.fetchAssets(FetchOptions(sortBy: [.key()], limit: 10_001)) }
    rows.append(
        BenchRow(
            name: "albums: fetch every collection (10,001 albums with counts + 6 smart albums)",
            value: collections * 1000, unit: "ms", reference: "10,001 assets fetched by key",
            referenceValue: assetsByKey * 1000, ratio: assetsByKey / collections, target: "<= 20 ms",
            met: collections <= 0.020))
    return rows
}

// `CA_BENCH_ONLY=albums` also: 1,000 album operations made on one library (100 albums, 2,000 assets in the
// bundled server, in memory, in this process) applied by another library's incremental sync, beside a full sync
// of the same bucket by a new library.
func runAlbumSyncBenchmarks() async throws -> [BenchRow] {
    guard let onlySections, onlySections.contains(where: { "albums".contains($0) }) else { return [] }
    let scratch = try makeScratch("albums-sync")
    defer { removeScratch(scratch) }
    let server = try await albumBenchServer(objects: 2_000)
    defer { Task { try? await server.stop() } }
    func open(_ name: String, checkpoints: Bool = false) async throws -> AssetLibrary {
        try await openAlbumBenchLibrary(name, in: scratch, on: server, checkpoints: checkpoints)
    }
    let writer = try await open("writer")
    let reader = try await open("reader")
    defer {
        writer.close()
        reader.close()
    }
    try await writer.sync(fetchThumbnails: false)
    try await reader.sync(fetchThumbnails: false)
    var albums: [CollectionPlaceholder] = []
    try await writer.performChanges { changes in
        albums = (0..<100).map { changes.createAlbum(title: "Album \($0)") }
    }
    try await writer.sync(fetchThumbnails: false)
    try await reader.sync(fetchThumbnails: false)
    // 1,000 operations: adds at random places, removals and moves, each its own change.
    let assets = Array(try writer.fetchAssets(FetchOptions(sortBy: [.key()])))
    var random = SplitMix64(seed: 9)
    for operation in 0..<1_000 {
        let album = albums[Int(random.next(below: 100))]
        let asset = assets[Int(random.next(below: UInt64(assets.count)))]
        try await writer.performChanges { changes in
            if operation % 5 == 4 {
                changes.removeAssets([asset], from: album)
            } else {
                changes.insertAssets([asset], into: album, at: Int(random.next(below: 8)))
            }
        }
    }
    try await writer.sync(fetchThumbnails: false)
    var start = now()
    let incremental = try await reader.sync(fetchThumbnails: false)
    let applied = now() - start
    // The reference: a new library's first sync of the same bucket (its listing and every album's document).
    let fresh = try await open("fresh")
    defer { fresh.close() }
    start = now()
    _ = try await fresh.sync(fetchThumbnails: false)
    let full = now() - start
    // Checkpoint bytes per membership: a library that writes the bucket's checkpoint (its albums included), beside
    // the documents' own bytes; then a new library bootstrapping from it, beside the fresh library's listing.
    let checkpointer = try await open("checkpointer", checkpoints: true)
    defer { checkpointer.close() }
    let wrote = try await checkpointer.sync(fetchThumbnails: false).wroteCheckpoint
    let partBytes = try server.keys(bucket: "photos", prefix: "checkpoints/").filter { $0.contains("/collections-") }
        .reduce(0) { $0 + (try server.objectData(bucket: "photos", key: $1)?.count ?? 0) }
    let documentBytes = try server.keys(bucket: "photos", prefix: "collections/")
        .reduce(0) { $0 + (try server.objectData(bucket: "photos", key: $1)?.count ?? 0) }
    let memberships = try albums.reduce(0) { total, album in
        total + (try writer.collection(withLocalIdentifier: album.localIdentifier)?.estimatedAssetCount ?? 0)
    }
    let booting = try await open("booting", checkpoints: true)
    defer { booting.close() }
    start = now()
    let boot = try await booting.sync(fetchThumbnails: false)
    let booted = now() - start
    /// Whether `other` shows every album as the writer does, with the same assets in the same order.
    func sameAlbums(_ other: AssetLibrary) throws -> Bool {
        try albums.allSatisfy { album in
            guard let mine = try writer.collection(withLocalIdentifier: album.localIdentifier),
                let theirs = try other.collection(withLocalIdentifier: album.localIdentifier)
            else { return false }
            return try writer.fetchAssets(in: mine).map(\.key) == other.fetchAssets(in: theirs).map(\.key)
        }
    }
    let agree = try sameAlbums(reader)
    let bootAgrees = try sameAlbums(booting)
    return [
        BenchRow(
            name: "albums: 1,000 album operations of another library applied by an incremental sync "
                + "(\(incremental.collectionsRead) documents read)",
            value: applied, unit: "s", reference: "a new library's first sync of it", referenceValue: full,
            ratio: full / applied, target: "<= 0.5 s", met: agree && incremental.mode == .incremental && applied <= 0.5),
        BenchRow(
            name: "albums: checkpoint bytes per album membership (\(memberships) in \(albums.count) albums, zlib)",
            value: Double(partBytes) / Double(max(1, memberships)), unit: "B",
            reference: "their documents' own bytes",
            referenceValue: Double(documentBytes) / Double(max(1, memberships)),
            ratio: Double(documentBytes) / Double(max(1, partBytes)), target: "(reported)", met: wrote && partBytes > 0),
        BenchRow(
            name: "albums: a new library's bootstrap from that checkpoint "
                + "(\(boot.checkpointAssets) assets, \(boot.collectionsRead) documents read)",
            value: booted, unit: "s", reference: "a new library's first sync, every document read",
            referenceValue: full,
            ratio: full / booted, target: "(info)", met: bootAgrees && boot.checkpointAssets > 0),
    ]
}

// `CA_BENCH_ONLY=albums` also: a 100,000-asset album shared through the bucket (100,000 objects in the bundled
// server, in memory, in this process), then one insertion and one move made in it on one library: the bytes that go
// up (a delta) beside the album's document (what each change rewrote before deltas), and another library's
// incremental sync of it beside that library's first read of the whole album.
func runLargeAlbumDeltaBenchmarks() async throws -> [BenchRow] {
    let scratch = try makeScratch("albums-delta")
    defer { removeScratch(scratch) }
    let count = 100_000
    let server = try await albumBenchServer(objects: count)
    defer { Task { try? await server.stop() } }
    let writer = try await openAlbumBenchLibrary("writer", in: scratch, on: server)
    let reader = try await openAlbumBenchLibrary("reader", in: scratch, on: server)
    defer {
        writer.close()
        reader.close()
    }
    try await writer.sync(fetchThumbnails: false)
    try await reader.sync(fetchThumbnails: false)
    let assets = try writer.fetchAssets(FetchOptions(sortBy: [.key()]))
    var made: CollectionPlaceholder!
    try await writer.performChanges { changes in
        made = changes.createAlbum(title: "Everything")
        changes.addAssets(Array(assets.prefix(count - 1)), to: made)
    }
    try await writer.sync(fetchThumbnails: false)
    var start = now()
    try await reader.sync(fetchThumbnails: false)
    let wholeRead = now() - start
    let id = made.localIdentifier
    let documentBytes = try server.objectData(bucket: "photos", key: "collections/\(id).json")?.count ?? 0
    guard let album = try writer.collection(withLocalIdentifier: id) else { throw BenchError("no album \(id)") }
    try await writer.performChanges { changes in
        changes.insertAssets([assets[count - 1]], into: album, at: 50_000)
        changes.moveAssets(in: album, at: IndexSet([10]), to: 90_000)
    }
    start = now()
    try await writer.sync(fetchThumbnails: false)
    let sent = now() - start
    let deltas = try server.keys(bucket: "photos", prefix: "collections/\(id)/")
    let deltaBytes = try deltas.reduce(0) { $0 + (try server.objectData(bucket: "photos", key: $1)?.count ?? 0) }
    start = now()
    let read = try await reader.sync(fetchThumbnails: false)
    let applied = now() - start
    let readerAlbum = try reader.collection(withLocalIdentifier: id)
    let agree =
        try readerAlbum.map { try reader.fetchAssets(in: $0).map(\.key) } == writer.fetchAssets(in: album).map(\.key)
    return [
        BenchRow(
            name: "albums: one insertion and one move in a shared 100k-asset album, bytes sent (\(deltas.count) delta)",
            value: Double(deltaBytes), unit: "B", reference: "the album's document (rewritten per change before)",
            referenceValue: Double(documentBytes), ratio: Double(documentBytes) / Double(max(1, deltaBytes)),
            target: "<= 1 KiB", met: deltas.count == 1 && deltaBytes <= 1024),
        BenchRow(
            name: "albums: that change sent by the writer's sync (\(Int(sent * 1000)) ms) and applied by another "
                + "library's incremental sync",
            value: applied, unit: "s", reference: "that library's first read of the album", referenceValue: wholeRead,
            ratio: wholeRead / applied, target: "(info)", met: agree && read.collectionsRead == 1),
    ]
}

/// A bundled server, started in this process, whose bucket `photos` holds `count` one-byte originals
/// (`originals/000000.jpg`…).
private func albumBenchServer(objects count: Int) async throws -> FakeS3Server {
    let server = try FakeS3Server(
        configuration: FakeS3Configuration(accessKeyID: "bench", secretAccessKey: "bench-secret"))
    try await server.start()
    try server.createBucket("photos")
    for index in 0..<count {
        try server.putObject(bucket: "photos", key: String(format: "originals/%06d.jpg", index), data: Data("x".utf8))
    }
    return server
}

/// Library `name` (a folder of `scratch`) on `server`'s bucket, following its journal, without background
/// transfers; writing checkpoints only when `checkpoints`.
private func openAlbumBenchLibrary(_ name: String, in scratch: URL, on server: FakeS3Server, checkpoints: Bool = false)
    async throws -> AssetLibrary
{
    var configuration = AssetLibrary.Configuration(storeURL: scratch.appendingPathComponent(name))
    configuration.endpoint = server.endpoint
    configuration.bucket = "photos"
    configuration.credentials = .static(accessKeyID: "bench", secretAccessKey: "bench-secret")
    configuration.fullSyncInterval = 24 * 3600
    configuration.checkpointInterval = checkpoints ? 24 * 3600 : 0
    configuration.startsBackgroundTransfers = false
    return try await AssetLibrary(configuration: configuration)
}
