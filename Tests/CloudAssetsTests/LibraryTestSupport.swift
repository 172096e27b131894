import CloudAssets
import Essentials
import FakeS3
import FakeS3TLS
import Foundation
import Testing

/// A lock-protected value shared between a test and the callbacks it installs: the package's one lock box.
typealias Shared<Value> = LockedBox<Value>

extension LockedBox {
    /// The value now (a copy, read under the lock).
    var current: Value { withLock { $0 } }
}

/// Reproducible pseudo-random numbers from a seed (the package's SplitMix64, with the tests' helpers).
struct SeededRandom {
    private var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15) }

    mutating func next() -> UInt64 { generator.next() }

    /// A number in `0..<n`.
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// One of `items`, or nil when there is none.
    mutating func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[below(items.count)] }
}

/// Deterministic pseudo-random bytes, so every object has distinct, reproducible content.
func testBytes(count: Int, seed: UInt64) -> Data {
    let words = (count + 7) / 8
    var data = Data(count: words * 8)
    var random = SeededRandom(seed: seed)
    data.withUnsafeMutableBytes { raw in
        let buffer = raw.bindMemory(to: UInt64.self)
        for index in 0..<words { buffer[index] = random.next().littleEndian }
    }
    return data.prefix(count)
}

/// An in-process fake S3 server (memory storage, port 0) with one bucket, and a temporary library folder.
/// Libraries opened through ``open(_:)`` are closed by ``shutdown()``.
final class LibraryHarness: Sendable {
    static let bucket = "photos"
    static let accessKey = "library-tests"
    static let secretKey = "library-secret"

    let server: FakeS3Server
    let folder: URL
    private let opened = Shared<[AssetLibrary]>([])

    private init(server: FakeS3Server, folder: URL) {
        self.server = server
        self.folder = folder
    }

    /// Starts a server (its configuration as `configure` leaves it) and makes a fresh folder.
    static func start(configure: (inout FakeS3Configuration) -> Void = { _ in }) async throws -> LibraryHarness {
        var configuration = FakeS3Configuration(accessKeyID: accessKey, secretAccessKey: secretKey)
        configure(&configuration)
        let server = try FakeS3Server(configuration: configuration, tlsProvider: .nioSSL)
        try await server.start()
        try server.createBucket(bucket)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "LibraryTests-\(UUID().uuidString)", isDirectory: true)
        return LibraryHarness(server: server, folder: folder)
    }

    /// The library folder (inside the harness folder, so tests may place files beside it).
    var storeURL: URL { folder.appendingPathComponent("library", isDirectory: true) }

    /// A configuration for this server and folder: static credentials, progress reported on every write.
    func configuration(storeURL: URL? = nil) -> AssetLibrary.Configuration {
        var configuration = AssetLibrary.Configuration(storeURL: storeURL ?? self.storeURL)
        configuration.endpoint = server.endpoint
        configuration.bucket = Self.bucket
        configuration.credentials = .static(accessKeyID: Self.accessKey, secretAccessKey: Self.secretKey)
        configuration.progressInterval = 0
        // These suites write the bucket as other tools do, behind the journal's back: every sync lists it (and
        // no library writes checkpoints).
        configuration.fullSyncInterval = 0
        configuration.checkpointInterval = 0
        // These suites test transfers, ranges and changes byte for byte; location privacy (the library's default
        // `.denied`, which rewrites images' headers on the way out) has its own suites.
        configuration.locationAccess = .granted
        return configuration
    }

    /// Opens a library (closed again by ``shutdown()``).
    func open(_ configuration: AssetLibrary.Configuration? = nil) async throws -> AssetLibrary {
        let library = try await AssetLibrary(configuration: configuration ?? self.configuration())
        opened.withLock { $0.append(library) }
        return library
    }

    /// Puts one original, opens a library, syncs its catalog (no thumbnails) and returns the library with that
    /// original's asset: the start of most request tests.
    func openSynced(with path: String, data: Data) async throws -> (AssetLibrary, Asset) {
        try put(path, data: data)
        let library = try await open()
        try await library.sync(fetchThumbnails: false)
        return (library, try library.asset(path: path))
    }

    /// Closes every library opened here, stops the server and removes the folder.
    func shutdown() async {
        for library in opened.withLock({ $0 }) { library.close() }
        try? await server.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Puts an original (with the layout's metadata) and, optionally, its thumbnail.
    /// - Returns: The original's ETag.
    @discardableResult
    func put(
        _ path: String, data: Data, created: Date = Date(timeIntervalSince1970: 1_700_000_000),
        thumbnail: Data? = nil
    ) throws -> String {
        let formatter = ISO8601DateFormatter()
        let etag = try server.putObject(
            bucket: Self.bucket, key: "originals/" + path, data: data,
            metadata: [
                "creation-date": formatter.string(from: created), "pixel-width": "640", "pixel-height": "480",
                "media-type": "image", "orientation": "1",
            ])
        if let thumbnail {
            try server.putObject(bucket: Self.bucket, key: "thumbnails/" + path + ".jpg", data: thumbnail)
        }
        return etag
    }

    /// Every logged request, oldest first.
    var log: [RequestLogEntry] { server.requestLog.entries() }

    /// The logged object GETs of one original.
    func gets(of path: String) -> [RequestLogEntry] {
        log.filter { $0.method == "GET" && $0.key == "originals/" + path }
    }

    /// The logged listing requests (bucket-level GETs).
    var listings: [RequestLogEntry] { log.filter { $0.method == "GET" && ($0.key ?? "").isEmpty } }
}

/// Runs `body` with a started harness, shutting it down afterwards whether `body` throws or not.
func withHarness(
    configure: (inout FakeS3Configuration) -> Void = { _ in }, _ body: (LibraryHarness) async throws -> Void
) async throws {
    let harness = try await LibraryHarness.start(configure: configure)
    do {
        try await body(harness)
    } catch {
        await harness.shutdown()
        throw error
    }
    await harness.shutdown()
}

/// An observer that hands the changes it is told about to the test, in delivery order.
final class ChangeRecorder: LibraryChangeObserver {
    let stream: AsyncStream<LibraryChange>
    private let continuation: AsyncStream<LibraryChange>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: LibraryChange.self)
    }

    func libraryDidChange(_ change: LibraryChange) { continuation.yield(change) }
}

