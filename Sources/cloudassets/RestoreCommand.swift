import ArgumentParser
import CloudAssets

/// `cloudassets restore`: takes assets out of the trash.
struct Restore: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Take assets out of the trash.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var edit: EditOptions
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.restoreAssets(assets) }
    func run() async throws { try await runEdit() }

    /// An asset another library purged from the trash while this one restored it (`empty-trash` there) is gone:
    /// the restore is reported as failed for it (exit 8), never as made.
    func verify(_ assets: [Asset], in library: AssetLibrary) throws {
        let purged = try assets.filter { try library.asset(withLocalIdentifier: $0.localIdentifier) == nil }
        guard !purged.isEmpty else { return }
        let named = purged.prefix(5).map { "\($0.localIdentifier) (\($0.key))" }.joined(separator: ", ")
        let more = purged.count > 5 ? ", …" : ""
        throw CLIError(
            "could not restore \(purged.count) of \(assets.count) asset(s): another library emptied the trash "
                + "meanwhile and they are deleted: \(named)\(more)",
            status: .changedRemotely)
    }
}
