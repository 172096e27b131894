import ArgumentParser
import CloudAssets

/// `cloudassets favorite`: marks assets as favourites.
struct Favorite: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Mark assets as favourites.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var edit: EditOptions
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.setFavorite(true, for: assets) }
    func run() async throws { try await runEdit() }
}
