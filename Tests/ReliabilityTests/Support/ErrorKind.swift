import AssetStore
import CloudAssets
import Foundation
import S3Transfer

/// Whether an error is one of the project's typed errors, and a short name for its kind ("S3Error.slowDown").
enum ErrorKind {
    static func isTyped(_ error: any Error) -> Bool {
        error is AssetRequestError || error is S3Transfer.S3Error || error is AssetLibraryError
            || error is AssetStoreError
    }

    static func name(_ error: any Error) -> String {
        let type = String(describing: Swift.type(of: error))
        if let label = Mirror(reflecting: error).children.first?.label { return "\(type).\(label)" }
        return "\(type).\(String(describing: error).prefix(40))"
    }
}
