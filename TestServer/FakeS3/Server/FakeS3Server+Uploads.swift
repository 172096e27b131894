import Foundation

extension FakeS3Server {
    /// The multipart uploads in progress in a bucket (what ListMultipartUploads lists), by key then start time.
    /// - Throws: ``S3Error`` `NoSuchBucket`.
    public func multipartUploads(bucket: String) throws -> [(key: String, uploadId: String)] {
        guard core.store.bucketExists(bucket) else { throw S3Error.noSuchBucket(bucket) }
        return core.service.multipart.list(bucket: bucket).map { ($0.key, $0.id) }
    }

    /// The checksums stored with an object (by lower-case algorithm name, base64, a composite one ending in
    /// `-<parts>`) and their type (`FULL_OBJECT` or `COMPOSITE`); nil when there is no such key.
    /// - Throws: ``S3Error`` `NoSuchBucket`.
    public func objectChecksums(bucket: String, key: String) throws -> (checksums: [String: String], type: String?)? {
        guard core.store.bucketExists(bucket) else { throw S3Error.noSuchBucket(bucket) }
        guard let info = try? core.store.info(bucket: bucket, key: key) else { return nil }
        return (info.checksums, info.checksumType)
    }
}
