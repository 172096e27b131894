import AWSSigV4
import AssetStore
import Essentials
import Foundation
import Logging
import S3Transfer

/// What every engine of a library shares, wired once when the library opens: the settings, the catalog, the
/// files on disk, the network side, the telemetry and the network gate. It holds no state of any engine: each
/// engine owns its own (see the component map in the module documentation).
final class LibraryContext: Sendable {
    let configuration: AssetLibrary.Configuration
    let catalog: Catalog
    /// The folder lock: shared by every library on the folder; its byte locks serialise downloads, uploads and
    /// syncs across processes.
    let lock: LibraryLock
    let files: LocalFiles
    /// The bucket side, when an endpoint is configured.
    let remote: LibraryRemote?
    /// The logger and the metrics (``LibraryTelemetry``).
    let telemetry: LibraryTelemetry
    /// The library-wide network policy (``AssetLibrary/networkPolicy``).
    let policy: LockedBox<NetworkPolicy>

    init(configuration: AssetLibrary.Configuration, catalog: Catalog, lock: LibraryLock) throws {
        self.configuration = configuration
        self.catalog = catalog
        self.lock = lock
        telemetry = LibraryTelemetry(logger: configuration.logger, factory: configuration.metricsFactory)
        files = LocalFiles(root: configuration.storeURL)
        policy = LockedBox(configuration.networkPolicy)
        remote = try Self.makeRemote(configuration, catalog: catalog, observer: telemetry.transferObserver)
        if remote != nil, !configuration.verifyTLS, configuration.endpoint?.scheme?.lowercased() == "https" {
            telemetry.logger.warning(
                "TLS verification is off (Configuration.verifyTLS = false): any server can pose as the endpoint",
                metadata: ["endpoint": .string(configuration.endpoint?.absoluteString ?? "")])
        }
    }

    private static func makeRemote(
        _ configuration: AssetLibrary.Configuration, catalog: Catalog, observer: TransferObserver
    ) throws
        -> LibraryRemote?
    {
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

extension LibraryContext {
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
