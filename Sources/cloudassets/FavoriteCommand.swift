import ArgumentParser
import CloudAssets

/// `cloudassets favorite`: marks assets as favourites.
struct Favorite: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Mark assets as favourites.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.setFavorite(true, for: assets) }
    func run() async throws { try await runEdit() }
}
