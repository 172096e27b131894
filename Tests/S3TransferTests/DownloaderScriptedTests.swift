import AWSSigV4
import Essentials
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

/// Downloader behaviour against a scripted loopback server (no fake S3 needed).
@Suite(.heavy) struct DownloaderScriptedTests {
    func downloader(_ server: ScriptedHTTPServer, policy: NetworkPolicy = .allowed, attempts: Int = 4) -> Downloader {
        let client = S3Client(
            configuration: S3ClientConfiguration(
                endpoint: server.endpoint, credentials: AWSCredentials(accessKeyID: "a", secretAccessKey: "b")))
        return Downloader(
            client: client,
            configuration: DownloaderConfiguration(
                maxConnections: 4, retryPolicy: RetryPolicy(maxAttempts: attempts, baseDelay: 0.001, maxDelay: 0.01),
                progressInterval: 0, stallTimeout: 5, networkPolicy: policy))
    }

    @Test func downloadsVerifiesAndRenamesIntoPlace() async throws {
        let object = ObjectResponder(data: testBytes(3_000_000))
        let server = try ScriptedHTTPServer { object.respond($0) }
        defer { server.stop() }
        let dir = try makeTempDirectory()
        let destination = dir.appendingPathComponent("a.bin")
        let reports = LockedBox<[DownloadProgress]>([])
        let handle = downloader(server).download(
            DownloadRequest(
                bucket: "b", key: "k", destination: destination,
                progress: { progress, _ in reports.withLock { $0.append(progress) } }))
        let result = try await handle.result()
        #expect(result.verification == [.length, .md5])
        #expect(result.size == 3_000_000)
        #expect(result.etag == object.etag)
        #expect(try Data(contentsOf: destination) == object.data)
        #expect(!FileManager.default.fileExists(atPath: destination.path + ".part"))
        let seen = reports.withLock { $0 }
        #expect(seen.last?.fractionCompleted == 1)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived })
    }

    @Test func resetMidBodyResumesWithRangeAndIfMatch() async throws {
        let object = ObjectResponder(data: testBytes(2_500_000, seed: 3))
        let first = LockedBox(true)
        let server = try ScriptedHTTPServer { request in
            var response = object.respond(request)
            if first.withLock({
                let was = $0; $0 = false; return was
            }) {
                response.cutAfter = 1_200_000
            }
            return response
        }
        defer { server.stop() }
        let destination = try makeTempDirectory().appendingPathComponent("r.bin")
        let result = try await downloader(server).download(
            DownloadRequest(bucket: "b", key: "k", destination: destination)
        )
        .result()
        #expect(try Data(contentsOf: destination) == object.data)
        #expect(result.attempts == 2)
        #expect(result.verification.contains(.md5))
        let second = try #require(server.requests.last)
        #expect(second.headers["if-match"] == "\"\(object.etag)\"")
        #expect(second.headers["range"]?.hasPrefix("bytes=") == true)
        #expect(second.headers["range"] != "bytes=0-")
    }

    @Test func corruptBodyIsRetriedOnceThenFailsWithoutAFile() async throws {
        let object = ObjectResponder(data: testBytes(100_000, seed: 9))
        let server = try ScriptedHTTPServer { request in
            var response = object.respond(request)
            var bytes = [UInt8](response.body)
            if !bytes.isEmpty { bytes[500] ^= 0xFF }
            response.body = Data(bytes)
            return response
        }
        defer { server.stop() }
        let destination = try makeTempDirectory().appendingPathComponent("c.bin")
        await #expect {
            _ = try await downloader(server).download(DownloadRequest(bucket: "b", key: "k", destination: destination))
                .result()
        } throws: { error in
            guard case S3Error.checksumMismatch(_, _, "MD5") = error else { return false }
            return true
        }
        #expect(server.requests.count == 2)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test func gateRefusesAtOnceWithoutAConnection() async throws {
        let server = try ScriptedHTTPServer { _ in .init(status: 200) }
        defer { server.stop() }
        let destination = try makeTempDirectory().appendingPathComponent("g.bin")
        let offline = downloader(server, policy: .offline)
        await #expect(throws: S3Error.networkAccessNotAllowed) {
            _ = try await offline.download(DownloadRequest(bucket: "b", key: "k", destination: destination)).result()
        }
        let userOnly = downloader(server, policy: .userRequestsOnly)
        await #expect(throws: S3Error.networkAccessNotAllowed) {
            _ = try await userOnly.download(DownloadRequest(bucket: "b", key: "k", destination: destination)).result()
        }
        let allowed = downloader(server)
        await #expect(throws: S3Error.networkAccessNotAllowed) {
            _ = try await allowed.download(
                DownloadRequest(bucket: "b", key: "k", destination: destination, networkAccessAllowed: false)
            ).result()
        }
        #expect(server.connectionCount == 0)
        #expect(S3Error.networkAccessNotAllowed.description.contains("in the cloud"))
    }
}
