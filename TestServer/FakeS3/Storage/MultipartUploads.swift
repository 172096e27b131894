import Crypto
import Essentials
import Foundation
import NIOCore

/// Multipart uploads in progress. Parts live where uploads in progress live (memory, or the storage
/// root's `tmp/`), so a restart discards unfinished uploads, as S3's lifecycle rules would eventually.
/// Thread-safe.
final class MultipartUploads: Sendable {
    struct Part {
        var number: Int
        var etag: String
        var size: Int64
        var md5: [UInt8]
        var lastModified: Date
        var target: UploadSink.Target
        /// The part's checksum of the upload's algorithm (base64), when the upload has one.
        var checksum: String?
    }

    /// How a multipart object's checksum covers it (`x-amz-checksum-type`).
    enum ChecksumType: String, Sendable {
        /// One checksum over the whole object's bytes (the CRCs only).
        case fullObject = "FULL_OBJECT"
        /// A checksum of the parts' checksums, written `<base64>-<parts>`.
        case composite = "COMPOSITE"
    }

    struct Upload {
        var id: String
        var bucket: String
        var key: String
        var initiated: Date
        var template: ObjectInfo
        var parts: [Int: Part] = [:]
        /// The algorithm every part carries (`x-amz-checksum-algorithm` at creation), nil for none.
        var checksumAlgorithm: ChecksumAlgorithm?
        var checksumType: ChecksumType?
    }

    /// S3's minimum size of every part but the last.
    static let minimumPartSize: Int64 = 5 << 20

    private let uploads = LockedBox<[String: Upload]>([:])

    func create(
        bucket: String, key: String, template: ObjectInfo, checksum: (ChecksumAlgorithm, ChecksumType)? = nil
    ) -> String {
        let id = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        var upload = Upload(id: id, bucket: bucket, key: key, initiated: Date(), template: template)
        upload.checksumAlgorithm = checksum?.0
        upload.checksumType = checksum?.1
        uploads.withLock { $0[id] = upload }
        return id
    }

    private static func noSuchUpload(_ id: String) -> S3Error {
        S3Error(
            status: 404, code: "NoSuchUpload",
            message:
                "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
            details: ["UploadId": id])
    }

    func upload(_ id: String, bucket: String, key: String) throws(S3Error) -> Upload {
        try uploads.withLock { (all: inout [String: Upload]) throws(S3Error) -> Upload in
            guard let u = all[id], u.bucket == bucket, u.key == key else { throw Self.noSuchUpload(id) }
            return u
        }
    }

    /// Stores a part, replacing an earlier part with the same number.
    func addPart(_ part: Part, to id: String, bucket: String, key: String) throws(S3Error) {
        let replaced = try uploads.withLock { (all: inout [String: Upload]) throws(S3Error) -> Part? in
            guard all[id]?.bucket == bucket, all[id]?.key == key else { throw Self.noSuchUpload(id) }
            let old = all[id]!.parts[part.number]
            all[id]!.parts[part.number] = part
            return old
        }
        if let replaced { Self.discard(replaced) }
    }

    /// Removes an upload and returns it (its parts are the caller's to use or discard).
    func remove(_ id: String, bucket: String, key: String) throws(S3Error) -> Upload {
        try uploads.withLock { (all: inout [String: Upload]) throws(S3Error) -> Upload in
            guard let u = all[id], u.bucket == bucket, u.key == key else { throw Self.noSuchUpload(id) }
            all[id] = nil
            return u
        }
    }

    func list(bucket: String) -> [Upload] {
        uploads.withLock { $0.values.filter { $0.bucket == bucket } }.sorted {
            KeyBytes($0.key) < KeyBytes($1.key) || ($0.key == $1.key && $0.initiated < $1.initiated)
        }
    }

    static func discard(_ part: Part) {
        if case .file(_, let path) = part.target { POSIX.remove(path) }
    }
}
