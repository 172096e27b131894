import AssetStore
import Essentials
import Foundation
import Images
import S3Transfer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension OriginalsCache {
    func readRetrying(_ asset: Asset, range: Range<Int64>, isNetworkAccessAllowed: Bool) async throws -> Data {
        var round = 1
        while true {
            do {
                return try await readOnce(asset, range: range, isNetworkAccessAllowed: isNetworkAccessAllowed)
            } catch is RangeFileRace where round < 3 {
                round += 1
            } catch let race as RangeFileRace {
                throw AssetRequestError.localFile(path: files.partial(id: asset.rowID).path, reason: race.reason)
            }
        }
    }

    /// The asset's range file was removed or replaced while a read used it: the read starts again.
    struct RangeFileRace: Error {
        let reason: String
    }

    private func readOnce(_ asset: Asset, range: Range<Int64>, isNetworkAccessAllowed: Bool) async throws -> Data {
        guard let record = try catalog.store.record(id: asset.rowID) else {
            throw AssetRequestError.assetDeleted(localIdentifier: asset.rowID)
        }
        // HTTP's rule: a range that starts at or past the end is not satisfiable (an empty range at the end is).
        guard range.lowerBound >= 0,
            range.lowerBound < record.size || (range.isEmpty && range.lowerBound == record.size)
        else {
            throw AssetRequestError.invalidRange(range, size: record.size)
        }
        let wanted = range.lowerBound..<min(range.upperBound, record.size)
        if wanted.isEmpty { return Data() }
        downloads.noteAccess(asset.rowID)
        if let url = verifiedOriginal(of: record) {
            return try Self.readBytes(at: url, range: wanted)
        }
        let url = files.partial(id: asset.rowID)
        // The recorded ranges describe the file only if it was still in place after they were read (files are
        // removed together with their record change, under the write lock).
        var file = try RangeFile(url: url, create: false)
        var present = ByteRangeSet()
        if let opened = file, let now = try catalog.store.record(id: asset.rowID), now.etag == record.etag,
            now.availability == .partial, now.partialETag == now.etag, try opened.isInPlace()
        {
            present = now.partialRanges
        }
        let missing = present.missing(in: wanted)
        if missing.isEmpty, let file { return try file.read(wanted) }
        guard isNetworkAccessAllowed, network.allows(userRequest: true) else {
            throw AssetRequestError.inCloud(
                key: record.key, localIdentifier: record.id,
                refusedBy: NetworkRefusal(requestAllowed: isNetworkAccessAllowed))
        }
        let remote = try remote.checked()
        if try file?.isInPlace() != true { file = try RangeFile(url: url, create: true) }
        guard let file else {
            throw AssetRequestError.localFile(path: url.path, reason: "the range file was not created")
        }
        // The range file is never truncated here: another read of this asset may be writing into it, and bytes
        // outside the recorded ranges are never served.
        var fetched = ByteRangeSet()
        do {
            for piece in missing {
                do {
                    try await RangeFetch.fetch(
                        client: remote.client, bucket: configuration.bucket, key: record.key, range: piece,
                        etag: record.etag, into: file)
                } catch S3Error.preconditionFailed {
                    throw AssetRequestError.objectChanged(key: record.key)
                } catch S3Error.noSuchKey {
                    // try?: the asset is gone from the bucket; a sync removes it otherwise
                    try? await removeAssets([asset.rowID])
                    throw AssetRequestError.assetDeleted(localIdentifier: asset.rowID)
                }
                fetched.insert(piece)
            }
        } catch {
            // With no range recorded, no one can use the file's bytes: do not leave them taking space (a full
            // disk stays full otherwise). A concurrent read of the same asset then finds its file gone at its
            // commit and starts again. Checked and removed under the write lock, so no concurrent commit can record
            // ranges in between. try?: a file not removed now is removed by the next eviction or open.
            try? await catalog.performWrite { tx in
                if try tx.record(asset.rowID)?.availability != .partial, try file.isInPlace() {
                    // try?: our own range file; one left only takes room (no row names it)
                    try? FileManager.default.removeItem(at: url)
                }
            }
            throw error
        }
        switch try await commitRanges(assetID: asset.rowID, adding: fetched, etag: record.etag, file: file) {
        case .recorded(let ranges):
            // Ranges counted as present may have gone with a file removed before this read opened its own.
            guard ranges.missing(in: wanted).isEmpty else {
                throw RangeFileRace(reason: "the ranges read earlier were removed during the read")
            }
            try await enforceCacheLimit(keeping: asset.rowID)
            return try file.read(wanted)
        case .originalVerified:
            // A download verified the whole original meanwhile (the range file is gone): answer from it.
            if let latest = try catalog.store.record(id: asset.rowID), let original = verifiedOriginal(of: latest) {
                return try Self.readBytes(at: original, range: wanted)
            }
            throw AssetRequestError.objectChanged(key: record.key)
        }
    }

    /// What ``commitRanges(assetID:adding:etag:file:)`` did.
    enum RangeCommit: Equatable {
        /// The ranges were recorded; the asset's recorded ranges are now these (under the ETag committed).
        case recorded(ByteRangeSet)
        /// Nothing was recorded: the asset became `full` meanwhile (and its range file was removed).
        case originalVerified
    }

    /// Records verified ranges, merged with the ranges already recorded under the same ETag (other reads of the
    /// asset may have committed meanwhile), in one transaction: the asset becomes `partial` (unless it is `full` by
    /// now). Nothing is recorded unless `file` is still the asset's range file: bytes written into a file that an
    /// eviction or a sync removed during the read (a new file may stand at the path by now) are not the new file's.
    /// - Throws: ``RangeFileRace`` when the file was removed or replaced; ``CloudAssetsError/Code/objectChanged``
    ///   when the asset's ETag is no longer `etag`; ``CloudAssetsError/Code/assetDeleted``.
    func commitRanges(assetID: Int64, adding pieces: ByteRangeSet, etag: String, file: RangeFile) async throws
        -> RangeCommit
    {
        try await catalog.performWrite { tx -> RangeCommit in
            guard let current = try tx.record(assetID) else {
                throw AssetRequestError.assetDeleted(localIdentifier: assetID)
            }
            guard current.etag == etag else { throw AssetRequestError.objectChanged(key: current.key) }
            guard current.availability != .full else {
                // Under the write lock: nothing refers to the range file once the original is verified.
                // try?: our own range file; one left only takes room (no row names it)
                if try file.isInPlace() { try? FileManager.default.removeItem(at: file.url) }
                return .originalVerified
            }
            guard try file.isInPlace() else {
                throw RangeFileRace(reason: "the range file was removed during the read")
            }
            var ranges =
                current.availability == .partial && current.partialETag == etag ? current.partialRanges : ByteRangeSet()
            guard !pieces.ranges.isEmpty else { return .recorded(ranges) }
            for piece in pieces.ranges { ranges.insert(piece) }
            _ = try tx.update(assetID) { record in
                record.availability = .partial
                record.partialRanges = ranges
                record.partialETag = etag
            }
            telemetry.transition(
                "availability", asset: assetID, key: current.key,
                ["to": "partial", "bytes": "\(ranges.totalBytes)"])
            return .recorded(ranges)
        }
    }

    static func readBytes(at url: URL, range: Range<Int64>) throws -> Data {
        do {
            let data = try LocalFile.read(url, offset: range.lowerBound, count: Int(range.count))
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

/// An asset's sparse range file, opened once for one read: every piece the read fetches is written through this
/// descriptor and the answer is read through it, so the read never touches a different file that took its path.
/// ``isInPlace()`` tells whether the path still names this file (the descriptor keeps the file alive, so its
/// inode number cannot be reused while it is open).
final class RangeFile: Sendable {
    let url: URL
    private let fd: Int32

    /// Opens the file for reading and writing; `nil` when it does not exist and `create` is false.
    init?(url: URL, create: Bool) throws {
        let flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0)
        let fd = open(url.path, flags, 0o644)
        if fd < 0 {
            if errno == ENOENT && !create { return nil }
            throw AssetRequestError.localFile(path: url.path, reason: String(cString: strerror(errno)))
        }
        self.url = url
        self.fd = fd
    }

    deinit { close(fd) }

    /// Whether the path still names this file (not removed, not replaced by a new file).
    func isInPlace() throws -> Bool {
        var mine = stat()
        guard fstat(fd, &mine) == 0 else {
            throw AssetRequestError.localFile(path: url.path, reason: String(cString: strerror(errno)))
        }
        var there = stat()
        guard stat(url.path, &there) == 0 else { return false }
        return mine.st_dev == there.st_dev && mine.st_ino == there.st_ino && mine.st_nlink > 0
    }

    /// Writes `data` at `offset` and syncs it (`fdatasync`: the range is recorded only after this returns).
    func write(_ data: Data, at offset: Int64) throws {
        try data.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let n = pwrite(
                    fd, buffer.baseAddress! + written, buffer.count - written, off_t(offset) + off_t(written))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw AssetRequestError.localFile(path: url.path, reason: String(cString: strerror(errno)))
                }
                written += n
            }
        }
        guard fdatasync(fd) == 0 else {
            throw AssetRequestError.localFile(path: url.path, reason: String(cString: strerror(errno)))
        }
    }

    /// Reads exactly `range`.
    func read(_ range: Range<Int64>) throws -> Data {
        var data = Data(count: Int(range.count))
        let count = data.count
        try data.withUnsafeMutableBytes { buffer in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(range.lowerBound) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw AssetRequestError.localFile(path: url.path, reason: String(cString: strerror(errno)))
                }
                guard n > 0 else {
                    throw AssetRequestError.localFile(
                        path: url.path, reason: "file is shorter than its recorded ranges")
                }
                done += n
            }
        }
        return data
    }
}

/// Fetches one byte range with `If-Match` on the ETag the other ranges belong to, and writes it at its offset
/// in the asset's range file (fsynced before the range is recorded).
enum RangeFetch {
    static func fetch(
        client: S3Client, bucket: String, key: String, range: Range<Int64>, etag: String, into file: RangeFile
    ) async throws {
        let (data, head) = try await client.getObject(bucket: bucket, key: key, range: range, ifMatch: etag)
        guard S3ETag.same(head.etag, etag) else { throw AssetRequestError.objectChanged(key: key) }
        guard data.count == range.count else {
            throw S3Error.malformedResponse("asked for \(range.count) bytes of \(key), got \(data.count)")
        }
        try file.write(data, at: range.lowerBound)
    }
}
