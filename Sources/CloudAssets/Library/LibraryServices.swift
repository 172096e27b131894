import AWSSigV4
import AssetStore
import Essentials
import Foundation
import S3Transfer

/// The parts of a library beyond its catalog: files on disk, the network side, requests in flight.
final class LibraryServices: Sendable {
    let files: LocalFiles
    let remote: LibraryRemote?
    let runtime = LibraryRuntime()
    /// The assets whose byte lock this library holds for its downloads.
    let downloadLocks = DownloadLocks()
    /// Finished downloads, committed in groups.
    let downloadCommits = CommitGroups()
    let syncGate = SerialGate()
    /// One journal flush at a time.
    let journalGate = SerialGate()
    /// The logger and the metrics (``LibraryTelemetry``).
    let telemetry: LibraryTelemetry
    /// One pass of ``AssetLibrary/shareEditRevisions()`` at a time: a revert's pass must see every revision an
    /// earlier pass is still sending as shared, or it would leave that revision's objects in the bucket.
    let editShareGate = SerialGate()
    let policy: LockedBox<NetworkPolicy>
    /// Whether the configured bucket was found to be the library's own (checked once per open).
    let bindingChecked = LockedBox(false)
    /// The background worker for imports and edits.
    let uploadQueue = UploadQueue()
    /// This library's device identifier, read from the catalog once.
    let deviceID = LockedBox<String?>(nil)

    init(configuration: AssetLibrary.Configuration) throws {
        telemetry = LibraryTelemetry(logger: configuration.logger, factory: configuration.metricsFactory)
        files = LocalFiles(root: configuration.storeURL)
        policy = LockedBox(configuration.networkPolicy)
        guard let endpoint = configuration.endpoint else {
            remote = nil
            return
        }
        try Self.validate(configuration, endpoint: endpoint)
        let credentials: AWSCredentials?
        switch configuration.credentials {
        case .anonymous:
            credentials = nil
        case .static(let key, let secret, let token):
            credentials = AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token)
        case .environment:
            let env = ProcessInfo.processInfo.environment
            guard let key = env["AWS_ACCESS_KEY_ID"], let secret = env["AWS_SECRET_ACCESS_KEY"], !key.isEmpty,
                !secret.isEmpty
            else {
                throw AssetLibraryError.missingCredentials
            }
            credentials = AWSCredentials(
                accessKeyID: key, secretAccessKey: secret, sessionToken: env["AWS_SESSION_TOKEN"])
        }
        var clientConfiguration = S3ClientConfiguration(endpoint: endpoint, region: configuration.region)
        clientConfiguration.credentials = credentials
        clientConfiguration.caBundlePath = configuration.caBundlePath
        clientConfiguration.verifyTLS = configuration.verifyTLS
        // The engine's cap covers both: the downloader keeps to `maxConnections` on its own.
        clientConfiguration.maxConnections = max(configuration.maxConnections, configuration.upload.concurrentUploads)
        let client = S3Client(configuration: clientConfiguration)
        var downloaderConfiguration = DownloaderConfiguration()
        downloaderConfiguration.maxConnections = configuration.maxConnections
        downloaderConfiguration.progressInterval = configuration.progressInterval
        downloaderConfiguration.integrity = configuration.integrityChecks
        downloaderConfiguration.syncsFileSystemForGroups = configuration.syncsFileSystemForGroups
        downloaderConfiguration.networkPolicy = .allowed  // the library applies its own policy first
        var uploaderConfiguration = UploaderConfiguration()
        uploaderConfiguration.partSize = configuration.upload.partSize
        uploaderConfiguration.multipartThreshold = configuration.upload.partSize
        uploaderConfiguration.maxConcurrentParts = configuration.upload.partsInFlight
        uploaderConfiguration.checksum = configuration.upload.checksum
        uploaderConfiguration.networkPolicy = .allowed  // the library applies its own policy first
        remote = LibraryRemote(
            client: client, downloader: Downloader(client: client, configuration: downloaderConfiguration),
            uploader: Uploader(client: client, configuration: uploaderConfiguration))
    }
}

extension LibraryServices {
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
        if case .static(let key, let secret, _) = configuration.credentials, key.isEmpty || secret.isEmpty {
            throw AssetLibraryError.invalidConfiguration(
                reason: "the \(key.isEmpty ? "access key id" : "secret access key") is empty")
        }
    }
}
