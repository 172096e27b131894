import CoreMetrics
import Essentials
import Foundation
import Logging
import S3Transfer

/// What the library says and counts, as server-side Swift libraries do: it logs to
/// ``AssetLibrary/Configuration/logger`` (silent unless the app gives one) and counts with
/// ``AssetLibrary/Configuration/metricsFactory`` (the process's `MetricsSystem` when nil: a no-op unless the app
/// bootstraps a backend). Never a secret, a signed URL or a file's bytes; keys and local identifiers as metadata.
///
/// Logs by level: `info` a sync's summary; `notice` a retry; `warning` what failed and was not thrown (an upload,
/// a download, work nobody waits for: ``failed(_:asset:key:count:error:)``); `debug` each attempt of each request
/// to the bucket (``requestEnded(_:)``: method, path without query, status, bytes, seconds, attempt); `trace` each
/// state transition of an asset (``transition(_:asset:key:_:)``).
///
/// Metrics (labels and dimensions):
/// - `cloudassets_syncs_total` (`mode`: `full`, `incremental`) and `cloudassets_sync_duration_seconds` (timer);
/// - `cloudassets_uploads_total` (`outcome`: `uploaded`, `failed`) and `cloudassets_upload_bytes_total`;
/// - `cloudassets_downloads_total` (`outcome`) and `cloudassets_download_bytes_total` (bytes on the wire);
/// - `cloudassets_bucket_input_refused_total`: objects read from the bucket and skipped (``SyncSummary/skipped``).
struct LibraryTelemetry: Sendable {
    let logger: Logger
    let factory: (any MetricsFactory)?
    /// Every metric handle made, by label and dimensions: each is made once per library, not once per event.
    private let handles = MetricHandles()

    init(logger: Logger, factory: (any MetricsFactory)?) {
        var logger = logger
        logger[metadataKey: "library"] = .string(String(logger.label))
        self.logger = logger
        self.factory = factory
    }

