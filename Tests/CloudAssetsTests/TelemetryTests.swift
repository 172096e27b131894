import AWSSigV4
import CoreMetrics
import Essentials
import FakeS3
import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import TestSupport
import Testing

@testable import CloudAssets

/// The library logs to the configuration's logger and counts with its metrics factory: a sync's and a transfer's
/// figures, read back from a recording backend.
@Suite("Library: logging and metrics", .heavy)
struct TelemetryTests {
    /// Opens a library on `configuration`, syncs it, downloads `a.bin` (which must be `original`), uploads one
    /// import and closes it: what the logging tests watch.
    static func syncDownloadAndUpload(
        _ configuration: AssetLibrary.Configuration, _ harness: LibraryHarness, original: Data
    ) async throws {
        let library = try await harness.open(configuration)
        try await library.sync(fetchThumbnails: false)
        let asset = try library.asset(path: "a.bin")
        #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == original)
        _ = try await harness.importAll(try harness.sourceFiles(1, prefix: "up", seed: 9), into: library)
        await library.waitForUploads()
        library.close()
    }

    @Test("a sync, an upload and a download are logged and counted; nothing is logged by default")
    func syncUploadAndDownloadAreLoggedAndCounted() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 50_000, seed: 8)
            try harness.put("a.bin", data: original)
            let handler = InMemoryLogHandler()
            let metrics = TestMetrics()
            var configuration = harness.quietConfiguration()
            configuration.logger = Logger(label: "telemetry-test", factory: { _ in handler })
            configuration.logger.logLevel = .debug
            configuration.metricsFactory = metrics
            try await Self.syncDownloadAndUpload(configuration, harness, original: original)

            #expect(metrics.counterTotal(label: "cloudassets_syncs_total", dimensions: [("mode", "full")]) == 1)
            #expect(try metrics.expectTimer("cloudassets_sync_duration_seconds", [("mode", "full")]).values.count == 1)
            #expect(
                metrics.counterTotal(label: "cloudassets_downloads_total", dimensions: [("outcome", "downloaded")]) == 1
            )
            #expect(metrics.counterTotal(label: "cloudassets_download_bytes_total") == Int64(original.count))
            #expect(
                metrics.counterTotal(label: "cloudassets_uploads_total", dimensions: [("outcome", "uploaded")]) == 1)
            #expect(metrics.counterTotal(label: "cloudassets_upload_bytes_total") == 64)

            let messages = handler.entries.map { "\($0.message)" }
            #expect(messages.contains("sync ended"))
            #expect(messages.contains("downloaded"))
            #expect(messages.contains("uploaded"))
            let sync = try #require(handler.entries.first { "\($0.message)" == "sync ended" })
            #expect(sync.level == .info && sync.metadata["inserted"] == .stringConvertible(1))
            // No secret reaches the log.
            #expect(!handler.entries.contains { "\($0)".contains(LibraryHarness.secretKey) })
        }
    }

    @Test("at trace a sync, a download and an upload are followed request by request; no secret is logged")
    func requestsAndTransitionsAreLoggedWithoutSecrets() async throws {
        try await withHarness { harness in
            let secret = "log-test-temporary-secret"
            let token = "log-test-session-token"
            let temporary = AWSCredentials(accessKeyID: "ASIALOGTEST", secretAccessKey: secret, sessionToken: token)
            harness.server.acceptTemporaryCredentials(temporary, until: Date(timeIntervalSinceNow: 3600))
            let original = testBytes(count: 50_000, seed: 8)
            try harness.put("a.bin", data: original)
            let handler = InMemoryLogHandler()
            var configuration = harness.quietConfiguration()
            configuration.credentials = .static(
                accessKeyID: "ASIALOGTEST", secretAccessKey: secret, sessionToken: token)
            configuration.logger = Logger(label: "trace-test", factory: { _ in handler })
            configuration.logger.logLevel = .trace
            try await Self.syncDownloadAndUpload(configuration, harness, original: original)

            let requests = handler.entries.filter { $0.level == .debug && "\($0.message)" == "request" }
            func path(_ entry: InMemoryLogHandler.Entry) -> String { entry.metadata["path"].map { "\($0)" } ?? "" }
            // The sync's listing, the original's GET and the upload's PUT, each with its status and attempt.
            let listing = requests.first { $0.metadata["method"] == "GET" && path($0) == "/\(LibraryHarness.bucket)" }
            #expect(listing?.metadata["status"] == "200")
            let download = try #require(
                requests.first { $0.metadata["method"] == "GET" && path($0).hasSuffix("/a.bin") })
            #expect(download.metadata["status"].map { ["200", "206"].contains("\($0)") } == true)
            #expect(download.metadata["bytesReceived"] == .stringConvertible(original.count))
            #expect(download.metadata["attempt"] == .stringConvertible(1))
            #expect(download.metadata["seconds"] != nil)
            let upload = try #require(requests.first { $0.metadata["method"] == "PUT" && path($0).contains("/up") })
            #expect(upload.metadata["status"] == "200")
            #expect(upload.metadata["attempt"] == .stringConvertible(1))
            #expect(upload.metadata["bytesSent"] == .stringConvertible(64))

            // The asset's transitions, at trace.
            let transitions = handler.entries.filter { $0.level == .trace }.map { "\($0.message)" }
            for event in ["download started", "download finished", "availability", "imported", "upload state"] {
                #expect(transitions.contains(event), "\(event) not in \(transitions)")
            }
            #expect(
                handler.entries.contains {
                    "\($0.message)" == "upload state" && $0.metadata["to"] == "uploaded"
                })

            // Nothing secret or signed reaches the log.
            let text = handler.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            for secretPart in [secret, token, "X-Amz-Signature", "Signature=", "?"] {
                #expect(!text.contains(secretPart), "\(secretPart) was logged")
            }
        }
    }

    @Test("a journal entry that cannot be written is logged with its key, not dropped in silence")
    func failedJournalWriteIsLogged() async throws {
        try await withHarness { harness in
            let handler = InMemoryLogHandler()
            var configuration = harness.quietConfiguration()
            configuration.fullSyncInterval = 24 * 3600
            configuration.checkpointInterval = 24 * 3600
            configuration.logger = Logger(label: "telemetry-test", factory: { _ in handler })
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            harness.server.faults.add(.internalError, keyPattern: "journal/*", method: "PUT")
            try await harness.importPhoto("IMG_1.JPG", into: library)
            let warning = try #require(
                handler.entries.first { "\($0.message)".hasPrefix("journal entry not sent") }, "\(handler.entries)")
            #expect(warning.level == .warning)
            #expect(warning.metadata["key"].map { "\($0)".hasPrefix("journal/") } == true)
            #expect(warning.metadata["count"] == .stringConvertible(1))
        }
    }

    @Test("each metric handle is made once per library, however many events it counts")
    func handlesAreMadeOnce() async throws {
        try await withHarness { harness in
            for index in 0..<3 { try harness.put("a\(index).bin", data: testBytes(count: 1000, seed: UInt64(index))) }
            let metrics = CountingFactory(TestMetrics())
            var configuration = harness.quietConfiguration()
            configuration.metricsFactory = metrics
            let library = try await harness.open(configuration)
            for _ in 0..<3 { try await library.sync(fetchThumbnails: false) }
            for index in 0..<3 {
                let asset = try library.asset(path: "a\(index).bin")
                _ = try await library.data(for: asset, options: AssetLibrary.networkOptions())
            }
            let made = metrics.made.withLock { $0 }
            #expect(made.contains("cloudassets_syncs_total mode=full"))
            #expect(made.filter { $0.hasPrefix("cloudassets_downloads_total") }.count == 1)
            #expect(made.count == Set(made).count, "made again: \(made)")
        }
    }

    @Test("bucket input refused is counted and logged at warning")
    func refusedInputIsCounted() async throws {
        try await withHarness { harness in
            let handler = InMemoryLogHandler()
            let metrics = TestMetrics()
            var configuration = harness.quietConfiguration()
            configuration.fullSyncInterval = 24 * 3600
            configuration.logger = Logger(label: "telemetry-test", factory: { _ in handler })
            configuration.metricsFactory = metrics
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try harness.writeJournalEntry(time: now, "garbage")
            let summary = try await library.sync(fetchThumbnails: false)
            #expect(summary.skipped.count == 1)
            #expect(metrics.counterTotal(label: "cloudassets_bucket_input_refused_total") == 1)
            #expect(handler.entries.contains { $0.level == .warning && $0.metadata["key"] != nil })
        }
    }

    @Test("a retry is logged with its request, attempt and cause and counted; responses by status; cache bytes")
    func retriesAndResponsesAreCounted() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 20_000, seed: 3)
            try harness.put("a.bin", data: original)
            let handler = InMemoryLogHandler()
            let metrics = TestMetrics()
            var configuration = harness.quietConfiguration()
            configuration.logger = Logger(label: "telemetry-test", factory: { _ in handler })
            configuration.metricsFactory = metrics
            configuration.cacheSizeLimit = 1 << 30
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            let asset = try library.asset(path: "a.bin")
            // The first GET of the original fails with a 500: the downloader retries it.
            harness.server.faults.add(
                .internalError, keyPattern: "originals/a.bin", method: "GET", afterRequests: 0, times: 1)
            #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == original)
            let retry = try #require(handler.entries.first { $0.message.description == "retrying" })
            #expect(retry.metadata["request"] == .string("GET originals/a.bin"))
            #expect(retry.metadata["attempt"] == .stringConvertible(1))
            #expect(retry.metadata["cause"].map { "\($0)".contains("500") } == true)
            #expect(metrics.counterTotal(label: "cloudassets_retries_total", dimensions: [("cause", "http500")]) == 1)
            // The sync's listing and HEAD answered 2xx.
            #expect(
                metrics.counterTotal(
                    label: "cloudassets_requests_total", dimensions: [("method", "GET"), ("status", "2xx")]) >= 1)
            #expect(try metrics.expectGauge("cloudassets_cache_bytes").lastValue == Double(original.count))
            #expect(!handler.entries.contains { "\($0)".contains("X-Amz-Signature") })
        }
    }
}

/// A metrics factory that records each handle it makes (label and dimensions), forwarding to another.
final class CountingFactory: MetricsFactory, Sendable {
    let base: TestMetrics
    let made = LockedBox<[String]>([])

    init(_ base: TestMetrics) { self.base = base }

    private func note(_ label: String, _ dimensions: [(String, String)]) {
        made.withLock { $0.append(([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: " ")) }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        note(label, dimensions)
        return base.makeCounter(label: label, dimensions: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        note(label, dimensions)
        return base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        note(label, dimensions)
        return base.makeMeter(label: label, dimensions: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        note(label, dimensions)
        return base.makeTimer(label: label, dimensions: dimensions)
    }

    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}
