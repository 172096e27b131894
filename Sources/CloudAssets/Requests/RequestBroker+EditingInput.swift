import AssetStore
import Foundation
import Images

extension RequestBroker {
    /// ``AssetLibrary/requestContentEditingInput(for:options:)``.
    func requestContentEditingInput(
        for asset: Asset, options: ContentEditingInputRequestOptions
    ) async throws -> ContentEditingInput {
        guard let record = try catalog.store.record(id: asset.rowID) else {
            throw AssetLibraryError.noSuchAsset(localIdentifier: asset.localIdentifier)
        }
        let current = try edits.currentEditManifest(of: record)
        var dataOptions = AssetRequestOptions()
        dataOptions.isNetworkAccessAllowed = options.isNetworkAccessAllowed
        let url: URL
        let orientation: Int
        var adjustments: AdjustmentData?
        var base: String?
        if let current, let data = current.adjustmentData, !options.canHandleAdjustmentData(data) {
            // Stack on the rendering.
            url = try await edits.requestRenderedFile(of: record, options: dataOptions)
            orientation = 1
            base = current.revision
        } else {
            dataOptions.version = .original
            url = try await requestFile(for: Asset(record, revealsLocation: false), options: dataOptions)
            orientation = record.orientation
            adjustments = current?.adjustmentData
        }
        let side = max(16, options.displaySize)
        let display = try await offCooperativePool {
            let decoded = try ImageDecoder.decode(
                fileAt: url.path, request: DecodeRequest(targetWidth: side, targetHeight: side))
            return Data(try ImageEncoder.jpeg(decoded.image, quality: 85))
        }
        return ContentEditingInput(
            asset: Asset(record, revealsLocation: catalog.revealsLocation, store: catalog.store),
            mediaType: record.mediaType, fullSizeImageURL: url, fullSizeImageOrientation: orientation,
            displaySizeImage: display, adjustmentData: adjustments, currentRevision: record.editRevision,
            baseRevision: base, outputFolder: files.editsFolder)
    }
}
