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

    /// A content edit (a new revision), a revert to the original, or a revision restored.
    enum ContentChange {
        case output(ContentEditingOutput)
        case revert
        case restore(revision: String)
    }

    private(set) var creations: [Creation] = []
    private(set) var edits: [(id: Int64, edit: Edit)] = []
    private(set) var contentChanges: [(id: Int64, change: ContentChange)] = []
    private(set) var collectionChanges: [CollectionChange] = []

    func recordCollectionChange(_ change: CollectionChange) { collectionChanges.append(change) }

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

    /// Commits an editor's output as the asset's new content (PhotoKit's `contentEditingOutput`): the rendered
    /// file becomes the version the asset shows, its adjustment data is kept so the edit can be resumed, and both
    /// go to the bucket in the background. The original is never modified. The asset is reported as changed.
    /// - Parameters:
    ///   - output: Made from an input of this asset, with ``ContentEditingOutput/adjustmentData`` set and a JPEG
    ///     written at ``ContentEditingOutput/renderedContentURL``.
    ///   - asset: The asset the input was requested for.
    public func setContentEditingOutput(_ output: ContentEditingOutput, for asset: Asset) {
        contentChanges.append((asset.rowID, .output(output)))
    }

    /// Removes the asset's edit: it shows its original again, here and (once shared) on every library; the
    /// rendered versions this library knows are deleted from the bucket. The original is untouched.
    public func revertAssetContentToOriginal(_ asset: Asset) { contentChanges.append((asset.rowID, .revert)) }

    /// Makes an earlier revision of the asset's edit current again (for instance one a concurrent edit on
    /// another device superseded; see ``AssetLibrary/contentRevisions(of:)``), as a new revision.
    public func restoreContentRevision(_ revision: ContentRevision, for asset: Asset) {
        contentChanges.append((asset.rowID, .restore(revision: revision.identifier)))
    }

    private func record(_ assets: [Asset], _ edit: Edit) {
        for asset in assets { edits.append((asset.rowID, edit)) }
    }

    /// What the closure recorded, as a value: the closure runs on the caller's actor, the transaction that applies
    /// it does not.
    struct Recorded: Sendable {
        var creations: [Creation]
        var edits: [(id: Int64, edit: Edit)]
        var contentChanges: [(id: Int64, change: ContentChange)]
        var collectionChanges: [CollectionChange]
    }

    /// The requests made so far.
    var recorded: Recorded {
        Recorded(
            creations: creations, edits: edits, contentChanges: contentChanges, collectionChanges: collectionChanges)
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

    /// Options with the defaults: copy the file, its own creation date, the dated path.
    public init(movesFile: Bool = false, creationDate: Date? = nil, bucketPath: String? = nil) {
        self.movesFile = movesFile
        self.creationDate = creationDate
        self.bucketPath = bucketPath
    }
}
