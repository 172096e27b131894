import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// The crash suite: the `cloudassets` binary syncs, downloads, reads ranges and evicts as a child process and is
/// killed with SIGKILL at random moments (seeded); after each kill the library is reopened in this process and every
/// invariant is checked, then the interrupted work is resumed and the server's log proves that verified bytes were
/// not fetched again. Short form in `make test` (a few kills); at least 50 with `CLOUDASSETS_SOAK=full`.
@Suite(.heavy, .serialized) struct CrashSuiteTests {
    enum Phase: CaseIterable { case sync, download, range, evict }

    struct Tally: CustomStringConvertible {
        var kills: [Phase: Int] = [:]
        var finishedBeforeKill = 0
        var resumedFromOffset = 0
        var restartedFromZero = 0
        var rangeReadsServedLocally = 0
        var recovery = AssetLibrary.RecoveryReport()

        var description: String {
            let k = Phase.allCases.map { "\($0)=\(kills[$0, default: 0])" }.joined(separator: " ")
            return "kills \(kills.values.reduce(0, +)) (\(k)), finished before the kill \(finishedBeforeKill), "
                + "downloads resumed at an offset \(resumedFromOffset), restarted from zero \(restartedFromZero), "
                + "re-reads served locally \(rangeReadsServedLocally); recovery: \(recovery.fullDowngraded) full and "
                + "\(recovery.partialDowngraded) partial downgraded, \(recovery.orphanFilesRemoved) orphans removed, "
                + "\(recovery.partFilesKept) part files kept"
        }
    }

    static let bigSize = 3 << 20
    static let bytesPerSecond = 3 << 20

    @Test func killNineAtRandomMomentsLeavesEveryAssetConsistentAndResumesWithoutRefetching() async throws {
        let scale = SoakScale.current
        print("crash suite: seed \(scale.seed) (replay with CLOUDASSETS_SOAK_SEED=\(scale.seed))")
        var rng = SeededGenerator(seed: scale.seed)
        let cli = try ChildCLI.locate()
        let bucket = try await ReliabilityBucket.start()
        let scratch = try ScratchFolder("crash")
        defer { scratch.remove() }
        let store = scratch.url.appendingPathComponent("library", isDirectory: true)
        let logs = scratch.url.appendingPathComponent("logs", isDirectory: true)
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)

        for i in 0..<6 { try bucket.put("originals/big-\(i).bin", rng.bytes(Self.bigSize)) }
        var smallCount = 0
        func addSmallObjects(_ n: Int, _ rng: inout SeededGenerator) throws {
            for _ in 0..<n {
                let key = "originals/small-\(smallCount).bin"
                try bucket.put(key, rng.bytes(Int.random(in: 1...20_000, using: &rng)))
                try bucket.server.putObject(
                    bucket: ReliabilityBucket.bucket, key: "thumbnails/small-\(smallCount).bin.jpg",
                    data: rng.bytes(300))
                smallCount += 1
            }
        }
        try addSmallObjects(10, &rng)
        // Slow bodies so that a kill lands mid-body; slow HEADs so that a kill lands mid-sync.
        bucket.server.faults.add(
            .bandwidthLimit(bytesPerSecond: Self.bytesPerSecond), keyPattern: "originals/big-*", method: "GET")
        bucket.server.faults.add(.latency(milliseconds: 15), method: "HEAD")

        let configuration = bucket.configuration(folder: store)
        do {
            let library = try await AssetLibrary(configuration: configuration)
            try await library.sync()
            library.close()
        }

