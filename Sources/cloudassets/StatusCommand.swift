import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets status`: asset counts by state, cache use, uploads, trash and the last sync.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Cache use, states and last sync.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(requireRemote: false, runsDownloads: false)
            defer { library.close() }
            let assetCounts = try library.assetCounts()
            let trash = assetCounts.trashed
            let uploads = try library.uploads
            let pinned = assetCounts.pinned
            // Every state, also those no asset is in: `states` always has the four keys.
            let counts = Dictionary(
                uniqueKeysWithValues: AssetAvailability.allCases.map { ($0.name, assetCounts.byAvailability[$0] ?? 0) })
            let usage = try library.cacheUsage()
            let lastSync = library.lastSync?.date
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
                    var metadataPending: Int
                }
                let out = Out(
                    assets: assetCounts.total, states: counts, pinned: pinned, cacheBytes: usage.bytes,
                    cacheLimit: library.configuration.cacheSizeLimit,
                    lastSync: lastSync.map { ISO8601DateFormatter().string(from: $0) }, trash: trash,
                    uploads: [
                        "pending": uploads.pending, "uploading": uploads.uploading, "failed": uploads.failed,
                        "unsharedEdits": uploads.unsharedEdits,
                    ], metadataPending: assetCounts.metadataPending)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                Terminal.shared.out(String(decoding: try encoder.encode(out), as: UTF8.self))
            } else {
                Terminal.shared.out("assets:     \(assetCounts.total) (\(pinned) pinned)")
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
                if assetCounts.metadataPending > 0 {
                    // A first sync cut short: the assets are there, their dates and sizes are the listing's.
                    Terminal.shared.out(
                        "metadata:   \(assetCounts.metadataPending) asset(s) still to read (the next sync reads them)")
                }
                Terminal.shared.out(
                    "last sync:  \(lastSync.map { ISO8601DateFormatter().string(from: $0) } ?? "never")")
            }
        }
    }
}
