import ArgumentParser
import CloudAssets

/// `cloudassets unfavorite`: unmarks favourites.
struct Unfavorite: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Unmark assets as favourites.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var edit: EditOptions
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.setFavorite(false, for: assets) }
    func run() async throws { try await runEdit() }
}
