import AssetStore
import Foundation
import S3Transfer

extension AssetLibrary {
    /// Reads a byte range of the asset's original, downloading only the parts not yet on this computer — like
    /// `ALAssetRepresentation`'s `getBytes(_:fromOffset:length:)`.
    ///
    /// Bytes fetched are written into the asset's sparse range file, verified against the ETag they were
    /// fetched under, and recorded in one transaction: the asset becomes `partial` (observers see it) unless it
    /// already was `full`. Ranges already present are served from disk without a request. Fetched ranges count
    /// against ``Configuration/cacheSizeLimit`` like originals (other assets may be evicted to make room).
    /// - Parameters:
    ///   - asset: The asset.
    ///   - range: Bytes of the original, clamped to its size; empty ranges return empty data.
    ///   - isNetworkAccessAllowed: Whether missing bytes may be downloaded (the library's policy applies too).
    /// - Returns: The bytes.
    /// - Throws: ``AssetRequestError/inCloud(key:)`` when bytes are missing and the network is not allowed;
    ///   ``AssetRequestError/invalidRange(_:size:)``; ``AssetRequestError/objectChanged(key:)`` when the object
    ///   changed on the server (sync, then read again); transfer errors.
    public func read(_ asset: Asset, range: Range<Int64>, isNetworkAccessAllowed: Bool = true) async throws -> Data {
        guard let record = try store.record(id: asset.id) else {
            throw AssetRequestError.assetDeleted(localIdentifier: asset.id)
        }
        guard range.lowerBound >= 0, range.lowerBound <= record.size else {
            throw AssetRequestError.invalidRange(range, size: record.size)
        }
        let wanted = range.lowerBound..<min(range.upperBound, record.size)
        if wanted.isEmpty { return Data() }
        runtime.noteAccess(asset.id)
        if let url = verifiedOriginal(of: record) {
            return try Self.readBytes(at: url, range: wanted)
        }
        let rangeFile = files.partial(id: asset.id)
        let present: ByteRangeSet =
            record.availability == .partial && record.partialETag == record.etag
            ? record.partialRanges : ByteRangeSet()
        let missing = present.missing(in: wanted)
        if !missing.isEmpty {
            guard isNetworkAccessAllowed, isNetworkAllowed(userRequest: true) else {
                throw AssetRequestError.inCloud(key: record.key)
            }
            let remote = try requireRemote()
            // The range file is never truncated here: another read of this asset may be writing into it, and bytes
            // outside the recorded ranges are never served.
            var fetched = ByteRangeSet()
            do {
                for piece in missing {
                    do {
                        try await RangeFetch.fetch(
                            client: remote.client, bucket: configuration.bucket, key: record.key, range: piece,
                            etag: record.etag, into: rangeFile)
                    } catch S3Error.preconditionFailed {
                        throw AssetRequestError.objectChanged(key: record.key)
                    } catch S3Error.noSuchKey {
                        try? removeAssets([asset.id])
                        throw AssetRequestError.assetDeleted(localIdentifier: asset.id)
                    }
                    fetched.insert(piece)
                }
            } catch {
                // With no range recorded, no one can use the file's bytes: do not leave them taking space (a full
                // disk stays full otherwise). A concurrent read of the same asset then fails its commit check
                // ("the range file was removed") rather than recording bytes that are gone.
                // Checked and removed under the write lock, so no concurrent commit can record ranges in between.
                try? performWrite { tx in
                    if try tx.record(asset.id)?.availability != .partial {
                        try? FileManager.default.removeItem(at: rangeFile)
                    }
                }
                throw error
            }
            if try !commitRanges(assetID: asset.id, adding: fetched, etag: record.etag, file: rangeFile) {
                // A download verified the whole original meanwhile (the range file is gone): answer from it.
                if let latest = try store.record(id: asset.id), let url = verifiedOriginal(of: latest) {
                    return try Self.readBytes(at: url, range: wanted)
                }
                throw AssetRequestError.objectChanged(key: record.key)
            }
            try enforceCacheLimit(keeping: asset.id)
        }
        do {
            return try Self.readBytes(at: rangeFile, range: wanted)
        } catch {
            // A download of the whole original may have completed meanwhile (it removes the range file).
            if let latest = try store.record(id: asset.id), let url = verifiedOriginal(of: latest) {
                return try Self.readBytes(at: url, range: wanted)
            }
            throw error
        }
    }

    /// Records verified ranges, merged with the ranges already recorded under the same ETag (other reads of the
    /// asset may have committed meanwhile), in one transaction: the asset becomes `partial` (unless it is `full` by
    /// now). Ranges whose bytes are no longer in the file (the asset was evicted during the read) are not recorded.
    /// - Returns: `false` when nothing was recorded because the asset became `full` meanwhile.
    @discardableResult
    func commitRanges(assetID: Int64, adding pieces: ByteRangeSet, etag: String, file: URL) throws -> Bool {
        guard let end = pieces.ranges.last?.upperBound else { return true }
        return try performWrite { tx -> Bool in
            guard let current = try tx.record(assetID) else {
                throw AssetRequestError.assetDeleted(localIdentifier: assetID)
            }
            guard current.etag == etag else { throw AssetRequestError.objectChanged(key: current.key) }
            guard current.availability != .full else {
                // Under the write lock: nothing refers to the range file once the original is verified.
                try? FileManager.default.removeItem(at: file)
                return false
            }
            let onDisk = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber
            guard let onDisk, onDisk.int64Value >= end else {
                throw AssetRequestError.localFile(path: file.path, reason: "the range file was removed during the read")
            }
            var ranges =
                current.availability == .partial && current.partialETag == etag ? current.partialRanges : ByteRangeSet()
            for piece in pieces.ranges { ranges.insert(piece) }
            _ = try tx.update(assetID) { record in
                record.availability = .partial
                record.partialRanges = ranges
                record.partialETag = etag
            }
            return true
        }
    }

    static func readBytes(at url: URL, range: Range<Int64>) throws -> Data {
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(range.lowerBound))
            let data = try handle.read(upToCount: Int(range.count)) ?? Data()
            guard data.count == range.count else {
                throw AssetRequestError.localFile(path: url.path, reason: "file is shorter than its recorded ranges")
            }
            return data
        } catch let error as AssetRequestError {
            throw error
        } catch {
            throw AssetRequestError.localFile(path: url.path, reason: "\(error)")
        }
    }
}

/// Fetches one byte range with `If-Match` on the ETag the other ranges belong to, and writes it at its offset
/// in the asset's sparse range file (fsynced before the range is recorded).
enum RangeFetch {
    static func fetch(
        client: S3Client, bucket: String, key: String, range: Range<Int64>, etag: String, into url: URL
    ) async throws {
        let (data, head) = try await client.getObject(bucket: bucket, key: key, range: range, ifMatch: etag)
        guard ETag.same(head.etag, etag) else { throw AssetRequestError.objectChanged(key: key) }
        guard data.count == range.count else {
            throw S3Error.malformedResponse("asked for \(range.count) bytes of \(key), got \(data.count)")
        }
        let fd = open(url.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw AssetRequestError.localFile(path: url.path, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        try data.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let n = pwrite(
                    fd, buffer.baseAddress! + written, buffer.count - written, off_t(range.lowerBound) + off_t(written))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw AssetRequestError.localFile(path: url.path, reason: String(cString: strerror(errno)))
                }
                written += n
            }
        }
        guard fsync(fd) == 0 else {
            throw AssetRequestError.localFile(path: url.path, reason: String(cString: strerror(errno)))
        }
    }
}
