import Essentials
import FakeS3
import Foundation
import Hashing
import TestSupport

@testable import CloudAssets

/// An in-process fake S3 with one bucket, and every version of every object the test ever stored, by ETag — so a
/// local file can be checked against the exact bytes of the version it claims to be, even after the object was
/// replaced or deleted on the server.
final class ReliabilityBucket: Sendable {
    static let accessKey = "reliability-key"
    static let secretKey = "reliability-secret"
    static let bucket = "photos"

    let server: FakeS3Server
    /// The bytes of every version stored, by MD5 ETag.
    private let versions = LockedBox<[String: Data]>([:])

    private init(server: FakeS3Server) { self.server = server }

    /// Starts a server (in memory) with the bucket; it stops when the test ends (``TestEnd``), if not before.
    static func start() async throws -> ReliabilityBucket {
        let server = try FakeS3Server(
            configuration: FakeS3Configuration(accessKeyID: accessKey, secretAccessKey: secretKey))
        try await server.start()
        TestEnd.run { try? await server.stop() }
        try server.createBucket(bucket)
        return ReliabilityBucket(server: server)
    }

    func stop() async { try? await server.stop() }

    /// Stores an object and remembers its version.
    @discardableResult
    func put(_ key: String, _ data: Data) throws -> String {
        remember(data)
        return try server.putObject(bucket: Self.bucket, key: key, data: data, metadata: ["media-type": "image"])
    }

    func delete(_ key: String) throws { try server.deleteObject(bucket: Self.bucket, key: key) }

    /// Remembers bytes the server will serve under their MD5 ETag (for faults that replace an object).
    func remember(_ data: Data) {
        let etag = Self.md5(data)
        versions.withLock { $0[etag] = data }
    }

    /// The bytes of the version with this ETag (quoted or not), if the test ever stored it.
    func version(etag: String) -> Data? {
        let bare = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        return versions.withLock { $0[bare] }
    }

    /// The ETags of the stored versions whose bytes at `offset` are `slice` (diagnostics for a failed check).
    func etags(matching slice: Data, at offset: Int64) -> [String] {
        versions.withLock { versions in
            versions.filter { _, data in
                offset + Int64(slice.count) <= Int64(data.count)
                    && data[Int(offset)..<Int(offset) + slice.count] == slice
            }.map(\.key).sorted()
        }
    }

    /// The server's current bytes of `key`.
    func current(_ key: String) throws -> Data? { try server.objectData(bucket: Self.bucket, key: key) }

    static func md5(_ data: Data) -> String {
        Insecure.MD5.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// A library configuration pointing at this server.
    func configuration(folder: URL, maxConnections: Int = 6, cacheSizeLimit: Int64? = nil)
        -> AssetLibrary.Configuration
    {
        var configuration = AssetLibrary.Configuration(storeURL: folder)
        configuration.endpoint = server.endpoint
        configuration.bucket = Self.bucket
        configuration.credentials = .static(accessKeyID: Self.accessKey, secretAccessKey: Self.secretKey)
        configuration.cacheSizeLimit = cacheSizeLimit
        configuration.maxConnections = maxConnections
        configuration.progressInterval = 0
        // These suites write the bucket as other tools do, behind the journal's back: every sync lists it (and
        // no library writes checkpoints).
        configuration.fullSyncInterval = 0
        configuration.checkpointInterval = 0
        return configuration
    }

    /// GET requests for `key` in the server's log.
    func gets(_ key: String) -> [RequestLogEntry] {
        server.requestLog.entries().filter { $0.method == "GET" && $0.key == key }
    }
}

/// A fresh folder under the temporary directory, removed by ``remove()``.
struct ScratchFolder {
    let url: URL

    init(_ label: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ReliabilityTests-\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }

    /// Every path under the folder with its size (directories with -1), for before/after comparisons.
    static func snapshot(_ folder: URL, excluding excluded: URL? = nil) -> [String: Int64] {
        var result: [String: Int64] = [:]
        let root = folder.resolvingSymlinksInPath().path
        let skip = excluded.map { $0.resolvingSymlinksInPath().path }
        guard let walker = FileManager.default.enumerator(atPath: root) else { return result }
        while let relative = walker.nextObject() as? String {
            let path = root + "/" + relative
            if let skip, path == skip || path.hasPrefix(skip + "/") { continue }
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            let isDirectory = (attributes?[.type] as? FileAttributeType) == .typeDirectory
            result[relative] = isDirectory ? -1 : ((attributes?[.size] as? NSNumber)?.int64Value ?? 0)
        }
        return result
    }
}
