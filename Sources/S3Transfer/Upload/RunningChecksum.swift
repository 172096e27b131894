import CZlib
import Foundation
import Hashing

/// A checksum of one algorithm computed over bytes fed in order.
struct RunningChecksum {
    let algorithm: S3ChecksumAlgorithm
    private var crc: UInt32 = 0
    private var sha: SHA256?

    init(_ algorithm: S3ChecksumAlgorithm) {
        self.algorithm = algorithm
        if algorithm == .sha256 { sha = SHA256() }
    }

    /// Starts from a CRC already computed over earlier bytes (the CRC algorithms only).
    init(_ algorithm: S3ChecksumAlgorithm, crc: UInt32) {
        self.init(algorithm)
        self.crc = crc
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        switch algorithm {
        case .crc32: crc = czlib_crc32(crc, bytes.baseAddress, bytes.count)
        case .crc32c: crc = czlib_crc32c(crc, bytes.baseAddress, bytes.count)
        case .sha256: sha?.update(bufferPointer: bytes)
        }
    }

    /// The checksum so far, as S3 writes it.
    var value: S3ChecksumValue {
        switch algorithm {
        case .crc32, .crc32c: S3ChecksumValue(algorithm: algorithm, base64: S3ChecksumAlgorithm.base64(crc))
        case .sha256: S3ChecksumValue(algorithm: algorithm, base64: Data(sha!.finalize()).base64EncodedString())
        }
    }
}