/// Registers a ``ChangeRecorder`` on a library and reads the changes it is told about, one at a time.
///
/// Changes committed before the reader was made are skipped: the library reads its observer list when it delivers
/// a change, not when it commits it, so an observer registered just after a commit can still be told about it.
struct ChangeReader {
    let recorder = ChangeRecorder()
    private var iterator: AsyncStream<LibraryChange>.Iterator
    /// The token of the last change returned (or skipped as too old).
    private(set) var lastToken: ChangeToken

    init(observing library: AssetLibrary) {
        lastToken = library.currentChangeToken
        iterator = recorder.stream.makeAsyncIterator()
        library.register(recorder)
    }

    /// The next change committed after the reader was made (fails the test when the stream ends).
    mutating func next(sourceLocation: SourceLocation = #_sourceLocation) async throws -> LibraryChange {
        while true {
            let change = try #require(await iterator.next(), "the change stream ended", sourceLocation: sourceLocation)
            if change.token > lastToken {
                lastToken = change.token
                return change
            }
        }
    }

    /// Skips changes until one satisfies `condition`, and returns it.
    mutating func next(
        where condition: (LibraryChange) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> LibraryChange {
        while true {
            let change = try await next(sourceLocation: sourceLocation)
            if condition(change) { return change }
        }
    }

    /// Reads (and drops) changes until the one with `token` has been delivered.
    mutating func catchUp(to token: ChangeToken, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        while lastToken < token { _ = try await next(sourceLocation: sourceLocation) }
    }
}

/// One answer of a data request.
struct RequestAnswer: Sendable {
    var data: Data?
    var info: AssetRequestInfo
}

/// Makes a data request and returns its answers as a stream that ends after the final one.
func answers(
    of library: AssetLibrary, for asset: Asset, options: AssetRequestOptions
) -> (id: AssetRequestID, answers: AsyncStream<RequestAnswer>) {
    let (stream, continuation) = AsyncStream.makeStream(of: RequestAnswer.self)
    let id = library.requestData(for: asset, options: options) { data, info in
        continuation.yield(RequestAnswer(data: data, info: info))
        if info.isFinal { continuation.finish() }
    }
    return (id, stream)
}

/// Collects every answer of a data request (until its final one).
func allAnswers(of library: AssetLibrary, for asset: Asset, options: AssetRequestOptions) async -> [RequestAnswer] {
    var result: [RequestAnswer] = []
    for await answer in answers(of: library, for: asset, options: options).answers { result.append(answer) }
    return result
}

/// Progress reports of a request, as a stream the test can wait on, plus the options that produce them.
struct ProgressProbe: Sendable {
    let reports: AsyncStream<AssetRequestProgress>
    let fractions = Shared<[Double]>([])
    private let continuation: AsyncStream<AssetRequestProgress>.Continuation

