import AWSSigV4
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

/// The uploader against Ceph's RADOS Gateway. Runs only in the environment `scripts/ceph-rgw.sh start` prints
/// (`eval "$(scripts/ceph-rgw.sh start)"`, which sets `CEPH_RGW_DIR` and `AWS_ENDPOINT_URL`): single requests and
/// multipart uploads signed over `UNSIGNED-PAYLOAD` with CRC-32C checksums, read back byte for byte, and
/// create-only uploads to a taken key.
@Suite(.heavy, .enabled(if: ScriptedGateway.current != nil, "no gateway: eval \"$(scripts/ceph-rgw.sh start)\" first"))
struct UploaderRGWTests {
    /// A client and uploader for the gateway, a new bucket, and a folder for the files.
    static func start() async throws -> (S3Client, Uploader, String, URL) {
        let gateway = try #require(ScriptedGateway.current)
        let client = S3Client(
            configuration: S3ClientConfiguration(
                endpoint: gateway.endpoint, region: "us-east-1", credentials: gateway.credentials))
        let bucket = "uploads-\(UUID().uuidString.prefix(8).lowercased())"
        try await client.createBucket(bucket)
        let uploader = Uploader(
            client: client, configuration: UploaderConfiguration(partSize: UploaderTests.partSize))
        return (client, uploader, bucket, try makeTempDirectory())
    }

    @Test func singleAndMultipartUploadsReadBackByteForByte() async throws {
        let (client, uploader, bucket, folder) = try await Self.start()
        for (key, size) in [("small.jpg", 200_000), ("large.mov", Int(3 * UploaderTests.partSize) + 777)] {
            let data = fastBytes(size, seed: UInt64(size))
            let url = folder.appendingPathComponent(key)
            try data.write(to: url)
            let outcome = try await uploader.upload(
                UploadRequest(bucket: bucket, key: key, file: url), resumingFrom: nil, checkpoint: { _ in })
            guard case .created = outcome else {
                Issue.record("\(key): \(outcome)")
                continue
            }
            let (stored, _) = try await client.getObject(bucket: bucket, key: key)
            #expect(stored == data, "\(key)")
        }
    }

    @Test func createOnlyUploadsToATakenKeyReportTheObject() async throws {
        let (client, uploader, bucket, folder) = try await Self.start()
        for (key, size) in [("taken.jpg", 1000), ("taken.mov", Int(2 * UploaderTests.partSize))] {
            try await client.putObject(bucket: bucket, key: key, body: Data("first".utf8))
            let url = folder.appendingPathComponent(key)
            try fastBytes(size, seed: 3).write(to: url)
            let outcome = try await uploader.upload(
                UploadRequest(bucket: bucket, key: key, file: url), resumingFrom: nil, checkpoint: { _ in })
            guard case .keyExists(let head) = outcome else {
                Issue.record("\(key): \(outcome)")
                continue
            }
            #expect(head.size == 5)
            let (stored, _) = try await client.getObject(bucket: bucket, key: key)
            #expect(stored == Data("first".utf8))
        }
    }
}

/// The gateway `scripts/ceph-rgw.sh start` describes in the environment, if any.
enum ScriptedGateway {
    static let current: (endpoint: URL, credentials: AWSCredentials)? = {
        let environment = ProcessInfo.processInfo.environment
        guard environment["CEPH_RGW_DIR"] != nil, let text = environment["AWS_ENDPOINT_URL"],
            let endpoint = URL(string: text), let key = environment["AWS_ACCESS_KEY_ID"],
            let secret = environment["AWS_SECRET_ACCESS_KEY"]
        else { return nil }
        return (endpoint, AWSCredentials(accessKeyID: key, secretAccessKey: secret))
    }()
}
