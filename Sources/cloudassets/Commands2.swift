import ArgumentParser
import CloudAssets
import Foundation

struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch assets' originals (or a byte range) into the library, and optionally copy them out.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(name: .long, help: "Allow downloading originals that are not local.") var network = false
    @Option(name: .long, help: "Only this byte range of the original: a-b (inclusive), as in HTTP.") var range: String?
    @Option(name: .shortAndLong, help: "Write the data to this file (- for standard output); one asset only.")
    var output: String?

    func run() async throws {
        try await runReportingErrors {
            if output != nil && assets.count != 1 { throw CLIError("-o takes exactly one asset") }
            if let output, output != "-" { _ = try validateOutputPath(output) }
            let library = try await global.openLibrary(runsDownloads: false)
            defer { library.close() }
            let targets = try resolveAssets(assets, in: library)
            let byteRange = try range.map(ByteRangeArgument.parse)
            // The output is checked (and its temporary file created) before anything is downloaded.
            let sink = try output.map { try OutputSink(output: $0, libraryFolder: library.configuration.storeURL) }
            let bars = ProgressBoard(quiet: global.quiet)
            try await withInterrupt {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for asset in targets {
                        group.addTask {
                            var options = AssetRequestOptions()
                            options.isNetworkAccessAllowed = network
                            options.progressHandler = { _, _, _, progress in
                                bars.update(name: asset.key, progress: progress)
                            }
                            if network && byteRange == nil { bars.waiting(name: asset.key) }
                            if let byteRange {
                                // In pieces: memory stays bounded whatever the range's size.
                                var read: Int64 = 0
                                for start in stride(from: byteRange.lowerBound, to: byteRange.upperBound, by: 8 << 20) {
                                    let piece = start..<min(start + (8 << 20), byteRange.upperBound)
                                    let data = try await library.read(
                                        asset, range: piece, isNetworkAccessAllowed: network)
                                    try sink?.write(data)
                                    read += Int64(data.count)
                                    if data.count < piece.count { break }  // the end of the original
                                }
                                if sink == nil && !global.quiet {
                                    Terminal.shared.out("\(asset.localIdentifier)\t\(read) bytes read")
                                }
                            } else if let sink, output == "-" {
                                // Streamed as the bytes arrive.
                                try await library.requestData(for: asset, options: options) { try sink.write($0) }
                                bars.finish(name: asset.key)
                            } else {
                                let url = try await library.requestFile(for: asset, options: options)
                                bars.finish(name: asset.key)
                                if let sink {
                                    try sink.copy(from: url)
                                } else if !global.quiet {
                                    Terminal.shared.out("\(asset.localIdentifier)\tfull\t\(url.path)")
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            try sink?.commit()
            if ProcessInfo.processInfo.environment["CLOUDASSETS_REPORT_PEAK_RSS"] != nil {
                // For the memory tests: the process's peak resident set (VmHWM).
                let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
                let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? "VmHWM: ? kB"
                Terminal.shared.err("peak RSS: " + line.dropFirst("VmHWM:".count).trimmingCharacters(in: .whitespaces))
            }
            bars.end()
        }
    }
}

enum ByteRangeArgument {
    /// `a-b` (inclusive, as in HTTP) → `a..<b+1`.
    static func parse(_ text: String) throws -> Range<Int64> {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let a = Int64(parts[0]), let b = Int64(parts[1]), a >= 0, b >= a else {
            throw CLIError("range must be a-b with 0 <= a <= b, not \(text)")
        }
        return a..<(b + 1)
    }
}

/// Live progress bars, one per active download; plain lines when not on a terminal. A download that has
/// received nothing for ``stallReport`` says so (on its bar, or once in a line): the library keeps retrying a
/// stalled transfer, and the user sees that it is waiting rather than a frozen bar.
final class ProgressBoard: @unchecked Sendable {  // every field is guarded by `lock`
    static let stallReport: TimeInterval = 5
    private let lock = NSLock()
    private var active: [String: AssetRequestProgress] = [:]
    private var lastBytes: [String: (bytes: Int64, at: Date, reported: Bool)] = [:]
    private var order: [String] = []
    private var timer: (any DispatchSourceTimer)?
    let quiet: Bool

    init(quiet: Bool) {
        self.quiet = quiet
        guard !quiet else { return }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in self?.checkStalls() }
        timer.resume()
        self.timer = timer
    }

    deinit { timer?.cancel() }

    /// Redraws stalled bars (on a terminal) or prints one line per stall (otherwise).
    private func checkStalls() {
        let now = Date()
        lock.lock()
        var newlyStalled: [(String, Int)] = []
        for (name, last) in lastBytes where !last.reported && now.timeIntervalSince(last.at) >= Self.stallReport {
            lastBytes[name]?.reported = true
            newlyStalled.append((name, Int(now.timeIntervalSince(last.at))))
        }
        let stalled = !lastBytes.filter { now.timeIntervalSince($0.value.at) >= Self.stallReport }.isEmpty
        let lines = drawLocked(now: now)
        lock.unlock()
        if Terminal.shared.isInteractive {
            if stalled { Terminal.shared.live(lines) }
        } else {
            for (name, seconds) in newlyStalled {
                Terminal.shared.err("\(name): no data for \(seconds) s; waiting for the server (retrying on a stall)")
            }
        }
    }

    func update(name: String, progress: AssetRequestProgress) {
        guard !quiet else { return }
        lock.lock()
        if !order.contains(name) { order.append(name) }
        active[name] = progress
        if lastBytes[name]?.bytes != progress.bytesReceived {
            lastBytes[name] = (progress.bytesReceived, Date(), false)
        }
        let lines = drawLocked(now: Date())
        lock.unlock()
        Terminal.shared.live(lines)
    }

    /// Shows (on a terminal) that a request is waiting for the server, until its first bytes arrive.
    func waiting(name: String) {
        guard !quiet else { return }
        lock.lock()
        if !order.contains(name) { order.append(name) }
        if lastBytes[name] == nil { lastBytes[name] = (0, Date(), false) }
        let lines = drawLocked(now: Date())
        lock.unlock()
        Terminal.shared.live(lines)
    }

    private func drawLocked(now: Date) -> [String] {
        order.map { n in
            let quietFor = lastBytes[n].map { now.timeIntervalSince($0.at) } ?? 0
            let stall = quietFor >= Self.stallReport ? "  (no data for \(Int(quietFor)) s, waiting)" : ""
            guard let p = active[n] else { return "waiting for the server…  \(n)\(stall)" }
            return Format.progressBar(
                name: n, received: p.bytesReceived, total: p.totalBytes, bytesPerSecond: p.bytesPerSecond) + stall
        }
    }

    func finish(name: String) {
        lock.lock()
        let last = active.removeValue(forKey: name)
        lastBytes[name] = nil
        order.removeAll { $0 == name }
        lock.unlock()
        if !quiet && !Terminal.shared.isInteractive, let last {
            Terminal.shared.err("downloaded \(name) (\(Format.bytes(last.totalBytes ?? last.bytesReceived)))")
        }
    }

    func end() {
        timer?.cancel()
        Terminal.shared.endLive()
    }
}

struct Pin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pin assets: download their originals, never evict.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(
        name: .long,
        help: "Record the pins and return: the downloads run with the next pin (without --no-wait) or watch.")
    var noWait = false

    func run() async throws {
        try await runReportingErrors {
            // Without waiting, the pins are recorded and the downloads left to the next `pin` or `watch`: none is
            // started only to be cancelled as this process exits.
            let library = try await global.openLibrary(runsDownloads: false)
            defer { library.close() }
            let targets = try resolveAssets(assets, in: library)
            try library.pin(targets)
            if !noWait {
                // Every pinned original not yet local: these, and earlier pins recorded with --no-wait.
                var everything = FetchOptions()
                everything.includeHiddenAssets = true
                let waiting = try library.fetchAssets(everything).filter { $0.isPinned && $0.availability != .full }
                let bars = ProgressBoard(quiet: global.quiet)
                try await withInterrupt {
                    for asset in waiting {
                        var options = AssetRequestOptions()
                        options.isNetworkAccessAllowed = true
                        options.progressHandler = { _, _, _, progress in
                            bars.update(name: asset.key, progress: progress)
                        }
                        _ = try await library.requestFile(for: asset, options: options)
                        bars.finish(name: asset.key)
                    }
                }
                bars.end()
            }
            if !global.quiet {
                Terminal.shared.out(
                    "pinned \(targets.count) asset(s)"
                        + (noWait ? "; their downloads run with the next pin (without --no-wait) or watch" : ""))
            }
        }
    }
}

/// Opens the library without needing the network, resolves the named assets, applies `body`, reports `verb`.
func runLocalAssetCommand(
    _ global: GlobalOptions, _ names: [String], verb: String, _ body: (AssetLibrary, [Asset]) throws -> Void
) async throws {
    try await runReportingErrors {
        let library = try await global.openLibrary(requireRemote: false, runsDownloads: false)
        defer { library.close() }
        try body(library, try resolveAssets(names, in: library))
        if !global.quiet { Terminal.shared.out("\(verb) \(names.count) asset(s)") }
    }
}

struct Unpin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Unpin assets (their originals become evictable).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]

    func run() async throws {
        try await runLocalAssetCommand(global, assets, verb: "unpinned") { library, targets in
            try library.unpin(targets)
        }
    }
}

