import ArgumentParser

/// `cloudassets evict`: removes local originals (refused for a pinned asset).
struct Evict: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove local originals (back to thumbnail).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: AssetArguments

    func run() async throws {
        try await runLocalAssetCommand(global, selection, verb: "evicted") { library, targets in
            for asset in targets { try library.evict(asset) }
        }
    }
}
