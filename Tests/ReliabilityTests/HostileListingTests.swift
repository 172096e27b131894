import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Hostile input from the network: listings that are malformed, truncated, oversized or lying, and keys that try to
/// name paths. Each ends in a typed error or in assets whose files stay inside the library folder; nothing is written
/// outside the library folder and no asset already in the catalog is lost.
@Suite(.heavy, .serialized) struct HostileListingTests {
    /// A library synced against the fake server (three assets, one downloaded, one partly read), then closed, and
    /// the objects it knows.
    struct Prepared {
        let scratch: ScratchFolder
        let store: URL
        let entries: [ListingXML.Entry]
        let bodies: [String: Data]
        let catalog: CatalogSnapshot
        let outside: [String: Int64]
    }

    func prepare() async throws -> Prepared {
        let bucket = try await ReliabilityBucket.start()
        let scratch = try ScratchFolder("hostile")
        let store = scratch.url.appendingPathComponent("library", isDirectory: true)
        var rng = SeededGenerator(seed: 7)
        var entries: [ListingXML.Entry] = []
        var bodies: [String: Data] = [:]
        for i in 0..<3 {
            let key = "originals/good-\(i).jpg"
            let data = rng.bytes(10_000 + i)
            try bucket.put(key, data)
            entries.append(.init(key: key, size: data.count, etag: ReliabilityBucket.md5(data)))
            bodies[key] = data
        }
        let library = try await AssetLibrary(configuration: bucket.configuration(folder: store))
        try await library.sync()
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        let assets = Array(try library.fetchAssets())
        _ = try await library.requestFile(for: assets[0], options: options)
        _ = try await library.read(assets[1], range: 100..<2_000)
        let catalog = try CatalogSnapshot(library)
        library.close()
        await bucket.stop()
        // Something beside the library, to prove it is left alone.
        try Data("keep".utf8).write(to: scratch.url.appendingPathComponent("neighbour.txt"))
        return Prepared(
            scratch: scratch, store: store, entries: entries, bodies: bodies, catalog: catalog,
            outside: ScratchFolder.snapshot(scratch.url, excluding: store))
    }

    func configuration(_ prepared: Prepared, endpoint: URL) -> AssetLibrary.Configuration {
        var configuration = AssetLibrary.Configuration(storeURL: prepared.store)
        configuration.endpoint = endpoint
        configuration.bucket = ReliabilityBucket.bucket
        configuration.credentials = .static(accessKeyID: "k", secretAccessKey: "s")
        configuration.maxConnections = 2
        configuration.progressInterval = 0
        configuration.rebind = true  // a prepared store is reopened against a server of the test's own
        return configuration
    }

    /// Answers listings of `thumbnails/` with an empty page and listings of `originals/` with `originals`.
    static func server(originals: @escaping @Sendable () -> Data) throws -> ScriptedHTTPServer {
        try ScriptedHTTPServer.raw { request in
            if request.target.contains("prefix=thumbnails") {
                return ScriptedHTTPServer.raw(body: ListingXML.page([]))
            }
            return originals()
        }
    }

    enum BadListing: String, CaseIterable, Sendable {
        case malformedXML, truncatedDocument, lyingContentLength, wrongRootElement, keyCountMismatch, binaryGarbage
        case truncatedWithoutToken, oversizedBody

        func response(_ entries: [ListingXML.Entry]) -> Data {
            let honest = ListingXML.page(entries)
            switch self {
            case .malformedXML:
                let text = String(decoding: honest, as: UTF8.self).replacingOccurrences(of: "</Key>", with: "</Kee>")
                return ScriptedHTTPServer.raw(body: Data(text.utf8))
            case .truncatedDocument:
                return ScriptedHTTPServer.raw(body: honest.prefix(honest.count * 2 / 3))
            case .lyingContentLength:
                return ScriptedHTTPServer.raw(body: honest, contentLength: honest.count + 4_096)
            case .wrongRootElement:
                return ScriptedHTTPServer.raw(body: Data("<Error><Code>Nope</Code></Error>".utf8))
            case .keyCountMismatch:
                let text = String(decoding: honest, as: UTF8.self).replacingOccurrences(
                    of: "<KeyCount>\(entries.count)</KeyCount>", with: "<KeyCount>\(entries.count + 5)</KeyCount>")
                return ScriptedHTTPServer.raw(body: Data(text.utf8))
            case .binaryGarbage:
                var rng = SeededGenerator(seed: 99)
                return ScriptedHTTPServer.raw(body: rng.bytes(50_000))
            case .truncatedWithoutToken:
                let text = String(decoding: honest, as: UTF8.self).replacingOccurrences(
                    of: "<IsTruncated>false</IsTruncated>", with: "<IsTruncated>true</IsTruncated>")
                return ScriptedHTTPServer.raw(body: Data(text.utf8))
            case .oversizedBody:
                // 24 MiB of one never-closed element.
                let text = String(decoding: honest, as: UTF8.self).replacingOccurrences(
                    of: "</ListBucketResult>", with: "<Junk>" + String(repeating: "x", count: 24 << 20))
                return ScriptedHTTPServer.raw(body: Data(text.utf8))
            }
        }
    }

