import Essentials
import Foundation
import NIOCore
import NIOHTTP1

/// The S3 API implemented over an ``ObjectStore``: one method per operation, each turning a parsed
/// request into a response or throwing the ``S3Error`` a client should see. Thread-safe.
struct S3Service: Sendable {
    let store: ObjectStore
    let region: String
    /// Whether writes compare `If-Match` as Ceph's RADOS Gateway 16 does (``FakeS3Configuration/comparesBareIfMatch``).
    var comparesBareIfMatch = false
    let multipart = MultipartUploads()
    /// Keys a conditional write is being made to (between its check and its commit).
    let conditionalWrites = ConditionalWrites()
    let allocator = ByteBufferAllocator()
    static let ownerID = "75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a"
    static let ownerName = "fake-s3"

    /// What arrived in the request body.
    enum RequestBody {
        case none
        /// A small document (XML for DeleteObjects, CompleteMultipartUpload, CreateBucket).
        case buffer(ByteBuffer)
        /// Object data streamed to storage.
        case upload(UploadReceiver)

        var buffer: ByteBuffer? {
            if case .buffer(let b) = self { return b }
            return nil
        }
    }

    /// Switches a fault injector may flip for one request.
    struct Options {
        var ignoreRange = false
    }

    func execute(
        _ op: S3Operation, _ request: S3Request, body: RequestBody, options: Options = Options()
    ) throws(S3Error) -> S3Response {
        switch op {
        case .listBuckets: return listBuckets()
        case .createBucket(let b): return try createBucket(b)
        case .headBucket(let b): return try headBucket(b)
        case .deleteBucket(let b): return try deleteBucket(b)
        case .getBucketLocation(let b): return try bucketLocation(b)
        case .listObjectsV2(let b): return try listObjectsV2(b, request)
        case .listObjectsV1(let b): return try listObjectsV1(b, request)
        case .getObject(let b, let k):
            return try getObject(b, k, request, includeBody: true, ignoreRange: options.ignoreRange)
        case .headObject(let b, let k):
            return try getObject(b, k, request, includeBody: false, ignoreRange: options.ignoreRange)
        case .putObject(let b, let k):
            guard case .upload(let receiver) = body else { throw .internalError }
            return try putObject(b, k, request, receiver)
        case .deleteObject(let b, let k):
            if let ifMatch = request.header("if-match") {
                try store.deleteObject(bucket: b, key: k) { etag throws(S3Error) in
                    guard writeIfMatch(ifMatch, matches: etag) else { throw .preconditionFailed }
                }
            } else {
                try store.deleteObject(bucket: b, key: k)
            }
            return S3Response(status: .noContent)
        case .listObjectVersions(let b): return try listObjectVersions(b, request)
        case .deleteObjects(let b):
            return try deleteObjects(b, body: body.buffer)
        case .copyObject(let b, let k): return try copyObject(b, k, request, allocator: allocator)
        case .createMultipartUpload(let b, let k): return try createMultipartUpload(b, k, request)
        case .uploadPart(let b, let k):
            guard case .upload(let receiver) = body else { throw .internalError }
            return try uploadPart(b, k, request, receiver)
        case .completeMultipartUpload(let b, let k):
            return try completeMultipartUpload(b, k, request, body: body.buffer, allocator: allocator)
        case .uploadPartCopy(let b, let k): return try uploadPartCopy(b, k, request)
        case .abortMultipartUpload(let b, let k): return try abortMultipartUpload(b, k, request)
        case .listParts(let b, let k): return try listParts(b, k, request)
        case .listMultipartUploads(let b): return try listMultipartUploads(b)
        }
    }

    // MARK: Buckets

    func listBuckets() -> S3Response {
        var x = XMLWriter()
        x.open("ListAllMyBucketsResult")
        x.open("Owner", namespace: false)
        x.element("ID", Self.ownerID)
        x.element("DisplayName", Self.ownerName)
        x.close("Owner")
        x.open("Buckets", namespace: false)
        for bucket in store.listBuckets() {
            x.open("Bucket", namespace: false)
            x.element("Name", bucket.name)
            x.element("CreationDate", HTTPDate.iso8601(bucket.creationDate))
            x.close("Bucket")
        }
        x.close("Buckets")
        x.close("ListAllMyBucketsResult")
        return .xml(x.document)
    }

    func createBucket(_ bucket: String) throws(S3Error) -> S3Response {
        try store.createBucket(bucket)
        var headers = HTTPHeaders()
        headers.add(name: "Location", value: "/\(bucket)")
        return S3Response(status: .ok, headers: headers)
    }

    func headBucket(_ bucket: String) throws(S3Error) -> S3Response {
        guard store.bucketExists(bucket) else { throw .noSuchBucket(bucket) }
        var headers = HTTPHeaders()
        headers.add(name: "x-amz-bucket-region", value: region)
        return S3Response(status: .ok, headers: headers)
    }

    func deleteBucket(_ bucket: String) throws(S3Error) -> S3Response {
        try store.deleteBucket(bucket)
        return S3Response(status: .noContent)
    }

    func bucketLocation(_ bucket: String) throws(S3Error) -> S3Response {
        guard store.bucketExists(bucket) else { throw .noSuchBucket(bucket) }
        var x = XMLWriter()
        x.open("LocationConstraint")
        if region != "us-east-1" { x.text(region) }
        x.close("LocationConstraint")
        return .xml(x.document)
    }
}

/// The keys conditional writes are in flight to: a second conditional write to a key while one is in flight gets
/// `409 ConditionalRequestConflict`, as S3 answers. Thread-safe.
final class ConditionalWrites: Sendable {
    private let keys = LockedBox<Set<String>>([])

    /// Claims the key; false when a conditional write to it is already in flight.
    func begin(bucket: String, key: String) -> Bool {
        keys.withLock { $0.insert(bucket + "/" + key).inserted }
    }

    func end(bucket: String, key: String) {
        _ = keys.withLock { $0.remove(bucket + "/" + key) }
    }
}
