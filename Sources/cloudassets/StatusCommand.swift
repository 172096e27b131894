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
