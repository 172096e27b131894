import AssetStore
import CloudAssets
import Foundation
import S3Transfer

/// Whether an error is one of the project's typed errors, and a short name for its kind ("S3Error.slowDown").
enum ErrorKind {
    /// The library's errors (never ``CloudAssetsError/Code/unexpected``), and those of the modules below it.
    static func isTyped(_ error: any Error) -> Bool {
        if let library = error as? CloudAssetsError { return library.code != .unexpected }
        return error is S3Transfer.S3Error || error is AssetStoreError
    }

    static func name(_ error: any Error) -> String {
        if let library = error as? CloudAssetsError { return "CloudAssetsError.\(library.code)" }
        let type = String(describing: Swift.type(of: error))
        if let label = Mirror(reflecting: error).children.first?.label { return "\(type).\(label)" }
        return "\(type).\(String(describing: error).prefix(40))"
    }
}
