import ArgumentParser

/// What every ``EditCommand`` (`rm`, `restore`, `favorite`, `unfavorite`, `hide`, `unhide`) takes after the
/// global options: the assets, then `--no-wait`.
struct EditOptions: ParsableArguments {
    @OptionGroup var selection: AssetArguments
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
}
