import AssetStore
import CloudAssets
import Essentials
import Foundation

// `make bench-details` (CA_BENCH_ONLY=scale): the journal section's change-details rows at a million assets
// (issue 16), without syncing a million-object bucket first. `CA_BENCH_DETAILS_OBJECTS` sets the size (default
// 1,000,000); `CA_BENCH_DETAILS_FETCH=1` adds the fetch of that many assets sorted by creation date (it first
// writes them into a store, a minute or so).

/// Runs only when asked for by name (`CA_BENCH_ONLY=scale`, or a name it contains).
func runDetailsScaleBenchmarks() throws -> [BenchRow] {
    guard let onlySections, onlySections.contains(where: { "details at scale".contains($0) }) else { return [] }
    let environment = ProcessInfo.processInfo.environment
    let count = environment["CA_BENCH_DETAILS_OBJECTS"].flatMap { Int($0) } ?? 1_000_000
    let label = count >= 1_000_000 ? "\(count / 1_000_000)M" : "\(count / 1000)k"
    let scale = Double(count) / 1_000_000
    var rows: [BenchRow] = []

    /// Best and median wall seconds of `runs` calls of `body`, and the least thread CPU seconds (unaffected by
    /// other processes competing for the cores).
    func timings(runs: Int, _ body: () -> Void) -> (best: Double, median: Double, cpu: Double) {
        var all: [Double] = []
        var cpu = Double.infinity
        for _ in 0..<runs {
            let start = now()
            let cpuStart = threadCPUSeconds()
            body()
            cpu = min(cpu, threadCPUSeconds() - cpuStart)
            all.append(now() - start)
        }
        all.sort()
        return (all[0], all[all.count / 2], cpu)
    }
    func cpu(_ seconds: Double) -> String { String(format: " [cpu %.2f ms]", seconds * 1000) }

    let oneChange = try ChangeDetailsBenchmark.makeScenario(count: count, removed: 0, inserted: 0, moved: 0)
    defer { removeScratch(oneChange.folder) }
    let one = timings(runs: 9) { _ = ChangeDetailsBenchmark.computeDetails(oneChange) }
    let oneCorrect = ChangeDetailsBenchmark.verify(oneChange)
    rows.append(
        BenchRow(
            name: "details at scale: \(label) result, one change (best of 9)" + cpu(one.cpu), value: one.best * 1000,
            unit: "ms",
            reference: "median", referenceValue: one.median * 1000, ratio: nil, target: "<= 2 ms",
            met: oneCorrect && one.best <= 0.002))

    // The result after one change, changed again: details on a result that was itself derived from a change.
    let chained = try ChangeDetailsBenchmark.makeChainedScenario(count: count)
    defer { removeScratch(chained.folder) }
    let second = timings(runs: 9) { _ = ChangeDetailsBenchmark.computeDetails(chained) }
    let chainedCorrect = ChangeDetailsBenchmark.verify(chained)
    rows.append(
        BenchRow(
            name: "details at scale: \(label), one change to a derived result (best of 9)" + cpu(second.cpu),
            value: second.best * 1000,
            unit: "ms", reference: "median", referenceValue: second.median * 1000, ratio: nil, target: "<= 2 ms",
            met: chainedCorrect && second.best <= 0.002))

    let large = try ChangeDetailsBenchmark.makeScenario(
        count: count, removed: count / 10, inserted: count / 10, moved: count / 50)
    defer { removeScratch(large.folder) }
    let big = timings(runs: 5) { _ = ChangeDetailsBenchmark.computeDetails(large) }
    let largeCorrect = ChangeDetailsBenchmark.verify(large)
    rows.append(
        BenchRow(
            name: "details at scale: \(label): 10% rm, 10% ins, 2% mv (best of 5)" + cpu(big.cpu),
            value: big.best * 1000, unit: "ms",
            reference: "DifferenceKit at 1M (issue)", referenceValue: 670 * scale, ratio: 0.670 * scale / big.best,
            target: String(format: "<= %.0f ms, >= 5x", 120 * scale),
            met: largeCorrect && big.best <= 0.120 * scale))
    rows.append(
        BenchRow(
            name: "details at scale: \(label): 10% rm, 10% ins, 2% mv (median of 5)", value: big.median * 1000,
            unit: "ms", reference: "-", referenceValue: nil, ratio: nil, target: "report", met: largeCorrect))

    if environment["CA_BENCH_DETAILS_FETCH"] == "1" {
        rows.append(try fetchRow(count: count, label: label, scale: scale))
    }
    return rows
}

/// CPU time of the calling thread, in seconds.
private func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Fetching `count` assets sorted by creation date into one fetch result (best of 3), from a store written here.
private func fetchRow(count: Int, label: String, scale: Double) throws -> BenchRow {
    let folder = try makeScratch("details-fetch")
    defer { removeScratch(folder) }
    let store = try AssetStore(folder: folder)
    var random = SplitMix64(seed: 7)
    _ = try store.write { tx in
        tx.reserveCapacity(count)
        for index in 0..<count {
            let date = Date(timeIntervalSinceReferenceDate: Double(random.next(below: 1_000_000_000)))
            _ = try tx.upsert(
                AssetRecord(
                    key: String(format: "originals/%07d.jpg", index), size: 1, etag: "e\(index)", lastModified: date,
                    creationDate: date, mediaType: .image, pixelWidth: 4, pixelHeight: 3))
        }
    }
    let options = FetchOptions(sortBy: [.creationDate()])
    var best = Double.infinity
    var fetched = 0
    for _ in 0..<3 {
        let start = now()
        fetched = FetchResult(store: store, options: options, sorted: try store.fetchSorted(options.storeQuery)).count
        best = min(best, now() - start)
    }
    return BenchRow(
        name: "details at scale: fetch \(label) sorted by creation date (best of 3)", value: best * 1000, unit: "ms",
        reference: "-", referenceValue: nil, ratio: nil, target: String(format: "<= %.0f ms", 150 * scale),
        met: fetched == count && best <= 0.150 * scale)
}
