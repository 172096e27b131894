import ArgumentParser
import CloudAssets

/// `cloudassets unhide`: shows hidden assets again.
struct Unhide: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Show hidden assets again.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.setHidden(false, for: assets) }
    func run() async throws { try await runEdit() }
}