        let wantedKills = scale.pick(short: 5, full: 60)
        var tally = Tally()
        var iterations = 0
        let deadline = Date().addingTimeInterval(scale.timeBudget)
        while (tally.kills.values.reduce(0, +) < wantedKills || tally.kills[.download, default: 0] == 0)
            && iterations < wantedKills * 3 + 6 && Date() < deadline
        {
            // The short form visits every phase once before drawing at random; until a download has been killed
            // (the run must have one: a download that finished first proves nothing about resuming), downloads.
            let phase =
                iterations < Phase.allCases.count
                ? Phase.allCases[iterations]
                : tally.kills[.download, default: 0] == 0 ? .download : Phase.allCases.randomElement(using: &rng)!
            iterations += 1
            let killed: Bool
            switch phase {
            case .sync:
                try addSmallObjects(4, &rng)
                killed = try await killDuringSync(cli, store: store, bucket: bucket, logs: logs, rng: &rng)
            case .download:
                killed = try await killDuringDownload(
                    cli, configuration: configuration, bucket: bucket, logs: logs, rng: &rng, tally: &tally)
            case .range:
                killed = try await killDuringRangedRead(
                    cli, configuration: configuration, bucket: bucket, logs: logs, rng: &rng, tally: &tally)
            case .evict:
                killed = try await killDuringEviction(
                    cli, configuration: configuration, bucket: bucket, logs: logs, rng: &rng)
            }
            if killed { tally.kills[phase, default: 0] += 1 } else { tally.finishedBeforeKill += 1 }

            // Reopen after every run, killed or not, and check every invariant.
            print("crash suite: iteration \(iterations) \(phase) killed=\(killed)")
            let library = try await AssetLibrary(configuration: configuration)
            defer { library.close() }
            tally.recovery.fullDowngraded += library.recovery.fullDowngraded
            tally.recovery.partialDowngraded += library.recovery.partialDowngraded
            tally.recovery.orphanFilesRemoved += library.recovery.orphanFilesRemoved
            tally.recovery.partFilesKept += library.recovery.partFilesKept
            let report = try LibraryInvariants(library: library, reference: .versions(bucket)).check()
            #expect(report.corrupt == 0, "after a kill during \(phase): \(report.violations)")
            #expect(report.violations.isEmpty, "after a kill during \(phase): \(report.violations)")
        }
        await bucket.stop()
        print("crash suite (\(scale.isFull ? "full" : "short"), seed \(scale.seed)): \(tally)")
        #expect(tally.kills.values.reduce(0, +) >= wantedKills)
        #expect(tally.kills[.download, default: 0] > 0)
    }

    // MARK: Phases

    /// `cloudassets sync`, killed after a random number of HEAD requests (or at once).
    func killDuringSync(
        _ cli: ChildCLI, store: URL, bucket: ReliabilityBucket, logs: URL, rng: inout SeededGenerator
    ) async throws -> Bool {
        let heads = Int.random(in: 0...4, using: &rng)
        let logStart = bucket.server.requestLog.entries().count
        let child = try cli.start(["sync"], store: store, bucket: bucket, logFolder: logs)
        await waitUntil(timeout: 20) {
            !child.isRunning
                || bucket.server.requestLog.entries().dropFirst(logStart).filter { $0.method == "HEAD" }.count >= heads
        }
        let killed = child.isRunning
        killNine(child)
        return killed
    }

    /// `cloudassets pin KEY` on a big original, killed once its `.part` file holds a random share of it;
    /// then the download is resumed in-process and must continue from the bytes on disk.
    func killDuringDownload(
        _ cli: ChildCLI, configuration: AssetLibrary.Configuration, bucket: ReliabilityBucket, logs: URL,
        rng: inout SeededGenerator, tally: inout Tally
    ) async throws -> Bool {
        let (asset, files) = try await pickBig(configuration, rng: &rng, notFull: true)
        let part = files.original(id: asset.rowID, key: asset.key).path + ".part"
        let threshold = Int64.random(in: 1..<Int64(Self.bigSize), using: &rng)
        let child = try cli.start(
            ["pin", asset.key], store: configuration.storeURL, bucket: bucket, logFolder: logs)
        await waitUntil(timeout: 20) { !child.isRunning || fileSize(part) >= threshold }
        let killed = child.isRunning
        killNine(child)
        let onDisk = fileSize(part)

        // Resume in-process: the GET must start where the verified bytes end.
        let library = try await AssetLibrary(configuration: configuration)
        defer { library.close() }
        let before = try #require(try library.asset(withLocalIdentifier: asset.localIdentifier))
        guard before.availability != .full else { return killed }
        let logStart = bucket.gets(asset.key).count
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        let url = try await library.requestFile(for: asset, options: options)
        #expect(try Data(contentsOf: url) == bucket.current(asset.key))
        guard let resumed = bucket.gets(asset.key).dropFirst(logStart).first else {
            // No request at all: every byte was already in the .part (killed between the last write and the
            // rename), so the download was verified and finished from disk.
            #expect(onDisk == Int64(Self.bigSize), "finished without a GET with only \(onDisk) bytes on disk")
            tally.resumedFromOffset += 1
            return killed
        }
        let offset = rangeStart(resumed.rangeHeader)
        if offset > 0 { tally.resumedFromOffset += 1 } else { tally.restartedFromZero += 1 }
        if killed && onDisk > 0 {
            #expect(
                offset > 0,
                "the resumed GET asked for \(resumed.rangeHeader ?? "everything") with \(onDisk) bytes on disk")
        }
        return killed
    }

    /// `cloudassets get --network --range a-b KEY`, killed a random moment after its GET started; every range the
    /// reopened library records is then read again without a request.
    func killDuringRangedRead(
        _ cli: ChildCLI, configuration: AssetLibrary.Configuration, bucket: ReliabilityBucket, logs: URL,
        rng: inout SeededGenerator, tally: inout Tally
    ) async throws -> Bool {
        let (asset, _) = try await pickBig(configuration, rng: &rng, notFull: true)
        let start = Int64.random(in: 0..<Int64(Self.bigSize - 1), using: &rng)
        let end = min(Int64(Self.bigSize) - 1, start + Int64.random(in: 1...(1 << 20), using: &rng))
        let logStart = bucket.gets(asset.key).count
        let delay = UInt64.random(in: 0...250, using: &rng)
        let child = try cli.start(
            ["get", "--network", "--range", "\(start)-\(end)", asset.key], store: configuration.storeURL,
            bucket: bucket, logFolder: logs)
        await waitUntil(timeout: 20) { !child.isRunning || bucket.gets(asset.key).count > logStart }
        try await Task.sleep(nanoseconds: delay * 1_000_000)  // the random kill moment, not a synchronisation
        let killed = child.isRunning
        killNine(child)
        if !killed && child.terminationStatus != 0 && bucket.gets(asset.key).count == logStart {
            Issue.record("cloudassets get --network --range exited \(child.terminationStatus) before any request")
        }

        let library = try await AssetLibrary(configuration: configuration)
        defer { library.close() }
        let reopened = try #require(try library.asset(withLocalIdentifier: asset.localIdentifier))
        let expected = try #require(try bucket.current(asset.key))
        for range in reopened.partialRanges {
            let before = bucket.gets(asset.key).count
            let data = try await library.read(reopened, range: range, isNetworkAccessAllowed: false)
            #expect(data == expected[Int(range.lowerBound)..<Int(range.upperBound)])
            #expect(bucket.gets(asset.key).count == before, "verified range \(range) was fetched again")
            tally.rangeReadsServedLocally += 1
        }
        return killed
    }

    /// `cloudassets evict` of every full original, killed a random moment after it started.
    func killDuringEviction(
        _ cli: ChildCLI, configuration: AssetLibrary.Configuration, bucket: ReliabilityBucket, logs: URL,
        rng: inout SeededGenerator
    ) async throws -> Bool {
        var ids: [String] = []
        do {
            let library = try await AssetLibrary(configuration: configuration)
            defer { library.close() }
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            let small = try library.fetchAssets().filter { $0.key.contains("small-") }.prefix(4)
            for asset in small { _ = try await library.requestFile(for: asset, options: options) }
            ids = try library.fetchAssets(FetchOptions(predicate: .availability([.full]))).map(\.localIdentifier)
        }
        let delay = UInt64.random(in: 0...120, using: &rng)
        let child = try cli.start(["evict"] + ids, store: configuration.storeURL, bucket: bucket, logFolder: logs)
        try await Task.sleep(nanoseconds: delay * 1_000_000)  // the random kill moment, not a synchronisation
        let killed = child.isRunning
        killNine(child)
        return killed
    }

    /// A big asset (evicting it first when `notFull` and it is full), and the library's file layout.
    func pickBig(_ configuration: AssetLibrary.Configuration, rng: inout SeededGenerator, notFull: Bool) async throws
        -> (Asset, LocalFiles)
    {
        let library = try await AssetLibrary(configuration: configuration)
        defer { library.close() }
        let bigs = try library.fetchAssets().filter { $0.key.contains("big-") }
        var asset = try #require(bigs.randomElement(using: &rng))
        if asset.isPinned { try library.unpin([asset]) }
        if notFull && asset.availability == .full {
            try library.evict([asset])
            asset = try #require(try library.asset(withLocalIdentifier: asset.localIdentifier))
        }
        return (asset, library.cache.files)
    }
}

func fileSize(_ path: String) -> Int64 {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
}

/// The first byte a `Range: bytes=N-…` header asks for (0 without a header).
func rangeStart(_ header: String?) -> Int64 {
    guard let header, header.hasPrefix("bytes=") else { return 0 }
    return Int64(header.dropFirst("bytes=".count).split(separator: "-").first ?? "") ?? 0
}
