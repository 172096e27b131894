import Foundation
import Hashing
import Testing

@testable import S3Transfer

/// The many-lane MD5 of whole small bodies (``MD5Batch``) gives the same digests as MD5 one body at a time, for
/// every length around the block and padding boundaries, and still catches a corrupted body.
@Suite struct MD5BatchTests {
    static func md5Hex(_ data: Data) -> String {
        Insecure.MD5.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// A hasher for `data` whose ETag is `etag` (the MD5 of the intended bytes), fed in uneven pieces.
    static func fedHasher(_ data: Data, etag: String, announced: Int? = nil) -> IntegrityHasher {
        let hasher = IntegrityHasher(etag: etag, checksums: S3Checksums(), policy: .fastest)
        hasher.keepBodyForBatchedMD5(length: Int64(announced ?? data.count))
        var offset = 0
        var piece = 7
        while offset < data.count {
            let end = min(offset + piece, data.count)
            data[offset..<end].withUnsafeBytes { hasher.update($0) }
            offset = end
            piece = piece * 3 + 1
        }
        return hasher
    }

    @Test(.enabled(if: MD5Batch.isAvailable))
    func batchedDigestsMatchOneAtATimeAcrossBlockAndPaddingBoundaries() {
        // 55/56 and 119/120 are where the padding needs a second block; 40 bodies make three groups of lanes
        // with bodies of different lengths in each.
        let lengths =
            [
                1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 121, 127, 128, 129, 1000, 4095, 4096, 16_384, 16_385,
                65_536, 131_072,
            ] + (0..<19).map { 200 + $0 * 997 }
        let bodies = lengths.enumerated().map { testBytes($1, seed: UInt64($0) &+ 11) }
        let hashers = bodies.map { Self.fedHasher($0, etag: Self.md5Hex($0)) }
        let batch = MD5Batch()
        for hasher in hashers {
            #expect(hasher.bodyForBatchedMD5 != nil)
            batch.add(hasher)
        }
        batch.run()
        for (hasher, length) in zip(hashers, lengths) {
            #expect(hasher.bodyForBatchedMD5 == nil, "length \(length) was not hashed by the batch")
            #expect(hasher.firstMismatch() == nil, "length \(length)")
        }
    }

    @Test func aCorruptedBodyIsCaughtWithOrWithoutABatch() {
        for count in [1, MD5Batch.minimumCount, 17] {
            let bodies = (0..<count).map { testBytes(16_384, seed: UInt64($0) &+ 90) }
            var corrupted = bodies[count / 2]
            corrupted[8_000] ^= 0x01
            let hashers = bodies.enumerated().map { index, body in
                Self.fedHasher(index == count / 2 ? corrupted : body, etag: Self.md5Hex(body))
            }
            let batch = MD5Batch()
            for hasher in hashers { batch.add(hasher) }
            batch.run()
            for (index, hasher) in hashers.enumerated() {
                let mismatch = hasher.firstMismatch()
                if index == count / 2 {
                    guard case .checksumMismatch(_, _, let algorithm) = mismatch else {
                        Issue.record("corrupted body \(index) of \(count) passed: \(String(describing: mismatch))")
                        continue
                    }
                    #expect(algorithm == "MD5")
                } else {
                    #expect(mismatch == nil, "body \(index) of \(count)")
                }
            }
        }
    }

    @Test func moreBytesThanAnnouncedAreStillHashedWhole() {
        let body = testBytes(5_000, seed: 3)
        // The response announced 4,000 bytes and sent 5,000: the kept part is hashed, then the rest.
        let hasher = Self.fedHasher(body, etag: Self.md5Hex(body), announced: 4_000)
        #expect(hasher.bodyForBatchedMD5 == nil)
        #expect(hasher.firstMismatch() == nil)
    }

    @Test func aBodyShortOfItsAnnouncedLengthIsNotBatchedAndStillVerified() {
        let body = testBytes(3_000, seed: 4)
        let hasher = Self.fedHasher(body, etag: Self.md5Hex(body), announced: 4_000)
        #expect(hasher.bodyForBatchedMD5 == nil)
        #expect(hasher.firstMismatch() == nil)
    }
}
