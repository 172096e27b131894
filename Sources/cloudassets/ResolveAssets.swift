import CloudAssets

/// Finds assets by local identifier or key (with or without the originals prefix); assets in the trash only
/// when `includingTrash`.
func resolveAssets(_ names: [String], in library: AssetLibrary, includingTrash: Bool = false) throws -> [Asset] {
    try names.map { name in
        if let asset = try library.asset(withLocalIdentifier: name), includingTrash || !asset.isTrashed { return asset }
        for key in [name, library.configuration.layout.originalsPrefix + name] {
            if let asset = try library.asset(forKey: key), includingTrash || !asset.isTrashed { return asset }
        }
        throw CLIError("unknown asset \(name): no asset has that id or key (run `cloudassets sync` first?)")
    }
}
