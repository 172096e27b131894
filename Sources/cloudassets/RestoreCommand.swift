import ArgumentParser
import CloudAssets

/// `cloudassets restore`: takes assets out of the trash.
struct Restore: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Take assets out of the trash.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.restoreAssets(assets) }
    func run() async throws { try await runEdit() }
}
