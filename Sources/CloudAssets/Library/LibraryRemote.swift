import AssetStore
import Essentials
import Foundation
import S3Transfer

/// The bucket as this library reaches it: the S3 client, the downloader and the uploader, and whether the
/// configured bucket was found to be the library's own (checked once per open, before the first request).
final class LibraryRemote: Sendable {
    let client: S3Client
    let downloader: Downloader
    let uploader: Uploader
    let configuration: AssetLibrary.Configuration
    private let catalog: Catalog
    /// Whether the binding was checked (or recorded) during this open.
    private let bindingChecked = LockedBox(false)

    init(
        configuration: AssetLibrary.Configuration, catalog: Catalog, client: S3Client, downloader: Downloader,
        uploader: Uploader
    ) {
        self.configuration = configuration
        self.catalog = catalog
        self.client = client
        self.downloader = downloader
        self.uploader = uploader
    }

    var bucket: String { configuration.bucket }

    /// Refuses a bucket other than the one this library's catalog was made from (``LibraryBinding``), unless
    /// ``AssetLibrary/Configuration/rebind`` is set.
    func checkBinding() throws {
        guard !configuration.rebind, !bindingChecked.withLock({ $0 }) else { return }
        let requested = LibraryBinding(configuration).text
        if let bound = try catalog.store.setting(LibraryBinding.settingName), bound != requested {
            throw AssetLibraryError.boundToAnotherBucket(
                library: configuration.storeURL.path, bound: bound, requested: requested)
        }
        bindingChecked.withLock { $0 = true }
    }

    /// Records the configured bucket as the library's own (after a full listing or a checkpoint of it).
    func recordBinding() throws {
        let requested = LibraryBinding(configuration).text
        if try catalog.store.setting(LibraryBinding.settingName) != requested {
            try catalog.store.setSetting(LibraryBinding.settingName, to: requested)
        }
        bindingChecked.withLock { $0 = true }
    }
}
