import Foundation

// The hidden child mode the images section measures (its peak RSS is then that process's own).
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "thumbnail" {
    exit(runThumbnailCommand(Array(CommandLine.arguments.dropFirst(2))))
}
// The hidden child mode the edits section measures.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "render" {
    exit(runRenderCommand(Array(CommandLine.arguments.dropFirst(2))))
}

// `make bench`: one release build, one run, one table. Every figure is measured beside its reference in
// this same process (or by a tool this process runs), and printed as a ratio with the target.

/// `CA_BENCH_ONLY=downloader,library` runs only the named sections (for profiling one of them).
let onlySections: Set<String>? = ProcessInfo.processInfo.environment["CA_BENCH_ONLY"].map {
    Set($0.split(separator: ",").map(String.init))
}

func section(_ name: String, _ body: () async throws -> [BenchRow]) async -> [BenchRow] {
    if let onlySections, !onlySections.contains(where: { name.contains($0) }) { return [] }
    FileHandle.standardError.write(Data("ca-bench: \(name)…\n".utf8))
    do {
        return try await body()
    } catch {
        return [
            BenchRow(
                name: "\(name): FAILED (\(error))", value: .nan, unit: "", reference: "", referenceValue: nil,
                ratio: nil, target: "", met: false)
        ]
    }
}

// The large download runs first so that the peak RSS it reports is the downloader's, not earlier groups'.
var rows: [BenchRow] = []
rows += await section("large download") { try await runTransferBenchmarks(large: true, small: false) }
// The large upload's peak RSS is measured from a reset of VmHWM, so it may follow the download.
rows += await section("large upload") { try await runUploadBenchmarks() }
rows += await section("small downloads") { try await runTransferBenchmarks(large: false, small: true) }
rows += await section("store and change details") { runStoreBenchmarks() }
rows += await section("fake server") { try await runServerBenchmarks() }
rows += await section("library") { try await runLibraryBenchmarks() }
rows += await section("import") { try await runImportBenchmarks() }
// Only with CA_BENCH_ONLY=scale (`make bench-details`): the journal's change-details rows, without the bucket.
rows += await section("details at scale") { try runDetailsScaleBenchmarks() }
rows += await section("journal") { try await runJournalBenchmarks() }
rows += await section("first hour") { try await runFirstHourBenchmarks() + runFirstHourMemoryBenchmarks() }
rows += await section("first-hour thumbnails") { try await runFirstHourThumbnailBenchmarks() }
rows += await section("images") { try await runImageBenchmarks() }
rows += await section("edits") { try runEditBenchmarks() }
rows += await section("video") { try await runVideoBenchmarks() }
rows += await section("stranger's album") { try await runStrangerAlbumBenchmarks() }
// Only with CA_BENCH_ONLY=albums: a million-asset catalog with 10,000 albums (issue 42's scale rows).
rows += await section("albums") {
    try await runAlbumBenchmarks() + runAlbumSyncBenchmarks() + runLargeAlbumDeltaBenchmarks()
}
// Against Ceph's RADOS Gateway (scripts/ceph-rgw.sh): no rows when the cluster cannot start.
rows += await section("rgw") { try await runRGWBenchmarks() }
// Only with CA_BENCH_ONLY=gallery (`make bench-gallery`): it needs Chromium and Playwright.
rows += await section("gallery") { try await runGalleryBenchmarks() }

removeFinishedScratch()
printTable(rows)
exit(rows.allSatisfy(\.met) ? 0 : 1)
