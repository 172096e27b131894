/// The S3 API call a request makes, decided from its method, addressing and query.
enum S3Operation: Equatable {
    case listBuckets
    case createBucket(bucket: String)
    case headBucket(bucket: String)
    case deleteBucket(bucket: String)
    case getBucketLocation(bucket: String)
    case listObjectsV1(bucket: String)
    case listObjectsV2(bucket: String)
    case listObjectVersions(bucket: String)
    case deleteObjects(bucket: String)
    case getObject(bucket: String, key: String)
    case headObject(bucket: String, key: String)
    case putObject(bucket: String, key: String)
    case copyObject(bucket: String, key: String)
    case deleteObject(bucket: String, key: String)
    case createMultipartUpload(bucket: String, key: String)
    case uploadPart(bucket: String, key: String)
    case completeMultipartUpload(bucket: String, key: String)
    case abortMultipartUpload(bucket: String, key: String)
    case listParts(bucket: String, key: String)
    case listMultipartUploads(bucket: String)

    /// Whether an anonymous request may make this call on a public bucket.
    var isRead: Bool {
        switch self {
        case .headBucket, .getBucketLocation, .listObjectsV1, .listObjectsV2, .listObjectVersions, .getObject,
            .headObject:
            true
        default: false
        }
    }

    /// Whether the request body is object data to stream to storage (rather than a small XML document).
    var receivesObjectData: Bool {
        switch self {
        case .putObject, .uploadPart: true
        default: false
        }
    }

    var bucket: String? {
        switch self {
        case .listBuckets: nil
        case .createBucket(let b), .headBucket(let b), .deleteBucket(let b), .getBucketLocation(let b),
            .listObjectsV1(let b), .listObjectsV2(let b), .listObjectVersions(let b), .deleteObjects(let b),
            .listMultipartUploads(let b):
            b
        case .getObject(let b, _), .headObject(let b, _), .putObject(let b, _), .copyObject(let b, _),
            .deleteObject(let b, _), .createMultipartUpload(let b, _), .uploadPart(let b, _),
            .completeMultipartUpload(let b, _), .abortMultipartUpload(let b, _), .listParts(let b, _):
            b
        }
    }

    /// Decides the operation.
    /// - Throws: `MethodNotAllowed` or `NotImplemented` for calls the server does not offer.
    static func route(_ r: S3Request) throws(S3Error) -> S3Operation {
        let m = r.method
        guard let bucket = r.bucket else {
            guard m == "GET" else { throw .methodNotAllowed }
            return .listBuckets
        }
        guard let key = r.key else {
            switch m {
            case "GET":
                if r.hasQuery("location") { return .getBucketLocation(bucket: bucket) }
                if r.hasQuery("versions") { return .listObjectVersions(bucket: bucket) }
                if r.hasQuery("uploads") { return .listMultipartUploads(bucket: bucket) }
                for unsupported in bucketSubresources where r.hasQuery(unsupported) { throw .notImplemented }
                return r.queryValue("list-type") == "2"
                    ? .listObjectsV2(bucket: bucket) : .listObjectsV1(bucket: bucket)
            case "HEAD": return .headBucket(bucket: bucket)
            case "PUT":
                for unsupported in bucketSubresources where r.hasQuery(unsupported) { throw .notImplemented }
                return .createBucket(bucket: bucket)
            case "DELETE":
                for unsupported in bucketSubresources where r.hasQuery(unsupported) { throw .notImplemented }
                return .deleteBucket(bucket: bucket)
            case "POST":
                if r.hasQuery("delete") { return .deleteObjects(bucket: bucket) }
                throw .notImplemented
            default: throw .methodNotAllowed
            }
        }
        for unsupported in objectSubresources where r.hasQuery(unsupported) { throw .notImplemented }
        switch m {
        case "GET":
            if r.hasQuery("uploadId") { return .listParts(bucket: bucket, key: key) }
            return .getObject(bucket: bucket, key: key)
        case "HEAD": return .headObject(bucket: bucket, key: key)
        case "PUT":
            if r.hasQuery("uploadId") || r.hasQuery("partNumber") { return .uploadPart(bucket: bucket, key: key) }
            if r.header("x-amz-copy-source") != nil { return .copyObject(bucket: bucket, key: key) }
            return .putObject(bucket: bucket, key: key)
        case "DELETE":
            if r.hasQuery("uploadId") { return .abortMultipartUpload(bucket: bucket, key: key) }
            return .deleteObject(bucket: bucket, key: key)
        case "POST":
            if r.hasQuery("uploads") { return .createMultipartUpload(bucket: bucket, key: key) }
            if r.hasQuery("uploadId") { return .completeMultipartUpload(bucket: bucket, key: key) }
            throw .methodNotAllowed
        default: throw .methodNotAllowed
        }
    }

    private static let bucketSubresources = [
        "acl", "policy", "cors", "lifecycle", "tagging", "website", "logging", "notification", "replication",
        "encryption", "versioning", "accelerate", "requestPayment", "object-lock", "ownershipControls",
        "publicAccessBlock", "analytics", "metrics", "inventory", "intelligent-tiering",
    ]
    private static let objectSubresources = [
        "acl", "tagging", "torrent", "retention", "legal-hold", "restore", "select", "attributes",
    ]
}
