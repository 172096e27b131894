import ArgumentParser
import CloudAssets

/// `cloudassets unfavorite`: unmarks favourites.
struct Unfavorite: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Unmark assets as favourites.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.setFavorite(false, for: assets) }
    func run() async throws { try await runEdit() }
}
