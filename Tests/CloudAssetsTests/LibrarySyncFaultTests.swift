import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// Catalog sync when the server misbehaves: retried errors, interruptions that resume, malformed listings.
@Suite("Library: faults during sync", .heavy, .timeLimit(.minutes(1)))
struct LibrarySyncFaultTests {
    /// Puts `count` tiny originals (no thumbnails) named `o00000.png`….
    static func putMany(_ harness: LibraryHarness, count: Int) throws {
        for index in 0..<count {
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: String(format: "originals/o%05d.png", index),
                data: testBytes(count: 16, seed: UInt64(index)))
        }
    }

    static func listingOnly(_ harness: LibraryHarness) -> AssetLibrary.Configuration {
        var configuration = harness.configuration()
        configuration.metadataSource = .listingOnly
        return configuration
    }

    @Test("a 500 on a listing page is retried and the sync completes")
    func listingErrorIsRetried() async throws {
        try await withHarness { harness in
            try Self.putMany(harness, count: 1500)
            let library = try await harness.open(Self.listingOnly(harness))
            // Listings are bucket requests (empty key): the thumbnails listing, then originals pages 1 and 2 (too few
            // to list key ranges at once), then the metadata sidecars, the edit revisions, the albums and folders.
            harness.server.faults.add(.internalError, keyPattern: "", method: "GET", afterRequests: 2, times: 1)
            let summary = try await library.sync()
            #expect(summary.inserted == 1500)
            #expect(summary.listed == 1500)
            #expect(try library.fetchAssets().count == 1500)
            #expect(harness.listings.map(\.status) == [200, 200, 500, 200, 200, 200, 200])
        }
    }

    @Test("a sync interrupted on a later listing page resumes after the last reconciled key, then lists the rest")
    func interruptedSyncResumes() async throws {
        try await withHarness { harness in
            try Self.putMany(harness, count: 2500)
            let library = try await harness.open(Self.listingOnly(harness))
            let fault = harness.server.faults.add(.internalError, keyPattern: "", method: "GET", afterRequests: 2)
            await #expect(throws: (any Error).self) { try await library.sync() }
            // The first page was reconciled and committed; the rest was not.
            #expect(try library.fetchAssets().count == 1000)
            let stateFile = harness.storeURL.appendingPathComponent("sync-state.json").path
            #expect(FileManager.default.fileExists(atPath: stateFile))

            harness.server.faults.remove(fault)
            harness.server.requestLog.clear()
            let resumed = try await library.sync()
            #expect(resumed.resumed)
            #expect(resumed.inserted == 1500)
            // The rest of the bucket, then the part before the resume point again (it may have changed).
            #expect(resumed.listed == 2500)
            #expect(resumed.removed == 0)
            let keys = try library.fetchAssets(FetchOptions(sortBy: [.key()])).map(\.key)
            #expect(keys.count == 2500)
            #expect(Set(keys).count == 2500)
            // The resumed listing started after the last key of the reconciled page.
            let originals = harness.listings.filter { $0.query.contains("prefix=originals") }
            #expect(originals.first?.query.contains("start-after=originals%2Fo00999.png") == true)
            #expect(!FileManager.default.fileExists(atPath: stateFile))

            // And a further sync is a full, unchanged one.
            let again = try await library.sync()
            #expect(!again.resumed)
            #expect(again.transactions == 0)
            #expect(again.listed == 2500)
        }
    }

    @Test("a thumbnail that cannot be fetched does not fail the sync; the next sync fetches it")
    func failingThumbnailDoesNotFailSync() async throws {
        try await withHarness { harness in
            for (index, name) in ["a.png", "b.png", "c.png"].enumerated() {
                try harness.put(
                    name, data: testBytes(count: 100, seed: 240 + UInt64(index)),
                    thumbnail: testBytes(count: 20, seed: 250 + UInt64(index)))
            }
            let library = try await harness.open()
            let fault = harness.server.faults.add(.internalError, keyPattern: "thumbnails/b.png.jpg", method: "GET")
            let first = try await library.sync()
            #expect(first.inserted == 3)
            #expect(first.thumbnailsFetched == 2)
            #expect(try library.asset(path: "a.png").availability == .thumbnail)
            #expect(try library.asset(path: "b.png").availability == .cloudOnly)
            #expect(try library.asset(path: "c.png").availability == .thumbnail)

            harness.server.faults.remove(fault)
            let second = try await library.sync()
            #expect(second.thumbnailsFetched == 1)
            #expect(try library.asset(path: "b.png").availability == .thumbnail)
        }
    }

    @Test("a malformed listing is an error and leaves the catalog as it was")
    func malformedListingLeavesCatalogUnchanged() async throws {
        try await withHarness { harness in
            for name in ["a.png", "b.png", "c.png"] {
                try harness.put(name, data: testBytes(count: 100, seed: UInt64(name.utf8.first!)))
            }
            let library = try await harness.open()
            try await library.sync()
            let token = library.currentChangeToken
            library.close()

            // The same folder against a server whose originals listing claims three keys but carries one.
            let scripted = try ScriptedHTTPServer { request in
                if request.path.contains("prefix=thumbnails") {
                    return Self.xml(Self.listing(prefix: "thumbnails/", keyCount: 0, contents: ""))
                }
                let one =
                    "<Contents><Key>originals/a.png</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified>"
                    + "<ETag>\"0123\"</ETag><Size>100</Size></Contents>"
                return Self.xml(Self.listing(prefix: "originals/", keyCount: 3, contents: one))
            }
            defer { scripted.stop() }
            var configuration = harness.configuration()
            configuration.endpoint = scripted.endpoint
            configuration.rebind = true  // another endpoint, deliberately
            let reopened = try await harness.open(configuration)
            await #expect(throws: (any Error).self) { try await reopened.sync() }
            #expect(reopened.currentChangeToken == token)
            #expect(
                try reopened.fetchAssets().map(\.key).sorted() == [
                    "originals/a.png", "originals/b.png", "originals/c.png",
                ])
            #expect(scripted.requests.contains { $0.path.contains("prefix=originals") })
        }
    }

    @Test("a truncated listing without a continuation token is an error, never a short catalog")
    func truncatedListingWithoutTokenIsAnError() async throws {
        try await withHarness { harness in
            let scripted = try ScriptedHTTPServer { request in
                if request.path.contains("prefix=thumbnails") {
                    return Self.xml(Self.listing(prefix: "thumbnails/", keyCount: 0, contents: ""))
                }
                let one =
                    "<Contents><Key>originals/a.png</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified>"
                    + "<ETag>\"0123\"</ETag><Size>100</Size></Contents>"
                return Self.xml(Self.listing(prefix: "originals/", keyCount: 1, contents: one, truncated: true))
            }
            defer { scripted.stop() }
            var configuration = harness.configuration()
            configuration.endpoint = scripted.endpoint
            configuration.metadataSource = .listingOnly
            let library = try await harness.open(configuration)
            await #expect(throws: (any Error).self) { try await library.sync() }
            #expect(try library.fetchAssets().isEmpty)
        }
    }

    /// A 200 with an XML body.
    static func xml(_ body: String) -> ScriptedHTTPServer.Response {
        .init(status: 200, headers: [("Content-Type", "application/xml")], body: Data(body.utf8))
    }

    static func listing(prefix: String, keyCount: Int, contents: String, truncated: Bool = false) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
            + "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>\(LibraryHarness.bucket)</Name>"
            + "<Prefix>\(prefix)</Prefix><KeyCount>\(keyCount)</KeyCount><MaxKeys>1000</MaxKeys>"
            + "<IsTruncated>\(truncated)</IsTruncated>\(contents)</ListBucketResult>"
    }
}
