import ArgumentParser

/// `cloudassets unpin`: removes pins; the originals stay until evicted.
struct Unpin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Unpin assets (their originals become evictable).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: AssetArguments

    func run() async throws {
        try await runLocalAssetCommand(global, selection, verb: "unpinned") { library, targets in
            try library.unpin(targets)
        }
    }
}
