import AWSSigV4
import CZlib
import Crypto
import Foundation

/// One integrity check a download passed.
public enum IntegrityCheck: String, Sendable, Hashable, Codable, CaseIterable {
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
public enum IntegrityPolicy: String, Sendable, Hashable, Codable {
    /// One check: the cheapest full-object checksum the service returned (CRC-32C, which the CPU computes in
    /// hardware, then CRC-32), else the MD5 of a plain-MD5 ETag, else SHA-256. Either detects a corrupted or
    /// mixed-up body; this keeps verification far below the cost of moving the bytes (MD5 runs at a few
    /// hundred MiB/s per core, CRC-32C at several GiB/s). The default, and what AWS's SDKs verify.
    case fastest
    /// Every check that applies: the MD5 of a plain-MD5 ETag and every full-object checksum returned.
    case everyCheck
}

/// Hashes a whole object incrementally with the checks that apply to it under an ``IntegrityPolicy``: MD5 when
/// the ETag is a plain MD5, and the full-object checksums the service returned. Not thread-safe: one thread
/// feeds it at a time.
final class IntegrityHasher: @unchecked Sendable {
    let etag: String
    let checksums: S3Checksums
    private var md5: Insecure.MD5?
    private var sha256: SHA256?
    private var crc32: UInt32?
    private var crc32c: UInt32?
    private(set) var byteCount: Int64 = 0

    /// The hash checks this hasher performs.
    let checks: Set<IntegrityCheck>

    init(etag: String, checksums: S3Checksums, policy: IntegrityPolicy = .everyCheck) {
        self.etag = etag
        self.checksums = checksums
        var available: [IntegrityCheck] = []  // cheapest first
        if checksums.crc32c != nil { available.append(.crc32c) }
        if checksums.crc32 != nil { available.append(.crc32) }
        if S3ETag.isPlainMD5(etag) { available.append(.md5) }
        if checksums.sha256 != nil { available.append(.sha256) }
        switch policy {
        case .fastest: checks = Set(available.prefix(1))
        case .everyCheck: checks = Set(available)
        }
        reset()
    }

    /// Starts over (after a restart from byte zero).
    func reset() {
        md5 = checks.contains(.md5) ? Insecure.MD5() : nil
        sha256 = checks.contains(.sha256) ? SHA256() : nil
        crc32 = checks.contains(.crc32) ? 0 : nil
        crc32c = checks.contains(.crc32c) ? 0 : nil
        byteCount = 0
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        md5?.update(bufferPointer: bytes)
        sha256?.update(bufferPointer: bytes)
        if let c = crc32 { crc32 = czlib_crc32(c, bytes.baseAddress, bytes.count) }
        if let c = crc32c { crc32c = czlib_crc32c(c, bytes.baseAddress, bytes.count) }
        byteCount += Int64(bytes.count)
    }

    /// Finishes every hash and returns the first mismatch, or nil when all match. Call once.
    func firstMismatch() -> S3Error? {
        if let md5 {
            let actual = SigV4.hex(md5.finalize())
            if actual != etag.lowercased() {
                return .checksumMismatch(expected: etag.lowercased(), actual: actual, algorithm: "MD5")
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
