import AWSSigV4
import Essentials
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

@Suite(.heavy) struct RangeFetchScriptedTests {
    func downloader(_ server: ScriptedHTTPServer) -> Downloader {
        Downloader(
            client: S3Client(
                configuration: S3ClientConfiguration(
                    endpoint: server.endpoint, credentials: AWSCredentials(accessKeyID: "a", secretAccessKey: "b"))),
            configuration: DownloaderConfiguration(retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 0.001)))
    }

    @Test func rangesLandAtTheirOffsetsAndSurviveARestart() async throws {
        let object = ObjectResponder(data: testBytes(1_000_000, seed: 5))
        let server = try ScriptedHTTPServer { object.respond($0) }
        defer { server.stop() }
        let part = try makeTempDirectory().appendingPathComponent("x.part")
        let first = try await downloader(server).fetchRange(bucket: "b", key: "k", range: 100_000..<200_000, into: part)
        #expect(first.ranges == [100_000..<200_000])
        #expect(first.etag == object.etag)
        #expect(first.objectSize == 1_000_000)
        let second = try await downloader(server).fetchRange(
            bucket: "b", key: "k", range: 150_000..<300_000, into: part)
        #expect(second.ranges == [100_000..<300_000])
        let onDisk = try Data(contentsOf: part)
        #expect(onDisk.subdata(in: 100_000..<300_000) == object.data.subdata(in: 100_000..<300_000))
        #expect(server.requests.last?.headers["if-match"] == "\"\(object.etag)\"")
        // A new downloader (as after a restart) finds the range on disk and makes no request.
        let before = server.requests.count
        let again = try await downloader(server).fetchRange(
            bucket: "b", key: "k", range: 120_000..<250_000, into: part, networkAccessAllowed: false)
        #expect(again.ranges == [100_000..<300_000])
        #expect(server.requests.count == before)
    }

    @Test func aChangedObjectDiscardsTheRangesAndThrows() async throws {
        let current = LockedBox(ObjectResponder(data: testBytes(500_000, seed: 1)))
        let server = try ScriptedHTTPServer { request in current.withLock { $0 }.respond(request) }
        defer { server.stop() }
        let part = try makeTempDirectory().appendingPathComponent("y.part")
        _ = try await downloader(server).fetchRange(bucket: "b", key: "k", range: 0..<1000, into: part)
        current.withLock { $0 = ObjectResponder(data: testBytes(500_000, seed: 2)) }
        await #expect(throws: S3Error.objectChanged) {
            _ = try await downloader(server).fetchRange(bucket: "b", key: "k", range: 2000..<3000, into: part)
        }
        #expect(!FileManager.default.fileExists(atPath: part.path))
        #expect(!FileManager.default.fileExists(atPath: part.path + ".json"))
    }

    @Test func aFullDownloadContinuesFromARangeAtTheStart() async throws {
        let object = ObjectResponder(data: testBytes(800_000, seed: 8))
        let server = try ScriptedHTTPServer { object.respond($0) }
        defer { server.stop() }
        let destination = try makeTempDirectory().appendingPathComponent("z.bin")
        let part = URL(fileURLWithPath: destination.path + ".part")
        let loader = downloader(server)
        _ = try await loader.fetchRange(bucket: "b", key: "k", range: 0..<300_000, into: part)
        let result = try await loader.download(DownloadRequest(bucket: "b", key: "k", destination: destination))
            .result()
        #expect(try Data(contentsOf: destination) == object.data)
        #expect(result.verification.contains(.md5))
        #expect(server.requests.last?.headers["range"] == "bytes=300000-")
    }
}
