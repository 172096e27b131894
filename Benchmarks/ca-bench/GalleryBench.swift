import CloudAssets
import FakeS3
import Foundation
import Gallery

#if canImport(Glibc)
    import Glibc
#endif

// `make bench-gallery` (CA_BENCH_ONLY=gallery): the web gallery with 100,000 assets in headless Chromium. This
// process builds the bucket (in memory, no HTTP) and the library, serves it, and makes the remote changes; the
// page is driven by Tests/browser/bench_gallery.py (Playwright), which answers over its stdin/stdout:
//   → "heap <bytes>", "ready <count> <ms>"        once the page shows the 100,000 assets
//   ← "wait <token>"  → "at <epoch ms> <count>"   when the page has applied the change with that token
//   ← "scroll"        → "scroll <median ms> <p95 ms> <max cells>"
//   ← "quit"

/// Runs only when asked for by name (`CA_BENCH_ONLY=gallery`): it needs Chromium and Playwright.
func runGalleryBenchmarks() async throws -> [BenchRow] {
    guard onlySections?.contains("gallery") == true else { return [] }
    let scratch = try makeScratch("gallery")
    defer { removeScratch(scratch) }
    let server = try FakeS3Server(
        configuration: FakeS3Configuration(accessKeyID: "bench", secretAccessKey: "bench-secret"))
    try await server.start()
    do {
        let rows = try await measureGallery(server: server, scratch: scratch)
        try await server.stop()
        return rows
    } catch {
        try? await server.stop()
        throw error
    }
}

/// A child process spoken to line by line.
private final class PagePilot: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer = Data()

    init(script: String, url: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, url]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// The next line's words (blocking: called off the cooperative pool).
    func readWords() throws -> [String] {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<end], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...end)
                return line.split(separator: " ").map(String.init)
            }
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw BenchError("bench_gallery.py ended early") }
            buffer.append(chunk)
        }
    }

    func next() async throws -> [String] {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try self.readWords() }) }.start()
        }
    }
}

/// The wall-clock time (ms since 1970) each change was committed, seen by an observer of the syncing library.
private final class CommitClock: LibraryChangeObserver {
    let times = TokenTimes()
    func libraryDidChange(_ change: LibraryChange) {
        times.set(change.token.rawValue, Date().timeIntervalSince1970 * 1000)
    }
}

private final class TokenTimes: @unchecked Sendable {
    private var values: [Int64: Double] = [:]
    private let lock = NSLock()
    func set(_ key: Int64, _ value: Double) {
        lock.lock()
        values[key] = value
        lock.unlock()
    }
    func get(_ key: Int64) -> Double? {
        lock.lock()
        defer { lock.unlock() }
        return values[key]
    }
}