struct Evict: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove local originals (back to thumbnail).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]

    func run() async throws {
        try await runLocalAssetCommand(global, assets, verb: "evicted") { library, targets in
            for asset in targets { try library.evict(asset) }
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Cache use, states and last sync.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(requireRemote: false, runsDownloads: false)
            defer { library.close() }
            var everything = FetchOptions()
            everything.includeHiddenAssets = true
            let all = try library.fetchAssets(everything)
            let trash = try library.fetchAssets(
                FetchOptions(predicate: .isTrashed(true), includeHiddenAssets: true, includeTrashedAssets: true)
            ).count
            let uploads = try library.uploads
            // Every state, also those no asset is in: `states` always has the four keys.
            var counts = Dictionary(uniqueKeysWithValues: AssetAvailability.allCases.map { ($0.name, 0) })
            var pinned = 0
            for a in all {
                counts[a.availability.name, default: 0] += 1
                if a.isPinned { pinned += 1 }
            }
            let usage = try library.cacheUsage()
            let lastSync = library.persistedLastSync
            if json {
                struct Out: Encodable {
                    var assets: Int
                    var states: [String: Int]
                    var pinned: Int
                    var cacheBytes: Int64
                    var cacheLimit: Int64?
                    var lastSync: String?
                    var trash: Int
                    var uploads: [String: Int]
                }
                let out = Out(
                    assets: all.count, states: counts, pinned: pinned, cacheBytes: usage.bytes,
                    cacheLimit: library.configuration.cacheSizeLimit,
                    lastSync: lastSync.map { ISO8601DateFormatter().string(from: $0) }, trash: trash,
                    uploads: [
                        "pending": uploads.pending, "uploading": uploads.uploading, "failed": uploads.failed,
                        "unsharedEdits": uploads.unsharedEdits,
                    ])
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                Terminal.shared.out(String(decoding: try encoder.encode(out), as: UTF8.self))
            } else {
                Terminal.shared.out("assets:     \(all.count) (\(pinned) pinned)")
                for state in AssetAvailability.allCases {
                    Terminal.shared.out(
                        "  \(state.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(counts[state.name] ?? 0)")
                }
                let limit = library.configuration.cacheSizeLimit.map { " of \(Format.bytes($0))" } ?? ""
                Terminal.shared.out("cache:      \(Format.bytes(usage.bytes))\(limit)")
                Terminal.shared.out("queue:      \(library.activeDownloadCount) download(s) in this process")
                Terminal.shared.out(
                    "uploads:    \(uploads.pending) pending, \(uploads.uploading) uploading, \(uploads.failed) failed, "
                        + "\(uploads.unsharedEdits) edit(s) to send")
                Terminal.shared.out("trash:      \(trash)")
                Terminal.shared.out(
                    "last sync:  \(lastSync.map { ISO8601DateFormatter().string(from: $0) } ?? "never")")
            }
        }
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print change notifications as JSON lines until interrupted (syncs every --interval seconds).",
        discussion: """
            A sync that fails is reported as one line on stderr and retried after 1 s, 2 s, 4 s … (at most \
            5 minutes); when a sync succeeds again, "sync recovered after N failure(s)" is printed on stderr.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "Seconds between syncs (0: never sync, only watch).") var interval: Double = 30
    /// The first retry delay after a failed sync; for tests, so that retries come fast.
    @Option(name: .customLong("retry-base"), help: .hidden) var retryBase: Double = 1

    func validate() throws {
        guard interval >= 0, interval.isFinite else { throw ValidationError("--interval must be 0 or more seconds") }
        guard retryBase > 0, retryBase.isFinite else { throw ValidationError("--retry-base must be positive") }
    }

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(requireRemote: interval > 0)
            defer { library.close() }
            let stream = library.changes
            if !global.quiet {
                // From here on every commit — this process's or another's — is printed.
                Terminal.shared.err("watching \(library.configuration.storeURL.path): one JSON line per change")
            }
            let backoff = SyncBackoff(base: retryBase)
            try await withInterrupt {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await change in stream {
                            Terminal.shared.out(ChangeJSON.line(for: change))
                        }
                    }
                    if interval > 0 {
                        group.addTask {
                            var failures = 0
                            while !Task.isCancelled {
                                let delay: Double
                                do {
                                    try await library.sync()
                                    if failures > 0 {
                                        Terminal.shared.err(
                                            "sync recovered after \(failures) failure\(failures == 1 ? "" : "s")")
                                    }
                                    failures = 0
                                    delay = interval
                                } catch {
                                    if Task.isCancelled { throw CancellationError() }
                                    failures += 1
                                    delay = backoff.delay(afterFailures: failures)
                                    Terminal.shared.err(
                                        "error: sync failed (failure \(failures)): \(UserMessage.describe(error)); "
                                            + "retrying in \(SyncBackoff.format(delay))")
                                }
                                try await Task.sleep(for: .seconds(delay))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }
}

/// The delay before retrying a failed sync: `base`, then doubling after each further failure in a row, never
/// more than `cap` (5 minutes). Pure: the delay depends only on the number of failures.
struct SyncBackoff: Sendable {
    var base: Double
    var cap: Double = 300

    func delay(afterFailures failures: Int) -> Double {
        min(cap, base * pow(2, Double(min(max(failures - 1, 0), 30))))
    }

    static func format(_ seconds: Double) -> String {
        seconds < 10 ? String(format: "%.1fs", seconds) : "\(Int(seconds.rounded()))s"
    }
}
