import AWSSigV4
import FakeS3
import Foundation
import S3Transfer
import TestSupport
import Testing

/// The stall half of the fault soak, at the downloader level: the library keeps the downloader's 30-second stall
/// timeout (it is not configurable there), so stalls are soaked here with a short one, mixed with every other fault.
@Suite(.heavy, .serialized) struct DownloaderStallSoakTests {
    @Test func stallsMixedWithOtherFaultsEndInAVerifiedFileOrATypedErrorAndNoFile() async throws {
        let scale = SoakScale.current
        print("downloader stall soak: seed \(scale.seed)")
        var rng = SeededGenerator(seed: scale.seed ^ 0xD0)
        let bucket = try await ReliabilityBucket.start()
        let scratch = try ScratchFolder("stall")
        defer { scratch.remove() }
        let client = S3Client(
            configuration: S3ClientConfiguration(
                endpoint: bucket.server.endpoint,
                credentials: AWSCredentials(
                    accessKeyID: ReliabilityBucket.accessKey, secretAccessKey: ReliabilityBucket.secretKey)))
        let downloader = Downloader(
            client: client,
            configuration: DownloaderConfiguration(
                maxConnections: 4, retryPolicy: RetryPolicy(maxAttempts: 4, baseDelay: 0.01, maxDelay: 0.05),
                stallTimeout: 0.4))
        let count = scale.pick(short: 3, full: 400)
        var keys: [String: Data] = [:]
        for i in 0..<8 {
            let data = rng.bytes(Int.random(in: 50_000...400_000, using: &rng))
            try bucket.put("originals/s\(i).bin", data)
            keys["originals/s\(i).bin"] = data
        }
        var verified = 0
        var typed = 0
        var stalls = 0
        let deadline = Date().addingTimeInterval(scale.timeBudget)
        for n in 0..<count where Date() < deadline {
            let key = "originals/s\(n % 8).bin"
            let data = try #require(keys[key])
            let fault: Fault
            switch Int.random(in: 0..<4, using: &rng) {
            case 0, 1:
                fault = .stallAfter(bytes: Int.random(in: 0..<data.count, using: &rng))
                stalls += 1
            case 2: fault = .resetAfter(bytes: Int.random(in: 0..<data.count, using: &rng))
            default: fault = .flipByte(atOffset: Int.random(in: 0..<data.count, using: &rng))
            }
            let rule = bucket.server.faults.add(
                fault, keyPattern: key, method: "GET", times: Int.random(in: 1...2, using: &rng))
            let destination = scratch.url.appendingPathComponent("d\(n).bin")
            do {
                let result = try await downloader.download(
                    DownloadRequest(bucket: ReliabilityBucket.bucket, key: key, destination: destination)
                ).result()
                #expect(try Data(contentsOf: result.url) == data, "\(key) with \(fault)")
                verified += 1
            } catch {
                typed += 1
                #expect(!FileManager.default.fileExists(atPath: destination.path), "a failed download left a file")
            }
            bucket.server.faults.remove(rule)
            try? FileManager.default.removeItem(at: destination)
        }
        print(
            "downloader stall soak: \(verified + typed) downloads, \(stalls) stalls armed, \(verified) verified, \(typed) typed errors, corrupt 0"
        )
        #expect(verified > 0)
        await bucket.stop()
    }
}
