import FakeS3
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

/// Which checks a download computes: the cheapest full-object checksum by default, every check on request —
/// and either way a corrupted body never reaches its destination.
@Suite(.heavy) struct IntegrityPolicyTests {
    @Test func checksumsOfTheStandardCheckInputMatchTheirPublishedValues() {
        let input = Data("123456789".utf8)
        // CRC-32 0xCBF43926 and CRC-32C 0xE3069283, big-endian in base64, as S3 writes them.
        #expect(S3ChecksumAlgorithm.crc32.checksum(of: input) == "y/Q5Jg==")
        #expect(S3ChecksumAlgorithm.crc32c.checksum(of: input) == "4waSgw==")
        #expect(S3ChecksumAlgorithm.sha256.checksum(of: input) == "FeKw08M4keuw8e9gnsQZQgwg4yDOlMZfvIwzEkSOsiU=")
    }

    /// CRC-32C bit by bit, independent of the library's hardware and table paths.
    static func referenceCRC32C(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    @Test(arguments: [0, 1, 7, 8, 9, 24_575, 24_576, 24_577, 49_153, 100_000, 1_000_003])
    func crc32cMatchesABitwiseReferenceWholeAndInPieces(length: Int) {
        let data = testBytes(length, seed: UInt64(length) &+ 5)
        let expected = S3ChecksumAlgorithm.base64(Self.referenceCRC32C(data))
        #expect(S3ChecksumAlgorithm.crc32c.checksum(of: data) == expected)
        // Fed in uneven pieces (odd offsets, pieces both below and above the interleaved block size).
        let hasher = IntegrityHasher(etag: "x-1", checksums: S3Checksums(crc32c: expected), policy: .fastest)
        var offset = 0
        var piece = 1
        while offset < data.count {
            let end = min(offset + piece, data.count)
            data[offset..<end].withUnsafeBytes { hasher.update($0) }
            offset = end
            piece = piece * 3 + 1
        }
        #expect(hasher.firstMismatch() == nil)
    }

    @Test func theFastestPolicyPicksOneCheckCheapestFirst() {
        let md5ETag = "0123456789abcdef0123456789abcdef"
        let all = S3Checksums(crc32: "a", crc32c: "b", sha256: "c")
        #expect(IntegrityHasher(etag: md5ETag, checksums: all, policy: .fastest).checks == [.crc32c])
        #expect(
            IntegrityHasher(etag: md5ETag, checksums: S3Checksums(crc32: "a", sha256: "c"), policy: .fastest).checks
                == [.crc32])
        #expect(
            IntegrityHasher(etag: md5ETag, checksums: S3Checksums(sha256: "c"), policy: .fastest).checks == [.md5])
        #expect(
            IntegrityHasher(etag: "abc-2", checksums: S3Checksums(sha256: "c"), policy: .fastest).checks == [.sha256])
        #expect(IntegrityHasher(etag: "abc-2", checksums: S3Checksums(), policy: .fastest).checks.isEmpty)
        #expect(
            IntegrityHasher(etag: md5ETag, checksums: all, policy: .all).checks
                == [.md5, .crc32, .crc32c, .sha256])
    }

    @Test func putObjectStoresTheChecksumItSends() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = testBytes(300_000, seed: 9)
        try await fixture.client.putObject(bucket: FakeS3Fixture.bucket, key: "k.bin", body: data, checksum: .crc32c)
        let head = try await fixture.client.headObject(bucket: FakeS3Fixture.bucket, key: "k.bin")
        #expect(head.checksums.crc32c == S3ChecksumAlgorithm.crc32c.checksum(of: data))
    }

    @Test func aDownloadVerifiesTheStoredCRC32CAndSkipsTheMD5ByDefault() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = testBytes(2_500_000, seed: 3)
        try await fixture.client.putObject(bucket: FakeS3Fixture.bucket, key: "c.bin", body: data, checksum: .crc32c)
        let result = try await fixture.downloader.download(fixture.request("c.bin")).result()
        #expect(result.verification == [.length, .crc32c])
        #expect(try Data(contentsOf: result.url) == data)
    }

    @Test func theEveryCheckPolicyAlsoVerifiesTheETagsMD5() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = testBytes(2_500_000, seed: 4)
        try await fixture.client.putObject(bucket: FakeS3Fixture.bucket, key: "e.bin", body: data, checksum: .crc32c)
        let downloader = Downloader(
            client: fixture.client, configuration: DownloaderConfiguration(integrity: .all))
        let result = try await downloader.download(fixture.request("e.bin")).result()
        #expect(result.verification == [.length, .md5, .crc32c])
        #expect(try Data(contentsOf: result.url) == data)
    }

    @Test func aFlippedByteIsCaughtByTheCRC32CAloneAndNothingReachesTheDestination() async throws {
        let fixture = try await FakeS3Fixture.start()
        TestEnd.run { await fixture.stop() }
        let data = testBytes(1_500_000, seed: 5)
        try await fixture.client.putObject(bucket: FakeS3Fixture.bucket, key: "f.bin", body: data, checksum: .crc32c)
        fixture.server.faults.add(.flipByte(atOffset: 700_001), keyPattern: "f.bin", method: "GET")
        let request = fixture.request("f.bin")
        await #expect {
            _ = try await fixture.downloader.download(request).result()
        } throws: { error in
            guard let error = error as? S3Transfer.S3Error, case .checksumMismatch(_, _, let algorithm) = error else {
                return false
            }
            return algorithm == "CRC32C"
        }
        #expect(!FileManager.default.fileExists(atPath: request.destination.path))
    }
}
