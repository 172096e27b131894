import ArgumentParser
import CloudAssets

/// `cloudassets rm`: moves assets to the trash.
struct Remove: EditCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Move assets to the trash (restore brings them back; empty-trash purges).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var edit: EditOptions
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.deleteAssets(assets) }
    func run() async throws { try await runEdit() }
}
