import CoreMetrics
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
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            let asset = try library.asset(path: "a.bin")
            #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == original)
            _ = try await harness.importAll(try harness.sourceFiles(1, prefix: "up", seed: 9), into: library)
            await library.waitForUploads()

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
