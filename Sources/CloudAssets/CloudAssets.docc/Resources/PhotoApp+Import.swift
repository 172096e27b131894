import CloudAssets
import Foundation

extension PhotoApp {
    /// Imports photos: one change, local at once; the uploads then go to the bucket. Returns the new assets'
    /// local identifiers, or throws when a file cannot be read (nothing is imported then).
    func importPhotos(_ files: [URL], favorite: Bool = false) async throws -> [String] {
        let identifiers = try await library.performChanges { changes in
            for file in files { changes.createAsset(fromFileAt: file) }  // copied into the library
        }
        if favorite {
            let imported = try library.fetchAssets(withLocalIdentifiers: identifiers)
            try await library.performChanges { $0.setFavorite(true, for: Array(imported)) }
        }
        let status = await library.waitForUploads()  // or let them go in the background
        for failure in status.failures {  // kept in the library: the next sync tries again
            print("not uploaded yet: \(failure.key): \(failure.reason)")
        }
        return identifiers
    }
}
