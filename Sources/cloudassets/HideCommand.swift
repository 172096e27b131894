import ArgumentParser
import CloudAssets

/// `cloudassets hide`: hides assets from default listings.
struct Hide: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Hide assets (left out of default listings).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var edit: EditOptions
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.setHidden(true, for: assets) }
    func run() async throws { try await runEdit() }
}
