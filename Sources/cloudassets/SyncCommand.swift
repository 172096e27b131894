import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets sync`: lists the bucket and updates the catalog (then fetches thumbnails, unless told not to).
struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the bucket and update the catalog.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Do not fetch thumbnails after listing.") var noThumbnails = false
    @Flag(
        name: .long,
        help: "Move the library to this endpoint/bucket (it refuses another one otherwise); matching files stay.")
    var rebind = false

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(runsDownloads: false, rebind: rebind)
            defer { library.close() }
            if !global.quiet {
                // On a terminal, a line that says what the command is waiting for (replaced by the summary).
                Terminal.shared.live([
                    "syncing s3://\(library.configuration.bucket) at "
                        + "\(library.configuration.endpoint?.absoluteString ?? "AWS")…"
                ])
            }
            let summary = try await withInterrupt { try await library.sync(fetchThumbnails: !noThumbnails) }
            Terminal.shared.endLive()
            for skipped in summary.skipped {
                Terminal.shared.err("skipped \(skipped.key): \(skipped.reason)")
            }
            if !global.quiet {
                Terminal.shared.out(
                    "synced: \(summary.listed) listed, \(summary.inserted) new, \(summary.contentChanged) changed, "
                        + "\(summary.metadataChanged) metadata, \(summary.removed) removed, "
                        + "\(summary.thumbnailsFetched) thumbnails, \(summary.sidecarsRead) shared edits merged, "
                        + "\(summary.purged) purged from the trash")
            }
        }
    }
}
