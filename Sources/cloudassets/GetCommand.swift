import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets get`: fetches originals (or a byte range of one) into the library, optionally copying them out.
struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Fetch assets (as they show, or --version original; a byte range of the original) into the library, or copy one out (-o).",
        discussion: outputPathHelp)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: AssetArguments
    @Flag(name: .long, help: "Allow downloading originals that are not local.") var network = false
    @Option(name: .long, help: "Only this byte range of the original: a-b (inclusive), as in HTTP.") var range: String?
    @Option(name: .shortAndLong, help: "Write the data to this file (- for standard output); one asset only.")
    var output: String?
    @Flag(
        name: .long,
        help: "Hand out images without their GPS tags (same bytes otherwise); also config key stripLocation.")
    var stripLocation = false
    @Option(help: "Which version: current (with edits, the default) or original.") var version: VersionArgument =
        .current
    @Flag(
        name: .long,
        help:
            "With -o FILE: also keep the original in the library (by default a copy not local yet is written straight from the bucket and the library keeps none)."
    )
    var keep = false
    @Option(
        name: .customLong("output-folder"),
        help:
            "Write each asset to a file in this existing folder, named by its key below originals/ (subfolders made as needed); never replaces a file, the library keeps no copy of what it downloads."
    )
    var outputFolder: String?

    func validate() throws {
        if outputFolder != nil && (output != nil || range != nil || keep) {
            throw ValidationError("--output-folder goes without -o, --range and --keep")
        }
    }

    func run() async throws {
        keepFreedMemoryForReuse()
        try await runReportingErrors {
            if output != nil && (selection.assets.count != 1 || selection.prefix != nil) {
                throw CLIError("-o takes exactly one asset")
            }
            if let output, output != "-" { _ = try validateOutputPath(output) }
            if keep && (output == nil || output == "-") { throw CLIError("--keep goes with -o FILE") }
            // Small originals are bound by round trips, not bandwidth: many of them come faster over 16
            // connections (rclone's common `--transfers 16`; 32 measured no faster, with twice the window below).
            let library = try await global.openLibrary(
                runsDownloads: false, stripLocation: stripLocation, minimumConnections: 16)
            defer { library.close() }
            let targets = try selection.resolve(in: library)
            let byteRange = try range.map(ByteRangeArgument.parse)
            // The output is checked (and its temporary file created) before anything is downloaded.
            let sink = try output.map { try OutputSink(output: $0, libraryFolder: library.configuration.storeURL) }
            let folder = try outputFolder.map {
                try OutputFolder(
                    path: $0, libraryFolder: library.configuration.storeURL,
                    originalsPrefix: library.configuration.layout.originalsPrefix)
            }
            let bars = ProgressBoard(quiet: global.quiet)
            try await withInterrupt {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // A window of requests, not one task per asset at once: memory stays bounded however many
                    // assets are asked for (~75 MiB peak for 2,000), while enough wait behind the library's
                    // connections to keep them busy as finished downloads wait for their group's sync (which waits
                    // for the disk: a window of 256 stalled under load) and are committed together.
                    let window = max(1, library.configuration.maxConnections) * 64
                    for (index, asset) in targets.enumerated() {
                        if index >= window { try await group.next() }
                        group.addTask {
                            var options = AssetRequestOptions()
                            options.isNetworkAccessAllowed = network
                            options.version = version.assetVersion
                            if !global.quiet {
                                // Quiet: no handler, so the downloader has no progress to hand over.
                                options.progressHandler = { _, _, _, progress in
                                    bars.update(name: asset.key, progress: progress)
                                }
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
                                try await library.streamData(for: asset, options: options) { try sink.write($0) }
                                bars.finish(name: asset.key)
                            } else if let folder {
                                let target = try folder.file(for: asset.key)
                                try await library.writeData(for: asset, toFile: target, options: options)
                                bars.finish(name: asset.key)
                                if !global.quiet { Terminal.shared.out("\(asset.localIdentifier)\t\(target.path)") }
                            } else if let sink, !keep, let staging = sink.stagingURL() {
                                // Written once, straight from the bucket when the original is not local; the
                                // library keeps no copy (`--keep` for one).
                                try await library.writeData(for: asset, toFile: staging, options: options)
                                bars.finish(name: asset.key)
                                try sink.adopt(staging)
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
            reportPeakMemoryIfAsked()
            bars.end()
        }
    }
}

/// `--version` of `get`.
enum VersionArgument: String, ExpressibleByArgument, CaseIterable {
    case current, original

    var assetVersion: AssetVersion { self == .current ? .current : .original }
}

/// For the memory tests (`CLOUDASSETS_REPORT_PEAK_RSS` set): prints the process's peak resident set (VmHWM) on
/// standard error as `peak RSS: N kB`.
func reportPeakMemoryIfAsked() {
    guard ProcessInfo.processInfo.environment["CLOUDASSETS_REPORT_PEAK_RSS"] != nil else { return }
    // try?: a diagnostic only: without /proc the figure prints as "?"
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? "VmHWM: ? kB"
    Terminal.shared.err("peak RSS: " + line.dropFirst("VmHWM:".count).trimmingCharacters(in: .whitespaces))
}

/// What `-o PATH` does with what is already there (``OutputTarget``), for the help of every command with `-o`.
let outputPathHelp = """
    -o PATH: a new file, or an existing regular file, is written beside it and renamed over it once complete \
    (an existing file keeps its permissions); a symbolic link is written through to the file it points to (a \
    link to nothing is refused); a file with other hard links is written in place, so every name sees the new \
    bytes (an interrupted write leaves it partly written); a character device (/dev/null) or a FIFO is opened \
    and written directly (a FIFO waits for its reader), and a write error such as a full disk fails the command. \
    Folders, block devices and paths inside the library are refused.
    """
