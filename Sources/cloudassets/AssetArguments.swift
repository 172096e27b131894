import ArgumentParser
import CloudAssets

/// The assets a command acts on: named by local identifier or key (see ``resolveAssets(_:in:includingTrash:)``),
/// and/or every asset under a key prefix — the selection of `get`, `pin`, `unpin`, `evict` and the edit commands.
struct AssetArguments: ParsableArguments {
    @Argument(help: "Asset ids or keys.") var assets: [String] = []
    @Option(
        help: """
            Also every asset whose key starts with this (the originals prefix may be left out; "" for all), in key \
            order.
            """)
    var prefix: String?

    func validate() throws {
        if assets.isEmpty && prefix == nil {
            throw ValidationError("name the assets by id or key, or select them with --prefix")
        }
    }

    /// The key prefix a `--prefix` value names, for every command that takes one (`ls` too): the value itself when
    /// it starts with the originals prefix, else the value below it (`2015/01/` is `originals/2015/01/`).
    static func keyPrefix(_ prefix: String, in library: AssetLibrary) -> String {
        let originals = library.configuration.layout.originalsPrefix
        return prefix.hasPrefix(originals) ? prefix : originals + prefix
    }

    /// The named assets, then those under the prefix (each once).
    func resolve(in library: AssetLibrary, includingTrash: Bool = false) throws -> [Asset] {
        var result = try resolveAssets(assets, in: library, includingTrash: includingTrash)
        guard let prefix else { return result }
        var options = FetchOptions(sortBy: [.key()])
        options.predicate = .keyPrefix(Self.keyPrefix(prefix, in: library))
        options.includeHiddenAssets = true
        options.includeTrashedAssets = includingTrash
        var named = Set(result.map(\.localIdentifier))
        for asset in try library.fetchAssets(options) where named.insert(asset.localIdentifier).inserted {
            result.append(asset)
        }
        return result
    }
}
