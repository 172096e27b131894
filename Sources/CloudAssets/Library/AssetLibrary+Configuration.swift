public import CoreMetrics
public import Foundation
import Images
public import Logging
import S3Transfer

/// Where the library's S3 credentials come from.
public enum Credentials: Sendable, Hashable {
    /// The AWS credential chain, as the aws CLI and boto3 follow it (botocore's order): the environment
    /// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`); the profile named by `AWS_PROFILE`
    /// (else `default`) in `~/.aws/credentials` and `~/.aws/config` (`AWS_SHARED_CREDENTIALS_FILE`,
    /// `AWS_CONFIG_FILE`) — its keys, a role to assume (`role_arn` with `source_profile` or `credential_source`),
    /// a web identity token or a `credential_process`; `AWS_WEB_IDENTITY_TOKEN_FILE` with `AWS_ROLE_ARN`; container
    /// credentials (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` / `_FULL_URI`); EC2 instance metadata (IMDSv2; off
    /// with `AWS_EC2_METADATA_DISABLED=true`).
    ///
    /// Resolved on the first request that needs them, not when the library opens (a library that stays offline
    /// never looks). Temporary credentials are refreshed ahead of their expiry, once for every request in flight;
    /// a refresh that fails while they are still valid keeps them. When nothing is found, or a configured source
    /// fails (a malformed file, a `credential_process` that fails, an STS error), requests fail with
    /// ``CloudAssetsError/Code/missingCredentials`` (``CloudAssetsError/Code/accessDenied`` when STS refuses the
    /// role) and a one-line message naming what was tried. ``AssetLibrary/credentialSource`` tells which source
    /// answered.
    case `default`
    /// The chain of ``default`` for this profile of the shared files. As with the aws CLI's `--profile`, the
    /// environment's keys (`AWS_ACCESS_KEY_ID`, `AWS_WEB_IDENTITY_TOKEN_FILE`) are not used; a profile in neither
    /// file is an error.
    case profile(String)
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and optionally `AWS_SESSION_TOKEN`, read when the library opens
    /// (which fails with ``CloudAssetsError/Code/missingCredentials`` when they are not set). Never refreshed.
    case environment
    /// Fixed keys.
    case `static`(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil)
    /// Unsigned requests (a public bucket).
    case anonymous
}

/// Printed, logged or dumped, credentials show where they come from and the access key id, never the secret key
/// or the session token (`print(configuration)` is safe to paste into an issue).
extension Credentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Where the credentials come from, and the access key id of fixed keys; never a secret or a session token.
    public var description: String {
        switch self {
        case .default: "default"
        case .profile(let name): "profile(\(name))"
        case .environment: "environment"
        case .static(let accessKeyID, _, let sessionToken):
            "static(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>"
                + (sessionToken == nil ? ")" : ", sessionToken: <redacted>)")
        case .anonymous: "anonymous"
        }
    }

    /// The same text as ``description``: a debugger or `debugPrint` shows no secret either.
    public var debugDescription: String { description }

    /// One child, `source`, holding ``description``, so `dump` and reflection show no secret.
    public var customMirror: Mirror { Mirror(self, children: ["source": description], displayStyle: .enum) }
}

/// Where originals and thumbnails live in the bucket.
public struct BucketLayout: Sendable, Hashable {
    /// Prefix of every original's key.
    public var originalsPrefix: String
    /// Prefix of every thumbnail's key.
    public var thumbnailsPrefix: String
    /// Appended to the original's path to form the thumbnail's key.
    public var thumbnailSuffix: String
    /// Prefix of every metadata sidecar's key (the shared properties of one asset: favourite, hidden, title,
    /// keywords, trash).
    public var metadataPrefix: String
    /// Prefix of the journal: the immutable entries in which libraries record what they changed in the bucket,
    /// read by incremental syncs (see docs/bucket-layout.md).
    public var journalPrefix: String
    /// Prefix of the checkpoints: snapshots of the catalog a new library bootstraps from.
    public var checkpointPrefix: String
    /// Prefix of content edits: each revision's rendered version, thumbnail and manifest, under
    /// `edits/<path>/` for `originals/<path>` (see docs/bucket-layout.md).
    public var editsPrefix: String
    /// Prefix of albums and folders: `collections/<id>.json`, each one's shared state (docs/bucket-layout.md).
    public var collectionsPrefix: String

