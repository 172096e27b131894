import ArgumentParser
import CloudAssets

/// `cloudassets restore`: takes assets out of the trash.
struct Restore: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Take assets out of the trash.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var edit: EditOptions
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.restoreAssets(assets) }
    func run() async throws { try await runEdit() }
}
