import AssetStore
import Foundation
import Images

#if canImport(Glibc)
    import Glibc
#endif

extension AssetLibrary {
    /// What an editor needs to edit an asset (PhotoKit's `requestContentEditingInput`): the image to start from,
    /// a display-size rendition of it, and the adjustments to resume.
    ///
    /// The start follows PhotoKit's rule. An asset without an edit: its original. An asset with an edit whose
    /// adjustment data `options.canHandleAdjustmentData` accepts: its *original* plus those adjustments, so the
    /// editor resumes the edit. Otherwise: the current rendered version, upright, with no adjustments (the new
    /// edit stacks on the rendering). Downloads what is not local when the options and the network policy allow.
    /// - Throws: ``CloudAssetsError/Code/networkNotAllowed`` when the file to start from is not local and may not
    ///   be downloaded, ``CloudAssetsError/Code/noSuchAsset``, ``CloudAssetsError/Code/imageUnreadable``.
    public func requestContentEditingInput(
        for asset: Asset, options: ContentEditingInputRequestOptions = ContentEditingInputRequestOptions()
    ) async throws -> ContentEditingInput {
        try await entry { try await requests.requestContentEditingInput(for: asset, options: options) }
    }

    /// Every revision of the asset's content edit this library knows, oldest first: the current one, ones a
    /// concurrent edit on another library superseded (restorable with
    /// ``AssetChangeRequests/restoreContentRevision(_:for:)``), and reverts. A snapshot; any thread.
    public func contentRevisions(of asset: Asset) throws -> [ContentRevision] {
        try entry { try edits.contentRevisions(of: asset.rowID) }
    }

    /// Edits an asset with the built-in editor and commits the result (one change; uploaded in the background).
    ///
    /// With `resume`, an existing `com.cloudassets.basic` edit is resumed: `change` receives its settings and the
    /// result is rendered from the *original*; an edit of another format is not resumable, so the new settings
    /// apply to its rendered version (as without `resume`, which always stacks on the current version).
    /// Rendering runs off the caller's thread in bounded memory (rows streamed unless the edit transposes).
    /// - Returns: The asset after the change.
    /// - Throws: ``CloudAssetsError/Code/unsupportedAdjustments`` when resuming an edit of this format in a version
    ///   this editor cannot read (nothing is changed), ``CloudAssetsError/Code/cannotEdit`` for settings that do
    ///   not fit the image, ``CloudAssetsError/Code/networkNotAllowed`` when the image to start from is not local.
    @discardableResult
    public func applyBasicEdit(
        to asset: Asset, resume: Bool = false, isNetworkAccessAllowed: Bool = true,
        _ change: (inout BasicEdit) throws -> Void
    ) async throws -> Asset {
        return try await entry {
            let options = ContentEditingInputRequestOptions(
                canHandleAdjustmentData: { resume && $0.formatIdentifier == BasicAdjustments.formatIdentifier },
                isNetworkAccessAllowed: isNetworkAccessAllowed, displaySize: 64)
            let input = try await requestContentEditingInput(for: asset, options: options)
            var edit = BasicEdit()
            if let data = input.adjustmentData {
                edit.adjustments = try BasicAdjustments.decode(
                    data: Array(data.data), formatIdentifier: data.formatIdentifier,
                    formatVersion: data.formatVersion)
            }
            try change(&edit)
            var output = ContentEditingOutput(contentEditingInput: input)
            output.adjustmentData = AdjustmentData(
                formatIdentifier: BasicAdjustments.formatIdentifier, formatVersion: BasicAdjustments.formatVersion,
                data: Data(edit.adjustments.encoded()))
            let source = input.fullSizeImageURL.path
            let target = output.renderedContentURL.path
            let adjustments = edit.adjustments
            do {
                _ = try await offCooperativePool {
                    try AdjustmentRenderer.render(source: source, adjustments: adjustments, to: target)
                }
                try await performChanges { $0.setContentEditingOutput(output, for: asset) }
            } catch {
                unlink(target)
                throw error
            }
            return try self.asset(withLocalIdentifier: asset.localIdentifier) ?? asset
        }
    }
}