    /// A layout with these prefixes; the defaults are `originals/`, `thumbnails/` with `.jpg`, `metadata/`,
    /// `journal/`, `checkpoints/`, `edits/` and `collections/`.
    public init(
        originalsPrefix: String = "originals/", thumbnailsPrefix: String = "thumbnails/",
        thumbnailSuffix: String = ".jpg", metadataPrefix: String = "metadata/", journalPrefix: String = "journal/",
        checkpointPrefix: String = "checkpoints/", editsPrefix: String = "edits/",
        collectionsPrefix: String = "collections/"
    ) {
        self.collectionsPrefix = collectionsPrefix
        self.originalsPrefix = originalsPrefix
        self.thumbnailsPrefix = thumbnailsPrefix
        self.thumbnailSuffix = thumbnailSuffix
        self.metadataPrefix = metadataPrefix
        self.journalPrefix = journalPrefix
        self.checkpointPrefix = checkpointPrefix
        self.editsPrefix = editsPrefix
    }
}

extension AssetLibrary {
    /// Everything a library needs to open: local folder, bucket, and limits.
    public struct Configuration: Sendable {
        /// The library folder (database, lock, cached files). Created when absent; a folder holding other files is
        /// refused.
        public var storeURL: URL
        /// The S3 endpoint. Default nil: no remote (the library works on its catalog and local files only).
        public var endpoint: URL? = nil
        /// The bucket. Default empty.
        public var bucket = ""
        /// The region requests are signed for. Default `us-east-1`.
        public var region = "us-east-1"
        /// How requests name the bucket: in the path or in the host name. Default
        /// ``AssetLibrary/AddressingStyle/automatic``: virtual-hosted (`https://bucket.s3.region.amazonaws.com/key`)
        /// for AWS endpoints when the bucket name allows it, path-style (`https://endpoint/bucket/key`) otherwise.
        public var addressingStyle = AssetLibrary.AddressingStyle.automatic
        /// Where the access key comes from. Default ``Credentials/default``: the AWS credential chain (the
        /// environment, `AWS_PROFILE` in `~/.aws`, roles, web identity, container, instance metadata).
        public var credentials = Credentials.default
        /// The environment the credential chain reads instead of the process's (tests); nil: the process's.
        var credentialEnvironment: [String: String]? = nil
        /// When temporary credentials are refreshed (tests); nil: the defaults of ``CredentialRefreshState/Timing``.
        var credentialTiming: CredentialRefreshState.Timing? = nil
        /// The clock credentials' expiry is read on (tests); nil: the real one.
        var credentialClock: (@Sendable () -> Date)? = nil
        /// Where originals, thumbnails and metadata sidecars live in the bucket. Default `originals/`,
        /// `thumbnails/…jpg`, `metadata/…json`.
        public var layout = BucketLayout()
        /// Whether the bucket's folders of keys show as albums (for a bucket another tool organised in folders):
        /// the originals directly in `originals/Trips/Rome/` make the album "Rome" in the folder "Trips"; a
        /// folder that holds both originals and folders holds an album of its own name for its originals. These
        /// albums (``AssetCollection/Subtype/albumKeyFolder``) follow the keys as objects come and go, cannot be
        /// changed by requests, and are derived alike by every library (nothing is written to the bucket). Default
        /// `false`.
        public var keyFoldersAsAlbums = false
        /// Cap on the bytes of cached originals, evicted least recently used first (pinned ones never). Default nil:
        /// no cap.
        public var cacheSizeLimit: Int64? = nil
        /// When the library may use the network; changeable later through ``AssetLibrary/networkPolicy``. Default
        /// `.allowed`.
        public var networkPolicy = NetworkPolicy.allowed
        /// Most simultaneous HTTP connections of downloads and sync (uploads: ``UploadSettings/concurrentUploads``).
        /// Default 8.
        public var maxConnections = 8
        /// Most simultaneous thumbnail downloads. Default 4.
        public var thumbnailConcurrency = 4
        /// How many changes ``AssetLibrary/changes(since:)`` can go back. Default 10,000.
        public var historyLimit = 10_000
        /// Past this many removed + inserted + changed + moved items, change details are not incremental
        /// (``FetchResultChangeDetails/hasIncrementalChanges`` is `false`). Default 50,000.
        public var maxIncrementalChangeCount = 50_000
        /// Where asset metadata comes from: `x-amz-meta-*` of a HEAD per new or changed object (default), or
        /// the listing alone (no HEAD; creation date = last-modified).
        public var metadataSource: AssetLibrary.MetadataSource = .headObject
        /// The long side, in pixels, of the thumbnails the library makes itself (from an original's embedded EXIF
        /// thumbnail or by downscaling the original; see ``AssetLibrary/makeThumbnail(for:isNetworkAccessAllowed:)``).
        /// Default 256.
        public var thumbnailPixelSize: Int = 256
        /// Bytes of decoded pixels ``AssetLibrary/startCachingImages(for:targetSize:contentMode:options:)`` keeps
        /// in memory at most (least recently used out first). Default 64 MiB.
        public var imageCacheBudget: Int = 64 << 20
        /// With ``MetadataSource/headObject``: how many leading bytes of a new image (JPEG, PNG, HEIF by its key)
        /// whose HEAD carries no `x-amz-meta-*` fields of ours (another tool's upload) a sync reads with one ranged
        /// GET, for the image's own headers: EXIF capture date, pixel size, orientation, GPS. Headers longer than
        /// this cost one more ranged read (up to 1 MiB). 0 reads none. Default 64 KiB.
        public var imageHeaderBytes: Int = 64 * 1024
        /// Objects a full listing takes in before the metadata fill (the reads after the listing,
        /// ``SyncSummary/metadataFilled``) starts beside it, on the rows the listing has committed: the listing of a big
        /// bucket leaves the processor idle part of the time, and the fill uses it. A smaller listing keeps the
        /// phases apart (every asset is in the catalog, still provisional, before the first is filled); so does
        /// `Int.max`. The fill beside the listing stops taking rows when the listing ends; what it did not take is
        /// read after it as before. Default 20,000 (about a fifth of a second of listing).
        public var metadataFillBesideListingAfter: Int = 20_000
        /// The shortest time between two calls of a request's progress handler, in seconds (as every duration
        /// here). Default 0.1.
        public var progressInterval: TimeInterval = 0.1
        /// Which integrity checks a download of an original computes before the asset becomes `full` (its length
        /// is always checked, and a file that fails a check never replaces anything). Default `.fastest`.
        public var integrityChecks: IntegrityChecks = .fastest
        /// Lets a library that belongs to another endpoint, bucket or prefix (recorded by its first sync) be used
        /// with this one; the next sync records the new one and keeps local files whose ETags match. Default
        /// `false`: such a library is refused with ``CloudAssetsError/Code/boundToAnotherBucket``
        /// before any request, so a mistyped bucket can never empty a library.
        public var rebind = false
        /// Whether this library moves bytes in the background on its own: it downloads pinned originals that are
        /// not local yet (on open and on ``AssetLibrary/pin(_:)``) and uploads imports and shared-property edits (on
        /// open, after ``AssetLibrary/performChanges(_:)`` and when the policy becomes `.allowed`). Default `true`.
        /// A short-lived process that only reads the catalog (a listing, a status) sets `false`, so it starts no
        /// transfer it would cancel a moment later; what it leaves is done by the next library that opens with
        /// `true`, or by ``AssetLibrary/sync(mode:fetchThumbnails:progress:)`` and ``AssetLibrary/waitForUploads()``, which upload
        /// whatever this says.
        public var startsBackgroundTransfers = true
        /// How long an asset stays in the trash before a sync purges it (its objects are deleted from the bucket).
        /// Default 30 days, as Photos' Recently Deleted.
        public var trashRetention: TimeInterval = 30 * 24 * 3600
        /// The upload settings: part size for multipart uploads (default 8 MiB; at least 5 MiB), parts in flight
        /// per upload, checksum.
        public var upload = UploadSettings()
        /// A PEM file of CA certificates to trust for an HTTPS endpoint (a private CA), instead of the system's.
        /// Default nil: the system's CAs.
        public var caBundlePath: String?
        /// Whether HTTPS verifies the server's certificate and host name. Default `true`; `false` only for a test
        /// endpoint you control (the library then logs one warning through ``logger`` when it opens).
        public var verifyTLS = true
        /// Whether a group of four or more downloads finishing together is made durable with one `syncfs` of their
        /// file system instead of one `fdatasync` each. Default `true`; `false` keeps every sync to its own file
        /// (`syncfs` also writes other programs' pending data on that file system).
        public var syncsFileSystemForGroups = true
        /// How often ``AssetLibrary/sync(mode:fetchThumbnails:progress:)`` in ``SyncMode/automatic`` lists the whole bucket
        /// (the reconciliation that finds objects other tools wrote) instead of reading only the journal. Default
        /// 24 hours; 0 lists on every sync (the behaviour before the journal).
        public var fullSyncInterval: TimeInterval = 24 * 3600
        /// How far behind its position an incremental sync lists the journal again, so that an entry written with
        /// an earlier time than one already read (a slow writer, a clock the service corrected) is still applied
        /// (once: applied entries are remembered for this long). Default 10 minutes.
        public var journalLookBack: TimeInterval = 600
        /// How often a checkpoint of the catalog is written to the bucket, by the first library that syncs in each
        /// period (a conditional write elects it), for new libraries to bootstrap from. Default 24 hours; 0 writes
        /// none (and a new library then lists the whole bucket).
        public var checkpointInterval: TimeInterval = 24 * 3600
        /// How long journal entries stay in the bucket once a checkpoint covers them: the library that writes a
        /// checkpoint then deletes the entries (and the checkpoints before it) older than this. A library that has
        /// not synced for longer finds its history gone and lists the whole bucket instead
        /// (``SyncSummary/historyExpired``). Default 7 days; never less than 1 day, whatever is set.
        public var journalRetention: TimeInterval = 7 * 24 * 3600
        /// Whether the app may see where photos were taken. `.denied` (the default) keeps it private:
        /// ``Asset/location`` is `nil`, and data and image requests deliver the original's bytes with its GPS tags
        /// removed (the rest of the file unchanged). `.granted` returns everything. The catalog and the bucket keep
        /// the location either way, so another library with access still sees it.
        public var locationAccess: LocationAccess = .denied
        /// Where the library logs: sync summaries and what it skipped (`info`, `warning`), failed uploads and
        /// downloads and background work that failed (`warning`), each request attempt (`debug`: method, path
        /// without its query, status, bytes, seconds, attempt), each state change of an asset (`trace`), repairs on
        /// open. Default: a logger that discards everything. Never a secret, a query string, a signature or file
        /// bytes; keys and local identifiers go in its metadata.
        public var logger = Logger(label: "cloudassets", factory: { _ in SwiftLogNoOpLogHandler() })
        /// Where the library's counters and timers go (syncs and their duration, uploads, downloads and their bytes,
        /// bucket input refused: see docs/configuration.md, *Logging and metrics*). Default nil: the process's
        /// `MetricsSystem.factory` — a no-op unless the app bootstraps a backend.
        public var metricsFactory: (any MetricsFactory)?
        /// A configuration for the library folder at `storeURL`, every other setting at its default (no endpoint:
        /// a local library). Set the others as properties: this is the one way to set them.
        public init(storeURL: URL) {
            self.storeURL = storeURL
        }
    }
}

