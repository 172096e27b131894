// INTERIM (replaced by the uploader branch before merge): single-request uploads only.
import Foundation

public struct UploadProgress: Sendable, Hashable {
    public var bytesSent: Int64
    public var totalBytes: Int64
}

public struct UploadRequest: Sendable {
    public var bucket: String
    public var key: String
    public var file: URL
    public var contentType: String?
    public var metadata: [String: String]
    public var createOnly = true
    public var isUserRequest = false
    public var networkAccessAllowed = true
    public var progress: (@Sendable (UploadProgress, inout Bool) -> Void)?

    public init(bucket: String, key: String, file: URL, contentType: String?, metadata: [String: String]) {
        self.bucket = bucket
        self.key = key
        self.file = file
        self.contentType = contentType
        self.metadata = metadata
    }
}

public struct UploadedPart: Sendable, Hashable, Codable {
    public var number: Int
    public var etag: String
}

public struct UploadCheckpoint: Sendable, Hashable, Codable {
    public var uploadId: String
    public var key: String
    public var partSize: Int64
    public var size: Int64
    public var parts: [UploadedPart]
}

public enum UploadOutcome: Sendable, Hashable {
    case created(etag: String, checksums: S3Checksums)
    case keyExists(S3ObjectHead)
}

public struct UploaderConfiguration: Sendable {
    public var partSize: Int64 = 8 << 20
    public var multipartThreshold: Int64 = 8 << 20
    public var maxConcurrentParts = 4
    public var networkPolicy: NetworkPolicy = .allowed
    public init() {}
}

public final class Uploader: Sendable {
    let client: S3Client
    public init(client: S3Client, configuration: UploaderConfiguration = .init()) { self.client = client }

    public func upload(
        _ request: UploadRequest, resumingFrom: UploadCheckpoint?,
        checkpoint: @escaping @Sendable (UploadCheckpoint?) throws -> Void
    ) async throws(S3Error) -> UploadOutcome {
        guard let body = try? Data(contentsOf: request.file) else { throw .malformedResponse("unreadable file") }
        do {
            var headers: [(name: String, value: String)] = [("content-length", String(body.count))]
            if let t = request.contentType { headers.append(("content-type", t)) }
            for (n, v) in request.metadata.sorted(by: { $0.key < $1.key }) { headers.append(("x-amz-meta-\(n)", v)) }
            if request.createOnly { headers.append(("if-none-match", "*")) }
            let (head, _) = try await client.send {
                client.makeRequest(
                    method: "PUT", bucket: request.bucket, key: request.key, headers: headers, body: body)
            }
            return .created(etag: S3ETag.unquoted(head["etag"] ?? ""), checksums: S3Checksums())
        } catch .preconditionFailed {
            return .keyExists(try await client.headObject(bucket: request.bucket, key: request.key))
        }
    }

    public func abort(_ checkpoint: UploadCheckpoint, bucket: String) async throws(S3Error) {
        try await client.abortMultipartUpload(bucket: bucket, key: checkpoint.key, uploadId: checkpoint.uploadId)
    }
}
