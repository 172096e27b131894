import AWSSigV4
import CZlib
import Foundation
import Hashing

/// One integrity check a download passed.
package enum IntegrityCheck: String, Sendable, Hashable, Codable, CaseIterable {
    /// The byte count matched `Content-Length` / `Content-Range` (and the expected size, if given).
    case length
    /// The MD5 of the bytes matched a plain-MD5 ETag.
    case md5
    /// `x-amz-checksum-crc32` matched.
    case crc32
    /// `x-amz-checksum-crc32c` matched.
    case crc32c
    /// `x-amz-checksum-sha256` matched.
    case sha256
}

/// Which of the checks that apply to an object a download computes (the length is always checked).
public enum IntegrityChecks: String, Sendable, Hashable, Codable {
    /// One check: the cheapest full-object checksum the service returned (CRC-32C, which the CPU computes in
    /// hardware, then CRC-32), else the MD5 of a plain-MD5 ETag, else SHA-256. Either detects a corrupted or
    /// mixed-up body; this keeps verification far below the cost of moving the bytes (MD5 runs at a few
    /// hundred MiB/s per core, CRC-32C at several GiB/s). The default, and what AWS's SDKs verify.
    case fastest
    /// Every check that applies: the MD5 of a plain-MD5 ETag and every full-object checksum returned.
    case all
}

/// Hashes a whole object incrementally with the checks that apply to it under an ``IntegrityChecks``: MD5 when
/// the ETag is a plain MD5, and the full-object checksums the service returned. Not thread-safe: one thread
/// feeds it at a time.
// @unchecked: fed by one thread at a time — the engine thread during an attempt, the job between attempts.
final class IntegrityHasher: @unchecked Sendable {
    let etag: String
    let checksums: S3Checksums
    private var md5: Insecure.MD5?
    /// A whole body kept for an ``MD5Batch`` instead of being hashed run by run (``keepBodyForBatchedMD5(length:)``),
    /// and how much of it has arrived.
    private var keptBody: UnsafeMutableRawBufferPointer?
    private var keptCount = 0
    /// The MD5 an ``MD5Batch`` computed over the kept body.
    private var batchedMD5: [UInt8]?
    private var sha256: SHA256?
    private var crc32: UInt32?
    private var crc32c: UInt32?
    private(set) var byteCount: Int64 = 0

    /// The hash checks this hasher performs.
    let checks: Set<IntegrityCheck>

    init(etag: String, checksums: S3Checksums, policy: IntegrityChecks = .all) {
        self.etag = etag
        self.checksums = checksums
        var available: [IntegrityCheck] = []  // cheapest first
        if checksums.crc32c != nil { available.append(.crc32c) }
        if checksums.crc32 != nil { available.append(.crc32) }
        if S3ETag.isPlainMD5(etag) { available.append(.md5) }
        if checksums.sha256 != nil { available.append(.sha256) }
        switch policy {
        case .fastest: checks = Set(available.prefix(1))
        case .all: checks = Set(available)
        }
        start()
    }

    deinit { keptBody?.deallocate() }

    /// The largest body kept whole for a batched MD5: sixteen of them are at most 2 MiB, hashed in one pass
    /// (a few hundred microseconds) on the engine thread.
    static let batchedMD5Limit: Int64 = 128 << 10

    /// Starts over (after a restart from byte zero); nothing to do before the first byte.
    func reset() {
        guard byteCount > 0 || keptBody != nil || batchedMD5 != nil else { return }
        start()
    }

    private func start() {
        keptBody?.deallocate()
        keptBody = nil
        keptCount = 0
        batchedMD5 = nil
        md5 = checks.contains(.md5) ? Insecure.MD5() : nil
        sha256 = checks.contains(.sha256) ? SHA256() : nil
        crc32 = checks.contains(.crc32) ? 0 : nil
        crc32c = checks.contains(.crc32c) ? 0 : nil
        byteCount = 0
    }

    /// Keeps the body, whose length the response announced, to have its MD5 computed by an ``MD5Batch``
    /// together with others, instead of hashing it run by run. Before the first byte; does nothing where a
    /// batch cannot run (no AVX-512), without MD5, or for a body over ``batchedMD5Limit``.
    func keepBodyForBatchedMD5(length: Int64) {
        guard MD5Batch.isAvailable, md5 != nil, byteCount == 0, keptBody == nil, length > 0,
            length <= Self.batchedMD5Limit
        else { return }
        keptBody = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(length), alignment: 64)
    }

    /// The kept body once every announced byte is in (for an ``MD5Batch``).
    var bodyForBatchedMD5: UnsafeRawBufferPointer? {
        guard let keptBody, keptCount == keptBody.count, batchedMD5 == nil else { return nil }
        return UnsafeRawBufferPointer(keptBody)
    }

    /// The MD5 of ``bodyForBatchedMD5``, computed by an ``MD5Batch``; the kept body is released.
    func setBatchedMD5(_ digest: [UInt8]) {
        batchedMD5 = digest
        keptBody?.deallocate()
        keptBody = nil
    }

    /// Hashes what was kept the ordinary way and stops keeping (more bytes than announced, or no batch ran).
    private func hashKeptBody() {
        guard let keptBody else { return }
        md5?.update(bufferPointer: UnsafeRawBufferPointer(rebasing: keptBody[0..<keptCount]))
        keptBody.deallocate()
        self.keptBody = nil
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if let keptBody, keptCount + bytes.count <= keptBody.count {
            (keptBody.baseAddress! + keptCount).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            keptCount += bytes.count
        } else {
            hashKeptBody()
            md5?.update(bufferPointer: bytes)
        }
        sha256?.update(bufferPointer: bytes)
        if let c = crc32 { crc32 = czlib_crc32(c, bytes.baseAddress, bytes.count) }
        if let c = crc32c { crc32c = czlib_crc32c(c, bytes.baseAddress, bytes.count) }
        byteCount += Int64(bytes.count)
    }

    /// Finishes every hash and returns the first mismatch, or nil when all match. Call once.
    func firstMismatch() -> S3Error? {
        if batchedMD5 == nil { hashKeptBody() }
        if let md5 {
            let digest = batchedMD5 ?? Array(md5.finalize())
            if !S3ETag.names(etag, digest: digest) {
                return .checksumMismatch(expected: etag.lowercased(), actual: SigV4.hex(digest), algorithm: "MD5")
            }
        }
        if let expected = checksums.crc32, let c = crc32, S3ChecksumAlgorithm.base64(c) != expected {
            return .checksumMismatch(expected: expected, actual: S3ChecksumAlgorithm.base64(c), algorithm: "CRC32")
        }
        if let expected = checksums.crc32c, let c = crc32c, S3ChecksumAlgorithm.base64(c) != expected {
            return .checksumMismatch(expected: expected, actual: S3ChecksumAlgorithm.base64(c), algorithm: "CRC32C")
        }
        if let expected = checksums.sha256, let sha256 {
            let actual = Data(sha256.finalize()).base64EncodedString()
            if actual != expected { return .checksumMismatch(expected: expected, actual: actual, algorithm: "SHA256") }
        }
        return nil
    }

}