extension BucketLayout {
    /// The key of an original's metadata sidecar: `metadata/<path>.json` for `originals/<path>`.
    /// - Parameter originalKey: The original's key.
    /// - Returns: nil when the key is not under the originals prefix.
    public func sidecarKey(forOriginalKey originalKey: String) -> String? {
        guard originalKey.hasPrefix(originalsPrefix) else { return nil }
        return metadataPrefix + originalKey.dropFirst(originalsPrefix.count) + ".json"
    }

    /// The original's key for a sidecar key; nil when it does not follow the layout.
    /// - Parameter sidecarKey: The sidecar's key.
    public func originalKey(forSidecarKey sidecarKey: String) -> String? {
        guard sidecarKey.hasPrefix(metadataPrefix), sidecarKey.hasSuffix(".json"),
            sidecarKey.count > metadataPrefix.count + ".json".count
        else { return nil }
        return originalsPrefix + sidecarKey.dropFirst(metadataPrefix.count).dropLast(".json".count)
    }

    /// The thumbnail key of an original: `thumbnails/<path>.jpg` for `originals/<path>`.
    /// - Parameter originalKey: The original's key.
    /// - Returns: nil when the key is not under the originals prefix.
    public func thumbnailKey(forOriginalKey originalKey: String) -> String? {
        guard originalKey.hasPrefix(originalsPrefix) else { return nil }
        return thumbnailsPrefix + originalKey.dropFirst(originalsPrefix.count) + thumbnailSuffix
    }

