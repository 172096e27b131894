import CloudAssets

/// Opens the library without needing the network, resolves the named assets, applies `body`, reports `verb`.
func runLocalAssetCommand(
    _ global: GlobalOptions, _ selection: AssetArguments, verb: String, _ body: (AssetLibrary, [Asset]) throws -> Void
) async throws {
    try await runReportingErrors {
        let library = try await global.openLibrary(requireRemote: false, runsDownloads: false)
        defer { library.close() }
        let targets = try selection.resolve(in: library)
        try body(library, targets)
        if !global.quiet { Terminal.shared.out("\(verb) \(targets.count) asset(s)") }
    }
}
