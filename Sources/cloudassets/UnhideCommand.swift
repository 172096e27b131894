import ArgumentParser
import CloudAssets

/// `cloudassets unhide`: shows hidden assets again.
struct Unhide: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Show hidden assets again.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var edit: EditOptions
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.setHidden(false, for: assets) }
    func run() async throws { try await runEdit() }
}