    init() {
        (reports, continuation) = AsyncStream.makeStream(of: AssetRequestProgress.self)
    }

    /// Options allowing the network, reporting progress to this probe.
    func options(deliveryMode: AssetDeliveryMode = .highQualityFormat) -> AssetRequestOptions {
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        options.deliveryMode = deliveryMode
        let fractions = self.fractions
        let continuation = self.continuation
        options.progressHandler = { fraction, _, _, progress in
            fractions.withLock { $0.append(fraction) }
            continuation.yield(progress)
        }
        return options
    }

    /// Waits for a report with at least `bytes` received.
    func waitFor(bytes: Int64) async throws {
        for await report in reports where report.bytesReceived >= bytes { return }
        Issue.record("progress ended before \(bytes) bytes")
    }
}

extension AssetLibrary {
    /// The current state of an asset (fails the test when it is gone).
    func current(_ asset: Asset, sourceLocation: SourceLocation = #_sourceLocation) throws -> Asset {
        try #require(try self.asset(withLocalIdentifier: asset.localIdentifier), sourceLocation: sourceLocation)
    }

    /// The one asset whose key is `originals/<path>`.
    func asset(path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Asset {
        try #require(try asset(forKey: "originals/" + path), sourceLocation: sourceLocation)
    }

    /// Options allowing the network.
    static func networkOptions(_ mode: AssetDeliveryMode = .highQualityFormat) -> AssetRequestOptions {
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        options.deliveryMode = mode
        return options
    }
}

/// Expects `body` to throw a ``CloudAssetsError`` with `code`, and returns it (nil, with an issue recorded,
/// otherwise).
@discardableResult
func expectError<R>(
    _ code: CloudAssetsError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) -> CloudAssetsError? {
    let outcome = Result { try body() }
    return checkError(outcome, code, sourceLocation)
}

/// Expects `body` to throw a ``CloudAssetsError`` with `code`, and returns it (nil, with an issue recorded,
/// otherwise).
@discardableResult
func expectError<R>(
    _ code: CloudAssetsError.Code, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> CloudAssetsError? {
    let outcome: Result<R, any Error>
    do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
    return checkError(outcome, code, sourceLocation)
}

private func checkError<R>(
    _ outcome: Result<R, any Error>, _ code: CloudAssetsError.Code, _ sourceLocation: SourceLocation
) -> CloudAssetsError? {
    switch outcome {
    case .success(let value):
        Issue.record("expected CloudAssetsError \(code), got \(value)", sourceLocation: sourceLocation)
        return nil
    case .failure(let error):
        guard let typed = error as? CloudAssetsError else {
            Issue.record("expected CloudAssetsError \(code), got \(error)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(typed.code == code, "\(typed)", sourceLocation: sourceLocation)
        return typed
    }
}

extension AssetLibrary {
    /// Closes the library and leaves its folder as a crash does: without the clean-close marker, so the next open
    /// scans every local file (what the recovery tests need after tampering with the folder).
    func closeAsIfCrashed() {
        close()
        try? FileManager.default.removeItem(at: configuration.storeURL.appendingPathComponent(CleanClose.fileName))
    }
}

/// What every library on a bucket must agree on of each asset (hidden and trashed ones too), by key: the version,
/// the shared properties, whether it is edited.
func sharedFacts(of library: AssetLibrary) throws -> [String: String] {
    var options = FetchOptions(includeHiddenAssets: true)
    options.includeTrashedAssets = true
    var facts: [String: String] = [:]
    for asset in try library.fetchAssets(options) {
        facts[asset.key] =
            "\(asset.etag) fav=\(asset.isFavorite) hidden=\(asset.isHidden) trash=\(asset.isTrashed) "
            + "edited=\(asset.hasAdjustments)"
    }
    return facts
}
