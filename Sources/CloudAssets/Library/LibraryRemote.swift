import AWSSigV4
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
    func recordBinding() async throws {
        let requested = LibraryBinding(configuration).text
        if try catalog.store.setting(LibraryBinding.settingName) != requested {
            try await catalog.setSetting(LibraryBinding.settingName, to: requested)
        }
        bindingChecked.withLock { $0 = true }
    }

    /// The bucket side of a library with an endpoint (`nil` without one), after ``validate(_:endpoint:)``: the
    /// client, the downloader and the uploader the configuration describes, reporting every transfer to
    /// `observer`.
    static func make(
        _ configuration: AssetLibrary.Configuration, catalog: Catalog, observer: TransferObserver
    ) throws -> LibraryRemote? {
        guard let endpoint = configuration.endpoint else { return nil }
        try Self.validate(configuration, endpoint: endpoint)
        let signing = try configuration.signingCredentials()
        var clientConfiguration = S3ClientConfiguration(endpoint: endpoint, region: configuration.region)
        clientConfiguration.credentials = signing.credentials
        clientConfiguration.credentialCache = signing.cache
        clientConfiguration.observer = observer
        clientConfiguration.caBundlePath = configuration.caBundlePath
        clientConfiguration.verifyTLS = configuration.verifyTLS
        clientConfiguration.addressingStyle =
            configuration.addressingStyle.resolved(endpoint: endpoint, bucket: configuration.bucket).transferStyle
        // The engine's cap covers both: the downloader keeps to `maxConnections` on its own.
        clientConfiguration.maxConnections = max(configuration.maxConnections, configuration.upload.concurrentUploads)
        let client = S3Client(configuration: clientConfiguration)
        var downloaderConfiguration = DownloaderConfiguration()
        downloaderConfiguration.maxConnections = configuration.maxConnections
        downloaderConfiguration.observer = observer
        downloaderConfiguration.progressInterval = Int((max(0, configuration.progressInterval) * 1000).rounded())
        downloaderConfiguration.integrity = configuration.integrityChecks
        downloaderConfiguration.syncsFileSystemForGroups = configuration.syncsFileSystemForGroups
        downloaderConfiguration.networkPolicy = .allowed  // the library applies its own policy first
        var uploaderConfiguration = UploaderConfiguration()
        uploaderConfiguration.partSize = configuration.upload.partSize
        uploaderConfiguration.multipartThreshold = configuration.upload.partSize
        uploaderConfiguration.maxConcurrentParts = configuration.upload.partsInFlight
        uploaderConfiguration.checksum = configuration.upload.checksum
        uploaderConfiguration.networkPolicy = .allowed  // the library applies its own policy first
        return LibraryRemote(
            configuration: configuration, catalog: catalog, client: client,
            downloader: Downloader(client: client, configuration: downloaderConfiguration),
            uploader: Uploader(client: client, configuration: uploaderConfiguration))
    }
}

extension LibraryRemote {
    /// Refuses a configuration that cannot work before any request is made: an endpoint that is not an `http` or
    /// `https` URL with a host, an empty or malformed bucket name, static credentials with an empty key or secret.
    static func validate(_ configuration: AssetLibrary.Configuration, endpoint: URL) throws {
        let scheme = endpoint.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", let host = endpoint.host, !host.isEmpty else {
            throw AssetLibraryError.invalidConfiguration(
                reason: "the endpoint \(endpoint.absoluteString) is not an http or https URL with a host")
        }
        let bucket = configuration.bucket
        guard !bucket.isEmpty else {
            throw AssetLibraryError.invalidConfiguration(reason: "the bucket name is empty; set Configuration.bucket")
        }
        guard bucket.utf8.count <= 255,
            bucket.unicodeScalars.allSatisfy({
                $0.isASCII && $0.properties.generalCategory != .control && $0 != "/" && $0 != " "
            })
        else {
            throw AssetLibraryError.invalidConfiguration(
                reason: "\"\(bucket)\" is not a bucket name (ASCII, no spaces or slashes, at most 255 bytes)")
        }
        try validateAddressing(configuration, endpoint: endpoint)
        if case .static(let key, let secret, _) = configuration.credentials, key.isEmpty || secret.isEmpty {
            throw AssetLibraryError.invalidConfiguration(
                reason: "the \(key.isEmpty ? "access key id" : "secret access key") is empty")
        }
    }
}

extension LibraryRemote? {
    /// The bucket side, once its binding is checked; throws when no endpoint is configured or the bucket is not
    /// the library's own.
    func checked() throws -> LibraryRemote {
        guard let remote = self else { throw AssetRequestError.noRemote }
        try remote.checkBinding()
        return remote
    }
}