    /// The original's key for a thumbnail key; nil when it does not follow the layout.
    /// - Parameter thumbnailKey: The thumbnail's key.
    public func originalKey(forThumbnailKey thumbnailKey: String) -> String? {
        guard thumbnailKey.hasPrefix(thumbnailsPrefix), thumbnailKey.hasSuffix(thumbnailSuffix),
            thumbnailKey.count >= thumbnailsPrefix.count + thumbnailSuffix.count
        else { return nil }
        let path = thumbnailKey.dropFirst(thumbnailsPrefix.count).dropLast(thumbnailSuffix.count)
        return originalsPrefix + path
    }
}

/// How the library uploads originals.
public struct UploadSettings: Sendable, Hashable {
    /// Files of at least this size go up in parts (multipart upload), each `partSize` bytes; smaller ones in one
    /// request. Default 8 MiB; S3 requires at least 5 MiB for every part but the last.
    public var partSize: Int64 = 8 << 20
    /// Parts of one upload in flight at once. Default 4. Memory: about `partSize` × this per large upload.
    public var partsInFlight = 4
    /// Originals uploaded at once. Default 32: small files are bound by round trips, not bandwidth (2,000 ×
    /// 16 KiB to a local server go up ~10 % faster than with 16), and an upload holds no part in memory (bodies
    /// are read from the file as they are sent), so more at once costs connections, not memory. Uploads may use
    /// this many connections even above ``AssetLibrary/Configuration/maxConnections``, which bounds downloads and
    /// sync.
    public var concurrentUploads = 32
    /// The checksum sent with every upload (each part, and the whole object as `FULL_OBJECT`), which the service
    /// verifies before it stores the bytes and returns on every download. Default CRC-32C (computed in hardware).
    /// With `.sha256` a multipart object keeps only a checksum of its parts' checksums (S3's `COMPOSITE` type).
    public var checksum: S3ChecksumAlgorithm = .crc32c

