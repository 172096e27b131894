extension AssetLibrary {
    /// What opening the library found and repaired after a crash or `kill -9`.
    public struct RecoveryReport: Sendable, Hashable {
        /// Assets recorded `full` whose verified file was missing or of the wrong size: moved down.
        public internal(set) var fullDowngraded = 0
        /// Assets recorded `partial` whose range file was missing or too short: moved down.
        public internal(set) var partialDowngraded = 0
        /// Assets recorded with a thumbnail whose file was missing: thumbnail presence cleared.
        public internal(set) var thumbnailsLost = 0
        /// Files in the library's folders that belonged to no asset (or to an old version): removed.
        public internal(set) var orphanFilesRemoved = 0
        /// Interrupted downloads (`.part` files) kept for resume.
        public internal(set) var partFilesKept = 0
        /// Files and folders in the library's folders that the library did not name (not its own): left alone.
        public internal(set) var foreignFilesKept = 0
        /// Imported assets not uploaded yet whose local original was gone (removed while the library was
        /// closed): removed from the catalog, as no copy of them is left anywhere.
        public internal(set) var importsLost = 0

        /// Nothing repaired (what a library that was not the first to open its folder reports).
        public init() {}
    }
}
