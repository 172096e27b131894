import CloudAssets

/// Opens the library without needing the network, resolves the named assets, applies `body`, reports `verb`.
func runLocalAssetCommand(
    _ global: GlobalOptions, _ names: [String], verb: String, _ body: (AssetLibrary, [Asset]) throws -> Void
) async throws {
    try await runReportingErrors {
        let library = try await global.openLibrary(requireRemote: false, runsDownloads: false)
        defer { library.close() }
        try body(library, try resolveAssets(names, in: library))
        if !global.quiet { Terminal.shared.out("\(verb) \(names.count) asset(s)") }
    }
}
