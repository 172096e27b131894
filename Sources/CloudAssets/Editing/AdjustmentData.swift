public import Foundation

/// What an editor records about an edit so that it — or another editor that understands the format — can resume
/// it from the original later (PhotoKit's `PHAdjustmentData`). The library never interprets `data`.
public struct AdjustmentData: Sendable, Hashable {
    /// Names the format of ``data``, reverse-DNS style (`com.cloudassets.basic` for the built-in editor).
    public var formatIdentifier: String
    /// The version of that format `data` is written in.
    public var formatVersion: String
    /// The editor's description of the edit (at most ``maximumSize`` bytes).
    public var data: Data

    /// The largest `data` the library stores and shares (it travels in the bucket's journal).
    public static let maximumSize = 64 << 10

    /// Adjustment data in the format `formatIdentifier`, version `formatVersion`.
    public init(formatIdentifier: String, formatVersion: String, data: Data) {
        self.formatIdentifier = formatIdentifier
        self.formatVersion = formatVersion
        self.data = data
    }
}

/// Which version of an asset a data or image request delivers (PhotoKit's `PHImageRequestOptionsVersion`).
public enum AssetVersion: Sendable, Hashable {
    /// The asset as it shows now: the rendered version of its current edit, or the original when it has none.
    case current
    /// The original without adjustments. The library keeps no separate unadjusted rendition (no RAW + JPEG
    /// pairs), so this is the same file as ``original``.
    case unadjusted
    /// The original as imported, whatever edits the asset has.
    case original
}

/// Options of ``AssetLibrary/requestContentEditingInput(for:options:)`` (PhotoKit's
/// `PHContentEditingInputRequestOptions`).
public struct ContentEditingInputRequestOptions: Sendable {
    /// Asked with the asset's current adjustment data: `true` when the editor can resume that edit, and then gets
    /// the *original* with those adjustments; `false` (the default) and it gets the current rendered version to
    /// edit on top of (no adjustments: they are baked in).
    public var canHandleAdjustmentData: @Sendable (AdjustmentData) -> Bool
    /// Whether the original or rendered version may be downloaded. Default `true`.
    public var isNetworkAccessAllowed: Bool
    /// The longer side of ``ContentEditingInput/displaySizeImage``, in pixels. Default 1024.
    public var displaySize: Int

    /// Options with the defaults: no adjustment data handled (the editor gets the current version), network
    /// allowed, a 1024-pixel display image.
    public init(
        canHandleAdjustmentData: @escaping @Sendable (AdjustmentData) -> Bool = { _ in false },
        isNetworkAccessAllowed: Bool = true, displaySize: Int = 1024
    ) {
        self.canHandleAdjustmentData = canHandleAdjustmentData
        self.isNetworkAccessAllowed = isNetworkAccessAllowed
        self.displaySize = displaySize
    }
}

/// What an editor starts from (PhotoKit's `PHContentEditingInput`). A value; the files it names live in the
/// library's folder and stay until the library evicts them or (a rendering) the asset's edit changes — read them,
/// do not modify them.
public struct ContentEditingInput: Sendable {
    /// The asset being edited, as it was when the input was made.
    public let asset: Asset
    /// The asset's media type.
    public let mediaType: MediaType
    /// The full-size image to edit from: the original (when resuming, or the asset has no edit) or the current
    /// rendered version.
    public let fullSizeImageURL: URL
    /// The EXIF orientation of ``fullSizeImageURL`` (an original's; 1 for a rendered version, which is upright).
    public let fullSizeImageOrientation: Int
    /// A JPEG of the same image, upright, at most ``ContentEditingInputRequestOptions/displaySize`` pixels on its
    /// longer side: what an editor shows while the user works.
    public let displaySizeImage: Data
    /// The adjustments to resume: the current edit's, when the editor said it can handle them; `nil` otherwise
    /// (the input is then the rendered version, or the original of an unedited asset).
    public let adjustmentData: AdjustmentData?
    /// The revision the asset showed when the input was made (`nil`: its original).
    let currentRevision: String?
    /// The revision whose rendering the input is (`nil`: the original).
    let baseRevision: String?
    /// The library's edits folder, where outputs are written.
    let outputFolder: URL
}

/// An editor's result (PhotoKit's `PHContentEditingOutput`): made from an input, given adjustment data and a JPEG
/// written at ``renderedContentURL``, then committed with ``AssetChangeRequests/setContentEditingOutput(_:for:)``.
public struct ContentEditingOutput: Sendable {
    /// Where the editor writes the rendered version: a JPEG, upright (orientation 1), full size. The file is in the
    /// library's folder and becomes the edit's rendered version when the change commits.
    public let renderedContentURL: URL
    /// The edit's description (required: an edit without adjustment data cannot be resumed and is refused).
    public var adjustmentData: AdjustmentData?
    /// The input's base (``ContentEditingInput/baseRevision``) and the revision it saw as current.
    let baseRevision: String?
    let inputRevision: String?
    let assetID: Int64

    /// An output for an input: a fresh ``renderedContentURL`` in the library's edits folder.
    public init(contentEditingInput input: ContentEditingInput) {
        renderedContentURL = input.outputFolder.appendingPathComponent(LocalFiles.editOutputName(), isDirectory: false)
        adjustmentData = nil
        baseRevision = input.baseRevision
        inputRevision = input.currentRevision
        assetID = input.asset.rowID
    }
}

/// One revision of an asset's content edit in the library's history (``AssetLibrary/contentRevisions(of:)``).
public struct ContentRevision: Sendable, Hashable {
    /// The revision's identifier: later revisions sort after earlier ones.
    public let identifier: String
    /// When it was made.
    public let date: Date
    /// Whether it is a revert to the original (no rendered version).
    public let isRevert: Bool
    /// The edit's adjustments (`nil` for a revert).
    public let adjustmentData: AdjustmentData?
    /// Whether the asset shows this revision now.
    public let isCurrent: Bool
    /// Whether it is in the bucket yet.
    public let isShared: Bool
}
