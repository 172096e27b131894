import ArgumentParser

/// The assets a command acts on, each named by local identifier or key (see
/// ``resolveAssets(_:in:includingTrash:)``): the positional arguments of `get`, `pin`, `unpin`, `evict` and the
/// edit commands.
struct AssetArguments: ParsableArguments {
    @Argument(help: "Asset ids or keys.") var assets: [String]
}
