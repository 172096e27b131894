import AWSSigV4
import CZlib
import Foundation
import Hashing

/// The big-endian bytes of a 32-bit checksum, as S3 base64-encodes CRC32 and CRC32C.
enum Digest32 {
    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}

/// The checksum algorithms S3 accepts in `x-amz-checksum-*` headers.
enum ChecksumAlgorithm: String, CaseIterable, Sendable {
    case crc32, crc32c, sha1, sha256, crc64nvme

    var headerName: String { "x-amz-checksum-\(rawValue)" }
    var digestLength: Int {
        switch self {
        case .crc32, .crc32c: 4
        case .crc64nvme: 8
        case .sha1: 20
        case .sha256: 32
        }
    }
    var displayName: String { rawValue.uppercased() }
}

/// Incrementally computes the digests of a body: always MD5 (the ETag), plus whichever others
/// a request asked to verify or store.
struct BodyDigests {
    private var md5: Insecure.MD5?
    private var sha256: SHA256?
    private var sha1: Insecure.SHA1?
    private var crc32: UInt32?
    private var crc32c: UInt32?
    private var crc64: UInt64?

    /// - Parameters:
    ///   - md5: Compute the MD5 (the ETag); without it ``Result/md5`` is empty.
    ///   - sha256: Compute the SHA-256 (`x-amz-content-sha256`).
    ///   - checksums: The `x-amz-checksum-*` algorithms to compute.
    init(md5: Bool = true, sha256: Bool = false, checksums: Set<ChecksumAlgorithm> = []) {
        if md5 { self.md5 = Insecure.MD5() }
        if sha256 || checksums.contains(.sha256) { self.sha256 = SHA256() }
        if checksums.contains(.sha1) { sha1 = Insecure.SHA1() }
        if checksums.contains(.crc32) { crc32 = 0 }
        if checksums.contains(.crc32c) { crc32c = 0 }
        if checksums.contains(.crc64nvme) { crc64 = 0 }
    }

    mutating func update(_ raw: UnsafeRawBufferPointer) {
        md5?.update(bufferPointer: raw)
        sha256?.update(bufferPointer: raw)
        sha1?.update(bufferPointer: raw)
        if let c = crc32 { crc32 = czlib_crc32(c, raw.baseAddress, raw.count) }
        if let c = crc32c { crc32c = czlib_crc32c(c, raw.baseAddress, raw.count) }
        if let c = crc64 { crc64 = CRC64NVME.update(c, raw) }
    }

    mutating func update(_ data: Data) { data.withUnsafeBytes { update($0) } }

    struct Result {
        var md5: [UInt8]
        var sha256Hex: String?
        var checksums: [ChecksumAlgorithm: [UInt8]]
    }

    func finalize() -> Result {
        var checksums: [ChecksumAlgorithm: [UInt8]] = [:]
        var sha256Hex: String?
        if let sha256 {
            let digest = Array(sha256.finalize())
            checksums[.sha256] = digest
            sha256Hex = SigV4.hex(digest)
        }
        if let sha1 { checksums[.sha1] = Array(sha1.finalize()) }
        if let crc32 { checksums[.crc32] = Digest32.bigEndian(crc32) }
        if let crc32c { checksums[.crc32c] = Digest32.bigEndian(crc32c) }
        if let crc64 {
            checksums[.crc64nvme] = (0..<8).map { UInt8((crc64 >> (56 - 8 * UInt64($0))) & 0xFF) }
        }
        return Result(md5: md5.map { Array($0.finalize()) } ?? [], sha256Hex: sha256Hex, checksums: checksums)
    }
}

/// CRC-64/NVME (reflected polynomial 0x9A6C9329AC4BC9B5), the checksum newer SDKs default to.
enum CRC64NVME {
    static let table: [UInt64] = (0..<256).map { i -> UInt64 in
        var c = UInt64(i)
        for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x9A6C_9329_AC4B_C9B5 : c >> 1 }
        return c
    }

    static func update(_ crc: UInt64, _ raw: UnsafeRawBufferPointer) -> UInt64 {
        var c = ~crc
        table.withUnsafeBufferPointer { t in
            for byte in raw { c = t[Int((c ^ UInt64(byte)) & 0xFF)] ^ (c >> 8) }
        }
        return ~c
    }
}
