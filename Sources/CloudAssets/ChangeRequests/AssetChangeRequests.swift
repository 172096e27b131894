import AssetStore
public import Foundation

/// The changes one ``AssetLibrary/performChanges(_:)`` call makes, recorded by its closure and applied together
/// in one transaction (PhotoKit's change requests inside `performChanges`).
///
/// Use it only inside the closure it was handed to; requests are applied in the order they were made.
public final class AssetChangeRequests {
    enum Edit {
        case favorite(Bool)
        case hidden(Bool)
        case title(String?)
        case keywords([String])
        case trash
        case restore
    }

    struct Creation {
        var source: URL
        var options: AssetCreationOptions
    }

    private(set) var creations: [Creation] = []
    private(set) var edits: [(id: Int64, edit: Edit)] = []

    init() {}

    /// Creates an asset from a local file: the library copies it (or, with ``AssetCreationOptions/movesFile``,
    /// takes it) into its folder, reads its metadata, and uploads it in the background. A file whose bytes the
    /// library already holds (same SHA-256) creates nothing: the existing asset is returned.
    /// - Parameters:
    ///   - url: A readable regular file.
    ///   - options: Move instead of copy, creation date, bucket path.
    /// - Returns: The placeholder for the new asset: its position in what ``AssetLibrary/performChanges(_:)``
    ///   returns.
    @discardableResult
    public func createAsset(fromFileAt url: URL, options: AssetCreationOptions = AssetCreationOptions())
        -> AssetPlaceholder
    {
        creations.append(Creation(source: url, options: options))
        return AssetPlaceholder(index: creations.count - 1)
    }

    /// Moves assets to the trash (PhotoKit's Recently Deleted): they leave default fetches and can be restored
    /// until they are purged (``AssetLibrary/emptyTrash()``, or after ``AssetLibrary/Configuration/trashRetention``).
    public func deleteAssets(_ assets: [Asset]) { record(assets, .trash) }

    /// Takes assets out of the trash.
    public func restoreAssets(_ assets: [Asset]) { record(assets, .restore) }

    /// Marks or unmarks assets as favourites.
    public func setFavorite(_ isFavorite: Bool, for assets: [Asset]) { record(assets, .favorite(isFavorite)) }

    /// Hides or shows assets (hidden assets are left out of default fetches).
    public func setHidden(_ isHidden: Bool, for assets: [Asset]) { record(assets, .hidden(isHidden)) }

    /// Sets an asset's title (`nil` or empty removes it).
    public func setTitle(_ title: String?, for asset: Asset) {
        let trimmed = title?.trimmingCharacters(in: .whitespacesAndNewlines)
        record([asset], .title(trimmed?.isEmpty == false ? trimmed : nil))
    }

    /// Replaces an asset's keywords (trimmed; empty ones and repeats dropped, order kept).
    public func setKeywords(_ keywords: [String], for asset: Asset) {
        var seen = Set<String>()
        let cleaned = keywords.map(AssetRecord.normalizedKeyword).filter { !$0.isEmpty && seen.insert($0).inserted }
        record([asset], .keywords(cleaned))
    }

    private func record(_ assets: [Asset], _ edit: Edit) {
        for asset in assets { edits.append((asset.rowID, edit)) }
    }
}

/// Stands for an asset created in a ``AssetLibrary/performChanges(_:)`` closure (PhotoKit's placeholder).
public struct AssetPlaceholder: Sendable, Hashable {
    /// The position of the new asset's local identifier in what `performChanges` returns.
    public let index: Int
}

/// How ``AssetChangeRequests/createAsset(fromFileAt:options:)`` takes a file in.
public struct AssetCreationOptions: Sendable, Hashable {
    /// Take the file instead of copying it: renamed into the library when on the same file system, else copied
    /// and removed once the change has committed. Default `false` (the file is copied and left alone).
    public var movesFile: Bool
    /// The creation date; `nil` (default) reads it from the file (EXIF capture date, else its modification date).
    public var creationDate: Date?
    /// The object's path under the originals prefix; `nil` (default): `<yyyy>/<mm>/<file name>` of the creation
    /// date (UTC), made unique with part of the content hash when the name is taken.
    public var bucketPath: String?

    public init(movesFile: Bool = false, creationDate: Date? = nil, bucketPath: String? = nil) {
        self.movesFile = movesFile
        self.creationDate = creationDate
        self.bucketPath = bucketPath
    }
}