    @Test(arguments: BadListing.allCases)
    func aBadListingEndsInATypedErrorAndLosesNothing(_ kind: BadListing) async throws {
        let prepared = try await prepare()
        defer { prepared.scratch.remove() }
        let response = kind.response(prepared.entries)
        let server = try Self.server { response }
        defer { server.stop() }
        let library = try await AssetLibrary(configuration: configuration(prepared, endpoint: server.endpoint))
        defer { library.close() }
        await #expect("sync of a \(kind) listing") {
            try await library.sync()
        } throws: { error in
            ErrorKind.isTyped(error)
        }
        #expect(try CatalogSnapshot(library) == prepared.catalog)
        let report = try LibraryInvariants(library: library, reference: .versionsOf(prepared.bodies)).check()
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(ScratchFolder.snapshot(prepared.scratch.url, excluding: prepared.store) == prepared.outside)
    }

    /// Keys that look like paths, carry NUL, or are far longer than S3 allows. Whatever the library decides —
    /// refuse the listing with a typed error, or keep such assets — their bytes land inside the library folder.
    @Test func keysThatLookLikePathsNeverWriteOutsideTheLibraryFolder() async throws {
        let prepared = try await prepare()
        defer { prepared.scratch.remove() }
        let payload = Data("hostile payload".utf8)
        let etag = ReliabilityBucket.md5(payload)
        let hostile = [
            "originals/../../escape.jpg", "originals/../../../../../../tmp/escape-abs.jpg", "/etc/escape-absolute.jpg",
            "originals/nul%00byte.jpg", "originals/" + String(repeating: "long", count: 1_024) + ".jpg",
            "originals/./././dot.jpg", "originals/dir/../../../escape2.jpg",
        ]
        let listing = ListingXML.page(
            prepared.entries + hostile.map { .init(key: $0, size: payload.count, etag: etag) },
            urlEncoded: true)
        let server = try ScriptedHTTPServer.raw { request in
            if request.target.contains("list-type=2") {
                return ScriptedHTTPServer.raw(
                    body: request.target.contains("prefix=thumbnails") ? ListingXML.page([]) : listing)
            }
            let headers = [("ETag", "\"\(etag)\""), ("Last-Modified", "Tue, 02 Jan 2024 03:04:05 GMT")]
            if request.method == "HEAD" {
                return ScriptedHTTPServer.raw(headers: headers, contentLength: payload.count)
            }
            return ScriptedHTTPServer.raw(headers: headers, body: payload)
        }
        defer { server.stop() }
        let library = try await AssetLibrary(configuration: configuration(prepared, endpoint: server.endpoint))
        defer { library.close() }
        var outcome = "synced"
        do {
            try await library.sync()
        } catch {
            #expect(ErrorKind.isTyped(error), "untyped: \(error)")
            outcome = "refused: \(error)"
        }
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        var stored: [String] = []
        for asset in try library.fetchAssets(FetchOptions(includeHiddenAssets: true))
        where prepared.bodies[asset.key] == nil {
            stored.append(asset.key.count > 60 ? "\(asset.key.prefix(40))…(\(asset.key.utf8.count) bytes)" : asset.key)
            do {
                let url = try await library.requestFile(for: asset, options: options)
                #expect(
                    url.resolvingSymlinksInPath().path.hasPrefix(prepared.store.resolvingSymlinksInPath().path + "/"))
                #expect(try Data(contentsOf: url) == payload)
            } catch {
                #expect(ErrorKind.isTyped(error), "untyped: \(error)")
            }
        }
        print("hostile keys: \(outcome); assets kept for hostile keys: \(stored)")
        // Nothing lost: the three good assets are still there, in their states.
        let good = try CatalogSnapshot(library).rows.filter { prepared.bodies[$0.key] != nil }
        #expect(good == prepared.catalog.rows)
        #expect(ScratchFolder.snapshot(prepared.scratch.url, excluding: prepared.store) == prepared.outside)
        for path in ["/etc/escape-absolute.jpg", "/tmp/escape-abs.jpg"] {
            #expect(!FileManager.default.fileExists(atPath: path))
        }
        let report = try LibraryInvariants(
            library: library, reference: .versionsOf(prepared.bodies.merging(["payload": payload]) { a, _ in a })
        )
        .check()
        #expect(report.violations.isEmpty, "\(report.violations)")
    }

    /// An original whose response lies about its length never becomes `full`.
    @Test func anOriginalWithALyingContentLengthEndsInATypedErrorAndIsNotMarkedFull() async throws {
        let prepared = try await prepare()
        defer { prepared.scratch.remove() }
        let key = prepared.entries[2].key
        let body = try #require(prepared.bodies[key])
        let listing = ListingXML.page(prepared.entries)
        let server = try ScriptedHTTPServer.raw { request in
            if request.target.contains("list-type=2") {
                return ScriptedHTTPServer.raw(
                    body: request.target.contains("prefix=thumbnails") ? ListingXML.page([]) : listing)
            }
            let headers = [("ETag", "\"\(ReliabilityBucket.md5(body))\"")]
            return ScriptedHTTPServer.raw(
                headers: headers, body: body.prefix(body.count / 2), contentLength: body.count)
        }
        defer { server.stop() }
        let library = try await AssetLibrary(configuration: configuration(prepared, endpoint: server.endpoint))
        defer { library.close() }
        try await library.sync()
        let asset = try #require(try library.asset(forKey: key))
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        await #expect {
            _ = try await library.requestFile(for: asset, options: options)
        } throws: { ErrorKind.isTyped($0) }
        #expect(try library.asset(forKey: key)?.availability != .full)
        #expect(try CatalogSnapshot(library) == prepared.catalog)
        #expect(ScratchFolder.snapshot(prepared.scratch.url, excluding: prepared.store) == prepared.outside)
    }
}