    /// Settings with the defaults above; sizes below S3's limits are raised to them (parts ≥ 5 MiB, ≥ 1 at once).
    public init(
        partSize: Int64 = 8 << 20, partsInFlight: Int = 4, concurrentUploads: Int = 32,
        checksum: S3ChecksumAlgorithm = .crc32c
    ) {
        self.partSize = max(5 << 20, partSize)
        self.partsInFlight = max(1, partsInFlight)
        self.concurrentUploads = max(1, concurrentUploads)
        self.checksum = checksum
    }
}

extension AssetLibrary {
    /// Whether an app may see where photos were taken (see ``Configuration/locationAccess``).
    public enum LocationAccess: Sendable, Hashable {
        /// Locations and GPS tags are handed out.
        case granted
        /// No location: ``Asset/location`` is `nil` and delivered bytes carry no GPS tags.
        case denied
    }

    /// Where a sync reads the metadata of objects it finds in a listing (see ``Configuration/metadataSource``).
    public enum MetadataSource: Sendable, Hashable {
        /// A HEAD request per new or changed object, reading `x-amz-meta-*`.
        case headObject
        /// The listing only (no HEAD; the creation date is the object's last-modified date).
        case listingOnly
    }
}

extension AssetLibrary.Configuration {
    /// What the library's own thumbnails are decoded to: ``thumbnailPixelSize`` on the long side.
    var thumbnailRequest: DecodeRequest {
        let size = max(16, thumbnailPixelSize)
        return DecodeRequest(targetWidth: size, targetHeight: size, contentMode: .aspectFit)
    }
}
