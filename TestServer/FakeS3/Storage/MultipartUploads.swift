import Essentials
import Foundation
import Hashing
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
        /// The upload's slot file, once a part went there.
        var slots: Slots?
    }

    /// One file per upload (on disk) where part N of a size no larger than the first part's (of at least 5 MiB)
    /// lands at (N − 1) × that size: when the parts completed are 1…n, all of that size but the last, the file cut after
    /// the last is the object, and completing copies nothing (as S3 clients send parts: one size, numbered from 1).
    /// A part that does not fit, or whose slot holds a recorded part or one being written, goes to a file of its
    /// own.
    struct Slots {
        var path: String
        /// The size of every slot (the first part's).
        var size: Int64
        /// Part numbers being written into their slots.
        var writing: Set<Int> = []
        /// Set while a completion adopts the file: no part is written into it meanwhile.
        var sealed = false
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

    /// Stores a part, replacing an earlier part with the same number (a part written into its slot leaves the
    /// slot's writers).
    func addPart(_ part: Part, to id: String, bucket: String, key: String) throws(S3Error) {
        let replaced = try uploads.withLock { (all: inout [String: Upload]) throws(S3Error) -> Part? in
            guard all[id]?.bucket == bucket, all[id]?.key == key else { throw Self.noSuchUpload(id) }
            let old = all[id]!.parts[part.number]
            all[id]!.parts[part.number] = part
            if case .slot = part.target { all[id]!.slots?.writing.remove(part.number) }
            return old
        }
        if let replaced { Self.discard(replaced) }
    }

    /// Reserves part `number`'s slot for a body of `size` bytes (see ``Slots``), making the upload's slot file
    /// under `directory` if it has none: where to write it, or nil when the part goes to a file of its own.
    func reserveSlot(_ id: String, bucket: String, key: String, number: Int, size: Int64, directory: String)
        -> (path: String, offset: Int64, capacity: Int64)?
    {
        uploads.withLock { all -> (path: String, offset: Int64, capacity: Int64)? in
            guard var upload = all[id], upload.bucket == bucket, upload.key == key, size > 0, number >= 1 else {
                return nil
            }
            // Only a part of the smallest size any part but the last may have sets the slots' size (a smaller one
            // can only be the last part).
            guard upload.slots != nil || size >= Self.minimumPartSize else { return nil }
            var slots = upload.slots ?? Slots(path: directory + "/" + id + ".slots", size: size)
            guard !slots.sealed, size <= slots.size, !slots.writing.contains(number) else { return nil }
            if case .slot = upload.parts[number]?.target { return nil }
            let (offset, overflow) = Int64(number - 1).multipliedReportingOverflow(by: slots.size)
            guard !overflow, offset <= Int64.max - slots.size else { return nil }
            slots.writing.insert(number)
            upload.slots = slots
            all[id] = upload
            return (slots.path, offset, slots.size)
        }
    }

    /// Gives back a slot whose part was abandoned.
    func releaseSlot(_ id: String, number: Int) {
        uploads.withLock { _ = $0[id]?.slots?.writing.remove(number) }
    }

    /// Seals the upload's slot file for a completion of `parts` (in order) when it holds them as the object: parts
    /// 1…n, every one but the last of the slot size, no other part recorded, none being written. Returns the file
    /// and the object's size, or nil (the parts are then copied).
    func sealSlots(_ id: String, parts: [Part]) -> (path: String, size: Int64)? {
        uploads.withLock { all -> (path: String, size: Int64)? in
            guard var upload = all[id], var slots = upload.slots, !slots.sealed, slots.writing.isEmpty,
                upload.parts.count == parts.count
            else { return nil }
            var size: Int64 = 0
            for (index, part) in parts.enumerated() {
                guard part.number == index + 1, case .slot = part.target,
                    index == parts.count - 1 ? part.size <= slots.size : part.size == slots.size
                else { return nil }
                size += part.size
            }
            slots.sealed = true
            upload.slots = slots
            all[id] = upload
            return (slots.path, size)
        }
    }

    /// Unseals a slot file whose completion failed.
    func unsealSlots(_ id: String) {
        uploads.withLock { _ = $0[id]?.slots?.sealed = false }
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

    /// Removes a part's own file (a part in a slot has none).
    static func discard(_ part: Part) {
        if case .file(_, let path) = part.target { POSIX.remove(path) }
    }

    /// Removes what a removed upload kept: its parts' files and its slot file.
    static func discard(_ upload: Upload) {
        for part in upload.parts.values { discard(part) }
        if let slots = upload.slots { POSIX.remove(slots.path) }
    }
}
