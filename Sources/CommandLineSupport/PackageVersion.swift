/// The CloudAssets package's version — the one place it is written. `cloudassets --version` and
/// `fake-s3 --version` print it, and a test checks that CHANGELOG.md agrees with it.
///
/// Releases are tagged `0.MINOR.PATCH` (no `v`). Between releases this is the next release's version with `-dev`
/// (`0.2.0-dev` after `0.1.0`) and CHANGELOG.md's top section is `[Unreleased]`; a release commit drops the
/// suffix, turns `[Unreleased]` into `[0.2.0] - <date>`, and is the commit the tag names.
public enum PackageVersion {
    /// The version, as `--version` prints it.
    public static let current = "0.1.0-dev"
}