private func measureGallery(server: FakeS3Server, scratch: URL) async throws -> [BenchRow] {
    let count = Int(ProcessInfo.processInfo.environment["CA_BENCH_GALLERY_ASSETS"] ?? "") ?? 100_000
    try server.createBucket("photos")
    let payload = Data("x".utf8)
    for i in 0..<count {
        try server.putObject(bucket: "photos", key: String(format: "originals/%06d.jpg", i), data: payload)
    }
    var configuration = AssetLibrary.Configuration(storeURL: scratch.appendingPathComponent("store"))
    configuration.endpoint = server.endpoint
    configuration.bucket = "photos"
    configuration.credentials = .static(accessKeyID: "bench", secretAccessKey: "bench-secret")
    configuration.metadataSource = .listingOnly
    configuration.fullSyncInterval = 0  // the changes below are made behind the journal's back
    configuration.checkpointInterval = 0
    configuration.maxIncrementalChangeCount = 10_000
    try FileManager.default.createDirectory(at: configuration.storeURL, withIntermediateDirectories: true)
    let served = try await AssetLibrary(configuration: configuration)
    defer { served.close() }
    _ = try await served.sync(fetchThumbnails: false)
    // The remote side: another library on the same folder (as `cloudassets sync` in another terminal).
    let syncer = try await AssetLibrary(configuration: configuration)
    defer { syncer.close() }
    let clock = CommitClock()
    syncer.register(clock)

    let gallery = try GalleryServer(library: served)
    try await gallery.start()
    defer { Task { await gallery.stop() } }
    let script = productsDirectory.deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/browser/bench_gallery.py").path
    let pilot = try PagePilot(script: script, url: gallery.url.absoluteString)
    defer { pilot.process.terminate() }

    let heapLine = try await pilot.next()
    guard heapLine.first == "heap", let heap = Double(heapLine[1]) else { throw BenchError("no heap: \(heapLine)") }
    let readyLine = try await pilot.next()
    guard readyLine.first == "ready", Int(readyLine[1]) == count, let loadMS = Double(readyLine[2]) else {
        throw BenchError("page not ready: \(readyLine)")
    }

    // One remote change of `size` assets: a third inserted, a third deleted, a third re-dated (re-put: newest).
    var next = count
    // Deleted and re-dated keys are the highest ones, beside the new keys: the full listing meets them late.
    var deletable = Array(0..<count)
    func change(size: Int) async throws -> Double {
        let inserts = max(1, size / 3)
        let deletes = size >= 3 ? size / 3 : 0
        let updates = size - inserts - deletes
        for _ in 0..<inserts {
            try server.putObject(bucket: "photos", key: String(format: "originals/%06d.jpg", next), data: payload)
            next += 1
        }
        for _ in 0..<deletes {
            try server.deleteObject(bucket: "photos", key: String(format: "originals/%06d.jpg", deletable.removeLast()))
        }
        for _ in 0..<updates {
            let key = String(format: "originals/%06d.jpg", deletable.removeLast())
            try server.putObject(bucket: "photos", key: key, data: Data("re-dated \(next)".utf8))
            next += 1
        }
        let summary = try await syncer.sync(mode: .full, fetchThumbnails: false)
        guard summary.transactions >= 1 else { throw BenchError("the sync found no change") }
        let token = syncer.currentChangeToken.rawValue
        pilot.send("wait \(token)")
        let at = try await pilot.next()
        guard at.first == "at", let shown = Double(at[1]), let observed = clock.times.get(token) else {
            throw BenchError("no answer for token \(token): \(at)")
        }
        // The commit's time: the earlier of the syncing library's observer call (just after the commit) and the
        // commit signal's modification time (written just after the commit; the file system's clock is coarse,
        // so it errs early). Either way the latency is never understated.
        var status = stat()
        let signal = configuration.storeURL.appendingPathComponent("library.commit-signal").path
        let signalled =
            stat(signal, &status) == 0
            ? Double(status.st_mtim.tv_sec) * 1000 + Double(status.st_mtim.tv_nsec) / 1_000_000 : observed
        let committed = min(observed, signalled)
        if ProcessInfo.processInfo.environment["CA_BENCH_GALLERY_TRACE"] == "1", at.count > 3, let sent = Double(at[3])
        {
            FileHandle.standardError.write(
                Data(
                    "gallery: \(size) change(s): sent after \(sent - committed) ms, shown after \(shown - committed) ms\n"
                        .utf8))
        }
        return shown - committed
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let runs = 7
    var one: [Double] = []
    var thousand: [Double] = []
    for _ in 0..<runs {
        one.append(try await change(size: 1))
        thousand.append(try await change(size: 1000))
    }
    pilot.send("scroll")
    let scroll = try await pilot.next()
    guard scroll.first == "scroll", let scrollMedian = Double(scroll[1]), let scrollP95 = Double(scroll[2]),
        let cells = Double(scroll[3])
    else { throw BenchError("no scroll figures: \(scroll)") }
    pilot.send("quit")
    pilot.process.waitUntilExit()

    let heapMiB = heap / 1_048_576
    let label = count >= 1000 ? "\(count / 1000)k" : "\(count)"
    return [
        BenchRow(
            name: "gallery: remote change of 1 asset → DOM (median of \(runs))", value: median(one), unit: "ms",
            reference: "max", referenceValue: one.max(), ratio: nil, target: "≤ 100 ms", met: median(one) <= 100),
        BenchRow(
            name: "gallery: remote change of 1,000 assets → DOM (median of \(runs))", value: median(thousand),
            unit: "ms", reference: "max", referenceValue: thousand.max(), ratio: nil, target: "≤ 500 ms",
            met: median(thousand) <= 500),
        BenchRow(
            name: "gallery: page JS heap with \(label) assets", value: heapMiB, unit: "MiB", reference: "load ms",
            referenceValue: loadMS, ratio: nil, target: "≤ 50 MiB", met: heapMiB <= 50),
        BenchRow(
            name: "gallery: scroll jump → frame rendered (median)", value: scrollMedian, unit: "ms",
            reference: "p95 ms", referenceValue: scrollP95, ratio: nil, target: "≤ 16.7 ms (60 fps)",
            met: scrollMedian <= 16.7),
        BenchRow(
            name: "gallery: cells in the DOM while scrolling (max)", value: cells, unit: "cells", reference: "-",
            referenceValue: nil, ratio: nil, target: "visible rows only (< 300)", met: cells < 300),
    ]
}