    private func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Counter {
        handles.counter(label, dimensions) {
            if let factory { return Counter(label: label, dimensions: dimensions, factory: factory) }
            return Counter(label: label, dimensions: dimensions)
        }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        handles.timer(label, dimensions) {
            if let factory { return CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory) }
            return CoreMetrics.Timer(label: label, dimensions: dimensions)
        }
    }

    private func gauge(_ label: String) -> Gauge {
        handles.gauge(label) {
            if let factory { return Gauge(label: label, factory: factory) }
            return Gauge(label: label)
        }
    }

    /// A sync ended: its summary at `info`, each object it skipped at `warning`, and its figures counted.
    func syncEnded(_ summary: SyncSummary, requested: SyncMode, duration: Duration) {
        let mode = summary.mode == .full ? "full" : "incremental"
        counter("cloudassets_syncs_total", [("mode", mode)]).increment()
        timer("cloudassets_sync_duration_seconds", [("mode", mode)]).recordNanoseconds(Int64(duration.seconds * 1e9))
        if !summary.skipped.isEmpty {
            counter("cloudassets_bucket_input_refused_total").increment(by: summary.skipped.count)
        }
        for skipped in summary.skipped.prefix(100) {
            logger.warning(
                "skipped an object read from the bucket",
                metadata: ["key": .string(skipped.key), "reason": .string(skipped.reason)])
        }
        logger.info(
            "sync ended",
            metadata: [
                "mode": .string(mode), "requested": .string("\(requested)"),
                "listed": .stringConvertible(summary.listed),
                "inserted": .stringConvertible(summary.inserted), "changed": .stringConvertible(summary.contentChanged),
                "removed": .stringConvertible(summary.removed),
                "transactions": .stringConvertible(summary.transactions),
                "journalEntries": .stringConvertible(summary.journalEntriesRead),
                "skipped": .stringConvertible(summary.skipped.count), "seconds": .stringConvertible(duration.seconds),
            ])
    }

    /// A sync failed (it is thrown to the caller as well).
    func syncFailed(_ error: any Error, duration: Duration) {
        logger.warning(
            "sync failed", metadata: ["error": .string("\(error)"), "seconds": .stringConvertible(duration.seconds)])
    }

    /// An upload ended.
    func uploadEnded(localIdentifier: Int64, key: String, bytes: Int64, failure: String?) {
        transition(
            "upload state", asset: localIdentifier, key: key, ["to": failure == nil ? "uploaded" : "uploadFailed"])
        counter("cloudassets_uploads_total", [("outcome", failure == nil ? "uploaded" : "failed")]).increment()
        if let failure {
            logger.warning(
                "upload failed",
                metadata: [
                    "asset": .stringConvertible(localIdentifier), "key": .string(key), "error": .string(failure),
                ])
        } else {
            counter("cloudassets_upload_bytes_total").increment(by: Int(clamping: bytes))
            logger.debug(
                "uploaded", metadata: ["asset": .stringConvertible(localIdentifier), "key": .string(key)])
        }
    }

    /// A download of an original ended.
    func downloadEnded(localIdentifier: Int64, key: String, bytesTransferred: Int64, attempts: Int, failure: String?) {
        transition(failure == nil ? "download finished" : "download failed", asset: localIdentifier, key: key)
        counter("cloudassets_downloads_total", [("outcome", failure == nil ? "downloaded" : "failed")]).increment()
        if bytesTransferred > 0 {
            counter("cloudassets_download_bytes_total").increment(by: Int(clamping: bytesTransferred))
        }
        let metadata: Logger.Metadata = [
            "asset": .stringConvertible(localIdentifier), "key": .string(key), "attempts": .stringConvertible(attempts),
        ]
        if let failure {
            logger.warning("download failed", metadata: metadata.merging(["error": .string(failure)]) { $1 })
        } else {
            logger.debug("downloaded", metadata: metadata)
        }
    }

    /// An asset's state changed — a download started, ended or failed, its upload state or its availability
    /// changed: logged at `trace` (nothing is built when the level is higher).
    /// - Parameters:
    ///   - event: What happened (`download started`, `upload state`, `availability`…).
    ///   - asset: The asset's local identifier.
    ///   - key: Its key in the bucket.
    ///   - detail: More metadata (the new state…).
    func transition(
        _ event: String, asset: Int64?, key: @autoclosure () -> String?,
        _ detail: @autoclosure () -> [String: String] = [:]
    ) {
        guard logger.logLevel <= .trace else { return }
        var metadata = detail().mapValues { Logger.MetadataValue.string($0) }
        if let asset { metadata["asset"] = .stringConvertible(asset) }
        if let key = key() { metadata["key"] = .string(key) }
        logger.trace("\(event)", metadata: metadata)
    }

    /// A failure of work nobody waits for — a record written after the fact, an object left in the bucket —
    /// logged at `warning` with the asset or key it concerned, so that it does not pass in silence.
    /// - Parameters:
    ///   - what: What could not be done.
    ///   - asset: The asset's local identifier, when one asset is concerned.
    ///   - key: The key concerned, if any.
    ///   - count: How many items the failed work covered, when several.
    ///   - error: Why.
    func failed(_ what: String, asset: Int64? = nil, key: String? = nil, count: Int? = nil, error: any Error) {
        var metadata: Logger.Metadata = ["error": .string("\(error)")]
        if let asset { metadata["asset"] = .stringConvertible(asset) }
        if let key { metadata["key"] = .string(key) }
        if let count { metadata["count"] = .stringConvertible(count) }
        // A cancellation (a closing library, a cancelled task) is no failure of the work itself.
        let cancelled = error is CancellationError || (error as? S3Error) == .cancelled
        logger.log(level: cancelled ? .debug : .warning, "\(what)", metadata: metadata)
    }

    /// What an open repaired in the folder, when it repaired anything.
    /// Logs and counts a retry of the transfer layer (``TransferObserver``): what is retried, the attempt, its
    /// cause and the wait before the next one.
    func retried(request: String, attempt: Int, cause: String, retryable: String, wait: Double) {
        counter("cloudassets_retries_total", [("cause", retryable)]).increment()
        logger.notice(
            "retrying",
            metadata: [
                "request": .string(request), "attempt": .stringConvertible(attempt), "cause": .string(cause),
                "waitSeconds": .stringConvertible(wait),
            ])
    }

    /// Counts a response of the bucket by method and status class (`2xx`, `4xx`…).
    func responded(method: String, status: Int) {
        counter("cloudassets_requests_total", [("method", method), ("status", "\(status / 100)xx")]).increment()
    }

    /// Records the bytes the cache holds (originals, ranges, thumbnails the library made).
    func cacheBytes(_ bytes: Int64) {
        gauge("cloudassets_cache_bytes").record(bytes)
    }

    /// Records how many uploads wait (pending or uploading) when an upload pass takes a batch.
    func uploadQueueDepth(_ depth: Int) {
        gauge("cloudassets_upload_queue_depth").record(depth)
    }

    /// The transfer layer's observer, reporting to this telemetry.
    var transferObserver: TransferObserver {
        TransferObserver(
            onRetry: { retry in
                self.retried(
                    request: retry.request, attempt: retry.attempt, cause: retry.cause.description,
                    retryable: Self.causeKind(retry.cause), wait: retry.wait)
            },
            onResponse: { method, status in self.responded(method: method, status: status) },
            onRequest: { request in self.requestEnded(request) })
    }

    /// Logs one attempt of a request to the bucket at `debug`: method, path (no query: never a signature),
    /// status (`-` when no response came), bytes each way, seconds and attempt number.
    func requestEnded(_ request: TransferObserver.Request) {
        guard logger.logLevel <= .debug else { return }
        logger.debug(
            "request",
            metadata: [
                "method": .string(request.method), "path": .string(request.path),
                "status": .string(request.status.map { String($0) } ?? "-"),
                "bytesSent": .stringConvertible(request.bytesSent),
                "bytesReceived": .stringConvertible(request.bytesReceived),
                "seconds": .string(String(format: "%.3f", request.duration)),
                "attempt": .stringConvertible(request.attempt),
            ].merging(request.failure.map { ["error": .string("\($0)")] } ?? [:]) { $1 })
    }

    /// A short, bounded label for a retry's cause (a metrics dimension must not take arbitrary text).
    static func causeKind(_ error: S3Error) -> String {
        switch error {
        case .slowDown: "slowDown"
        case .requestTimeTooSkewed: "clockSkew"
        case .objectChanged, .preconditionFailed: "objectChanged"
        case .checksumMismatch: "checksumMismatch"
        case .transport: "transport"
        case .malformedResponse: "malformedResponse"
        case .service(_, _, let status, _): "http\(status)"
        default: "other"
        }
    }

    func recovered(_ report: AssetLibrary.RecoveryReport) {
        guard report != AssetLibrary.RecoveryReport() else { return }
        logger.info("repaired the library folder on open", metadata: ["report": .string("\(report)")])
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// The metric handles a library made, by label and dimensions (a backend's handle is looked up once, then kept).
final class MetricHandles: Sendable {
    private let counters = LockedBox<[String: Counter]>([:])
    private let timers = LockedBox<[String: CoreMetrics.Timer]>([:])
    private let gauges = LockedBox<[String: Gauge]>([:])

    private static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        ([label] + dimensions.map { $0.0 + "=" + $0.1 }).joined(separator: "\u{1F}")
    }

    /// The handle kept under `key` in `box`, made by `make` the first time.
    private static func kept<Handle>(_ box: LockedBox<[String: Handle]>, _ key: String, _ make: () -> Handle)
        -> Handle
    {
        box.withLock { made in
            if let handle = made[key] { return handle }
            let handle = make()
            made[key] = handle
            return handle
        }
    }

    func counter(_ label: String, _ dimensions: [(String, String)], make: () -> Counter) -> Counter {
        Self.kept(counters, Self.key(label, dimensions), make)
    }

    func timer(_ label: String, _ dimensions: [(String, String)], make: () -> CoreMetrics.Timer) -> CoreMetrics.Timer {
        Self.kept(timers, Self.key(label, dimensions), make)
    }

    func gauge(_ label: String, make: () -> Gauge) -> Gauge { Self.kept(gauges, label, make) }
}
