import AssetStore
@_spi(Benchmarks) import CloudAssets
import Foundation

/// Milliseconds taken by `body`.
private func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
}

/// The median of `runs` timings of `body`.
private func median(runs: Int, _ body: () throws -> Void) rethrows -> Double {
    var timings: [Double] = []
    for _ in 0..<runs { timings.append(try milliseconds(body)) }
    return timings.sorted()[runs / 2]
}

/// 100,000 listing rows as a sync would upsert them.
private func listing(count: Int) -> [AssetRecord] {
    (0..<count).map { (index: Int) -> AssetRecord in
        let key = "originals/\(index / 1000)/IMG_\(index).jpg"
        let modified = Date(timeIntervalSinceReferenceDate: Double(index))
        let created = Date(timeIntervalSinceReferenceDate: Double((index &* 7919) % 1_000_003))
        return AssetRecord(
            key: key, size: Int64(1_000_000 + index), etag: "etag\(index)", lastModified: modified,
            creationDate: created, mediaType: .image, pixelWidth: 4032, pixelHeight: 3024, orientation: 1)
    }
}

/// Store and change-details benchmarks (issue 3): fetch 100k sorted, upsert 100k, change details for one change
/// and for 10k removed / 10k inserted / 2k moved against the standard library's diff.
func runStoreBenchmarks() -> [BenchRow] {
    var rows: [BenchRow] = []
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ca-bench-store-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    do {
        let store = try AssetStore(folder: folder)
        let records = listing(count: 100_000)
        let upsert = try milliseconds {
            _ = try store.write { tx in for record in records { _ = try tx.upsert(record) } }
        }
        rows.append(
            BenchRow(
                name: "store: upsert 100k listing rows (1 txn)", value: upsert, unit: "ms", reference: "",
                referenceValue: nil, ratio: nil, target: "≤ 1000 ms", met: upsert <= 1000))
        let unchanged = try milliseconds {
            _ = try store.write { tx in for record in records { _ = try tx.upsert(record) } }
        }
        rows.append(
            BenchRow(
                name: "store: re-upsert 100k unchanged rows", value: unchanged, unit: "ms", reference: "",
                referenceValue: nil, ratio: nil, target: "(info)", met: true))
        let query = StoreQuery(predicate: .isHidden(false), sort: [StoreSort(.creationDate, ascending: false)])
        var fetched = 0
        let fetch = try median(runs: 5) { fetched = try store.fetchSorted(query).count }
        precondition(fetched == 100_000)
        rows.append(
            BenchRow(
                name: "store: fetch 100k ids sorted by creationDate", value: fetch, unit: "ms", reference: "",
                referenceValue: nil, ratio: nil, target: "≤ 50 ms", met: fetch <= 50))

        let one = try ChangeDetailsBenchmark.makeScenario(count: 100_000, removed: 0, inserted: 0, moved: 0)
        let oneTime = median(runs: 21) { _ = ChangeDetailsBenchmark.computeDetails(one) }
        rows.append(
            BenchRow(
                name: "details: 100k result, one asset changed", value: oneTime, unit: "ms", reference: "",
                referenceValue: nil, ratio: nil, target: "< 1 ms", met: oneTime < 1))

        let big = try ChangeDetailsBenchmark.makeScenario(count: 100_000, removed: 10_000, inserted: 10_000, moved: 2_000)
        let bigTime = median(runs: 5) { _ = ChangeDetailsBenchmark.computeDetails(big) }
        let stdlib = milliseconds { _ = ChangeDetailsBenchmark.standardLibraryDiff(big) }
        let ratio = stdlib / bigTime
        rows.append(
            BenchRow(
                name: "details: 100k, 10k rm / 10k ins / 2k mv", value: bigTime, unit: "ms",
                reference: "stdlib difference(from:).inferringMoves()", referenceValue: stdlib, ratio: ratio,
                target: "≤ 30 ms, ≥ 20× stdlib", met: bigTime <= 30 && ratio >= 20))
    } catch {
        rows.append(
            BenchRow(
                name: "store benchmarks failed: \(error)", value: 0, unit: "", reference: "", referenceValue: nil,
                ratio: nil, target: "", met: false))
    }
    return rows
}
