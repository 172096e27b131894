import CloudAssets

/// Finds assets by local identifier or key (with or without the originals prefix); assets in the trash only
/// when `includingTrash` (else one named is refused as in the trash, with how to restore it).
func resolveAssets(_ names: [String], in library: AssetLibrary, includingTrash: Bool = false) throws -> [Asset] {
    try names.map { name in
        var trashed: Asset?
        if let asset = try library.asset(withLocalIdentifier: name) {
            if includingTrash || !asset.isTrashed { return asset }
            trashed = asset
        }
        for key in [name, library.configuration.layout.originalsPrefix + name] where trashed == nil {
            if let asset = try library.asset(forKey: key) {
                if includingTrash || !asset.isTrashed { return asset }
                trashed = asset
            }
        }
        if let trashed {
            throw CLIError(
                "asset \(name) is in the trash: restore it first (`cloudassets restore \(trashed.localIdentifier)`)")
        }
        throw CLIError("unknown asset \(name): no asset has that id or key (run `cloudassets sync` first?)")
    }
}
