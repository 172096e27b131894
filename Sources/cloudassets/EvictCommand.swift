import ArgumentParser
import CloudAssets

/// `cloudassets evict`: removes local originals (refused for a pinned asset). An import not yet in the bucket
/// keeps its original (its only copy), and the command says so.
struct Evict: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove local originals (back to thumbnail).",
        discussion: """
            Prints "evicted N asset(s)". An import whose upload has not finished keeps its original (the only copy) \
            and is counted apart: "kept N asset(s) not yet in the bucket" (the next sync uploads it; evict it then).
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: AssetArguments

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(requireRemote: false, runsDownloads: false)
            defer { library.close() }
            let targets = try selection.resolve(in: library)
            for asset in targets { try library.evict([asset]) }
            // What the library kept: an original still local whose upload has not finished.
            let kept = try library.fetchAssets(withLocalIdentifiers: targets.map(\.localIdentifier)).filter {
                $0.uploadState != .uploaded && [.full, .partial].contains($0.originalAvailability)
            }
            guard !global.quiet else { return }
            Terminal.shared.out("evicted \(targets.count - kept.count) asset(s)")
            if !kept.isEmpty { Terminal.shared.out("kept \(kept.count) asset(s) not yet in the bucket") }
        }
    }
}
