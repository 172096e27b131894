import Foundation
import Hashing
import Testing

@testable import S3Transfer

/// The `.part` writer on its own: bytes land in order at their offsets, expensive hashes run on the worker with
/// bounded memory (the transfer is paused while too many chunks wait), cheap ones inline.
@Suite struct PartFileWriterTests {
    func temporaryPath() throws -> String {
        try makeTempDirectory().appendingPathComponent("object.part").path
    }

    @Test func md5IsHashedOnTheWorkerAndTooManyWaitingChunksPauseTheTransfer() async throws {
        let path = try temporaryPath()
        let data = testBytes(200_000, seed: 11)
        let etag = Insecure.MD5.hash(data: data).map { String(format: "%02x", $0) }.joined()
        let writer = PartFileWriter(path: path, chunkSize: 4096, maxInFlight: 2)
        _ = try await writer.open(truncate: true).get()
        writer.restart(hasher: IntegrityHasher(etag: etag, checksums: S3Checksums()))
        // With the worker held, two full chunks wait and the next bytes are refused (the engine would pause).
        let release = writer.holdWorkerForTesting()
        var offset = 0
        while offset < 8192 {
            #expect(data[offset..<offset + 1024].withUnsafeBytes { writer.accept($0) } == .consumed)
            offset += 1024
        }
        #expect(data[offset..<offset + 1024].withUnsafeBytes { writer.accept($0) } == .pause)
        release()
        while offset < data.count {
            let end = min(offset + 1000, data.count)
            switch data[offset..<end].withUnsafeBytes({ writer.accept($0) }) {
            case .consumed: offset = end
            case .pause:
                // The engine keeps the bytes and waits for the worker to resume it.
                await writer.drain()
            case .abort: Issue.record("aborted at \(offset)")
            }
        }
        writer.flush()
        await writer.drain()
        #expect(writer.written == Int64(data.count))
        #expect(writer.hasher?.firstMismatch() == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == data)
    }

    @Test func aBodyThatFitsInOneChunkIsHashedInlineWithoutTheWorker() async throws {
        let path = try temporaryPath()
        let data = testBytes(3000, seed: 16)
        let etag = Insecure.MD5.hash(data: data).map { String(format: "%02x", $0) }.joined()
        let writer = PartFileWriter(path: path, chunkSize: 4096, maxInFlight: 1)
        _ = try await writer.open(truncate: true).get()
        writer.restart(hasher: IntegrityHasher(etag: etag, checksums: S3Checksums()))
        writer.expectBody(length: Int64(data.count))
        let release = writer.holdWorkerForTesting()
        defer { release() }
        for start in stride(from: 0, to: data.count, by: 1000) {
            #expect(data[start..<start + 1000].withUnsafeBytes { writer.accept($0) } == .consumed)
        }
        writer.flush()
        // Verified with the worker still held: nothing was handed to it.
        #expect(writer.hasher?.firstMismatch() == nil)
        #expect(writer.hasher?.checks == [.md5])
    }

    @Test func cheapChecksumsAreComputedInlineWithoutPausing() async throws {
        let path = try temporaryPath()
        let data = testBytes(100_000, seed: 12)
        let crc = S3ChecksumAlgorithm.crc32c.checksum(of: data)
        let writer = PartFileWriter(path: path, chunkSize: 4096, maxInFlight: 1)
        _ = try await writer.open(truncate: true).get()
        writer.restart(hasher: IntegrityHasher(etag: "multi-2", checksums: S3Checksums(crc32c: crc), policy: .fastest))
        for start in stride(from: 0, to: data.count, by: 777) {
            let disposition = data[start..<min(start + 777, data.count)].withUnsafeBytes { writer.accept($0) }
            #expect(disposition == .consumed)
        }
        writer.flush()
        await writer.drain()
        #expect(writer.hasher?.checks == [.crc32c])
        #expect(writer.hasher?.firstMismatch() == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == data)
    }

    @Test func aSeekWritesARangeInPlaceInASparseFile() async throws {
        let path = try temporaryPath()
        let writer = PartFileWriter(path: path)
        _ = try await writer.open(truncate: true).get()
        writer.seek(to: 10_000)
        let bytes = testBytes(5000, seed: 13)
        #expect(bytes.withUnsafeBytes { writer.accept($0) } == .consumed)
        writer.flush()
        await writer.drain()
        #expect(writer.written == 5000)
        let onDisk = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(onDisk.count == 15_000)
        #expect(onDisk[10_000..<15_000] == bytes)
        #expect(onDisk[0..<10_000].allSatisfy { $0 == 0 })
    }
}
