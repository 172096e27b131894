import CloudAssets
import Essentials
import FakeS3
import Foundation
import Gallery
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A fake S3 server with a few originals (some with thumbnails), a library synced from it, and a gallery
/// serving that library on 127.0.0.1.
final class GalleryHarness: Sendable {
    static let bucket = "photos"
    static let accessKey = "gallery-tests"
    static let secretKey = "gallery-secret"

    let s3: FakeS3Server
    let folder: URL
    let library: AssetLibrary
    let gallery: GalleryServer
    let picks: LockedList<PickOutcome>

    private init(
        s3: FakeS3Server, folder: URL, library: AssetLibrary, gallery: GalleryServer, picks: LockedList<PickOutcome>
    ) {
        self.picks = picks
        self.s3 = s3
        self.folder = folder
        self.library = library
        self.gallery = gallery
    }

    var storeURL: URL { folder.appendingPathComponent("library", isDirectory: true) }

    static func configuration(store: URL, endpoint: URL) -> AssetLibrary.Configuration {
        var configuration = AssetLibrary.Configuration(storeURL: store)
        configuration.endpoint = endpoint
        configuration.bucket = bucket
        configuration.credentials = .static(accessKeyID: accessKey, secretAccessKey: secretKey)
        configuration.progressInterval = 0
        configuration.fullSyncInterval = 0
        configuration.checkpointInterval = 0
        return configuration
    }

    /// Puts `count` originals (created a day apart, the first with a thumbnail every other one), syncs, serves.
    static func start(count: Int = 6) async throws -> GalleryHarness {
        let s3 = try FakeS3Server(
            configuration: FakeS3Configuration(accessKeyID: accessKey, secretAccessKey: secretKey))
        try await s3.start()
        try s3.createBucket(bucket)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "GalleryTests-\(UUID().uuidString)", isDirectory: true)
        for index in 0..<count {
            try put(s3, "img\(index).png", day: index, thumbnail: index % 2 == 0)
        }
        let store = folder.appendingPathComponent("library", isDirectory: true)
        let library = try await AssetLibrary(configuration: configuration(store: store, endpoint: s3.endpoint))
        try await library.sync()
        let picks = LockedList<PickOutcome>()
        let gallery = try GalleryServer(library: library, onPick: { picks.append($0) })
        try await gallery.start()
        return GalleryHarness(s3: s3, folder: folder, library: library, gallery: gallery, picks: picks)
    }

    static func put(_ s3: FakeS3Server, _ name: String, day: Int, thumbnail: Bool) throws {
        let formatter = ISO8601DateFormatter()
        let created = Date(timeIntervalSince1970: 1_700_000_000 + Double(day) * 86_400)
        try s3.putObject(
            bucket: bucket, key: "originals/" + name, data: Data("original \(name) \(day)".utf8),
            metadata: [
                "creation-date": formatter.string(from: created), "pixel-width": "64", "pixel-height": "48",
                "media-type": "image", "orientation": "1",
            ])
        if thumbnail {
            try s3.putObject(bucket: bucket, key: "thumbnails/" + name + ".jpg", data: Data("jpeg \(name)".utf8))
        }
    }

    func shutdown() async {
        await gallery.stop()
        library.close()
        try? await s3.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    var port: Int { gallery.port }
    var token: String { gallery.token }

    /// A request to the gallery with the token in the query (GET) or header (`tokenHeader`).
    func get(_ path: String, token: String? = nil) async throws -> RawHTTP.Response {
        let separator = path.contains("?") ? "&" : "?"
        return try await RawHTTP.send(port: port, "GET \(path)\(separator)token=\(token ?? self.token)")
    }

    func asset(named name: String) throws -> Asset {
        try #require(try library.asset(forKey: "originals/" + name))
    }
}

/// Runs `body` with a started harness, shutting it down afterwards.
func withGallery(count: Int = 6, _ body: (GalleryHarness) async throws -> Void) async throws {
    let harness = try await GalleryHarness.start(count: count)
    do {
        try await body(harness)
    } catch {
        await harness.shutdown()
        throw error
    }
    await harness.shutdown()
}

/// A list appended to from any thread.
final class LockedList<Element: Sendable>: Sendable {
    private let items = LockedBox<[Element]>([])

    func append(_ item: Element) { items.withLock { $0.append(item) } }

    var all: [Element] { items.withLock { $0 } }
}

/// An open `text/event-stream` answer, read event by event (by one task at a time).
final class EventStreamReader: @unchecked Sendable {
    private let fd: Int32
    private var pending = Data()

    init(port: Int, path: String) throws {
        fd = try RawHTTP.connect(port: port)
        let head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n"
        try RawHTTP.write(fd, Data(head.utf8))
    }

    deinit { close(fd) }

    /// The data of the next event named `name`, skipping others; fails after `timeout` seconds.
    func next(_ name: String, timeout: Double = 30) async throws -> String {
        try await offThePool { try self.nextBlocking(name, timeout: timeout) }
    }

    private func nextBlocking(_ name: String, timeout: Double) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            while let end = pending.firstRange(of: Data("\n\n".utf8)) {
                // Split on the bytes: as Swift strings, "\r\n" of the HTTP framing is one character.
                let lines = pending[..<end.lowerBound].split(separator: UInt8(ascii: "\n")).map {
                    String(decoding: $0, as: UTF8.self)
                }
                pending.removeSubrange(..<end.upperBound)
                var event = "message"
                var data = ""
                for line in lines {
                    if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
                    if line.hasPrefix("data: ") { data += line.dropFirst(6) }
                }
                if event == name { return data }
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            pending.append(contentsOf: buffer[0..<count])
        }
        throw EventStreamTimeout(name: name, received: String(decoding: pending.prefix(2000), as: UTF8.self))
    }
}

struct EventStreamTimeout: Error, CustomStringConvertible {
    var name: String
    var received: String
    var description: String { "no \(name) event in time; unparsed: \(received)" }
}

/// The JSON object in `text`.
func jsonObject(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}
