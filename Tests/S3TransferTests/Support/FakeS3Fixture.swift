import AWSSigV4
import FakeS3
import Foundation

@testable import S3Transfer

/// A running in-memory fake S3 with one bucket, and a client and downloader pointed at it.
struct FakeS3Fixture {
    static let credentials = AWSCredentials(accessKeyID: "test-key", secretAccessKey: "test-secret")
    static let bucket = "photos"

    let server: FakeS3Server
    let client: S3Client
    let downloader: Downloader
    let directory: URL

    /// The stall timeout is long by default: on two cores shared with a parallel test run, a starved in-process
    /// server can pause for seconds, and a spurious stall would add an attempt the tests count. Tests of stalls
    /// pass a short one.
    static func start(
        maxAttempts: Int = 5, stallTimeout: TimeInterval = 20, progressInterval: Int = 0,
        networkPolicy: NetworkPolicy = .allowed, clockError: TimeInterval = 0, maxDelay: TimeInterval = 0.01
    ) async throws -> FakeS3Fixture {
        let server = try FakeS3Server(
            configuration: FakeS3Configuration(
                accessKeyID: credentials.accessKeyID, secretAccessKey: credentials.secretAccessKey))
        try await server.start()
        try server.createBucket(bucket)
        let client = S3Client(
            configuration: S3ClientConfiguration(
                endpoint: server.endpoint, region: "us-east-1", credentials: credentials,
                retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 0.001, maxDelay: maxDelay)),
            engine: nil, localClock: { Date().addingTimeInterval(clockError) })
        let downloader = Downloader(
            client: client,
            configuration: DownloaderConfiguration(
                maxConnections: 4,
                retryPolicy: RetryPolicy(maxAttempts: maxAttempts, baseDelay: 0.001, maxDelay: maxDelay),
                progressInterval: progressInterval, stallTimeout: stallTimeout, networkPolicy: networkPolicy))
        return FakeS3Fixture(server: server, client: client, downloader: downloader, directory: try makeTempDirectory())
    }

    /// Stores an object and returns its bytes.
    @discardableResult
    func put(_ key: String, size: Int, seed: UInt64 = 1, crc32: Bool = false) throws -> Data {
        let data = testBytes(size, seed: seed)
        try server.putObject(bucket: Self.bucket, key: key, data: data, checksumCRC32: crc32)
        return data
    }

    func request(
        _ key: String, file: String = "out.bin", progress: (@Sendable (DownloadProgress, inout Bool) -> Void)? = nil
    )
        -> DownloadRequest
    {
        DownloadRequest(
            bucket: Self.bucket, key: key, destination: directory.appendingPathComponent(file), progress: progress)
    }

    func gets(_ key: String) -> [RequestLogEntry] {
        server.requestLog.entries().filter { $0.method == "GET" && $0.key == key }
    }

    func stop() async {
        try? await server.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
