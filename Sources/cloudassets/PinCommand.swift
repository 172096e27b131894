import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets pin`: records pins, then (unless `--no-wait`) downloads every pinned original not yet local.
struct Pin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pin assets: download their originals, never evict.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: AssetArguments
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
            let targets = try selection.resolve(in: library)
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
