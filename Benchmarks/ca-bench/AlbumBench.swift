import AssetStore
import CloudAssets
import Essentials
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
            name: "albums: fetch every collection (10,001 albums with counts + 5 smart albums)",
            value: collections * 1000, unit: "ms", reference: "10,001 assets fetched by key",
            referenceValue: assetsByKey * 1000, ratio: assetsByKey / collections, target: "<= 20 ms",
            met: collections <= 0.020))
    return rows
}
