import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// After `close()`, every public method of `AssetLibrary` answers at once: a throwing one throws
/// `libraryClosed`, a request with a callback answers it in the callback, a waiting one returns.
@Suite("Library: every call after close answers libraryClosed at once", .heavy)
struct ClosedLibraryTests {
    /// Runs `body` and fails the test if it has not finished within `seconds` (a hang is a failure, not a wait:
    /// the call is expected to answer at once).
    static func answersAtOnce(
        _ what: String, seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: @escaping @Sendable () async -> Void
    ) async {
        let finished = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await body()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(finished, "\(what) did not answer within \(seconds) s", sourceLocation: sourceLocation)
    }

    static func closed(
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    )
        async
    {
        do {
            try await body()
            Issue.record(
                "\(what) answered after close instead of throwing libraryClosed", sourceLocation: sourceLocation)
        } catch let error as CloudAssetsError {
            #expect(error.code == .libraryClosed, "\(what): \(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(what) threw \(error), not a CloudAssetsError", sourceLocation: sourceLocation)
        }
    }

    /// Every public throwing member of `AssetLibrary`, by its full name (as ``PublicThrowingSurface`` reads them
    /// from the sources), each with a call of it. ``PublicThrowingSurfaceTests`` checks that this table names every
    /// one — not a sample — so a new public throwing method fails the suite until it is added here.
    static func throwingCalls(
        _ library: AssetLibrary, local: Asset, remote: Asset, source: URL
    ) -> [(name: String, call: @Sendable () async throws -> Void)] {
        let assets = [local, remote]
        let network = AssetLibrary.networkOptions()
        return [
            ("init(configuration:)", { _ = try await AssetLibrary(configuration: library.configuration) }),
            ("fetchAssets(_:)", { _ = try library.fetchAssets() }),
            (
                "fetchAssets(withLocalIdentifiers:)",
                {
                    _ = try library.fetchAssets(withLocalIdentifiers: [local.localIdentifier])
                }
            ),
            ("asset(withLocalIdentifier:)", { _ = try library.asset(withLocalIdentifier: local.localIdentifier) }),
            ("fetchAlbums(in:)", { _ = try library.fetchAlbums() }),
            ("fetchAllAlbums()", { _ = try library.fetchAllAlbums() }),
            ("fetchFolders(in:)", { _ = try library.fetchFolders() }),
            ("fetchSmartAlbums()", { _ = try library.fetchSmartAlbums() }),
            ("collection(withLocalIdentifier:)", { _ = try library.collection(withLocalIdentifier: "smart:videos") }),
            ("fetchCollections(containing:)", { _ = try library.fetchCollections(containing: local) }),
            (
                "fetchAssets(in:options:)",
                {
                    let videos = AssetCollection(
                        localIdentifier: "smart:videos", title: "Videos", kind: .smartAlbum,
                        subtype: .smartAlbumVideos, estimatedAssetCount: 0, folderIdentifier: nil, creationDate: nil)
                    _ = try library.fetchAssets(in: videos)
                }
            ),
            (
                "snapshot(in:options:)",
                {
                    let videos = AssetCollection(
                        localIdentifier: "smart:videos", title: "Videos", kind: .smartAlbum,
                        subtype: .smartAlbumVideos, estimatedAssetCount: 0, folderIdentifier: nil, creationDate: nil)
                    _ = try library.snapshot(in: videos)
                }
            ),
            ("asset(forKey:)", { _ = try library.asset(forKey: local.key) }),
            ("changes(since:)", { _ = try library.changes(since: ChangeToken(rawValue: 0)) }),
            ("snapshot(_:)", { _ = try library.snapshot() }),
            (
                "localThumbnailData(forLocalIdentifier:version:)",
                {
                    _ = try library.localThumbnailData(forLocalIdentifier: local.localIdentifier)
                }
            ),
            ("sync(mode:fetchThumbnails:progress:)", { _ = try await library.sync() }),
            (
                "sync(mode:fetchThumbnails:progress:)",
                { _ = try await library.sync(mode: .automatic, fetchThumbnails: false) { _ in } }
            ),
            ("performChanges(_:)", { _ = try await library.performChanges { $0.createAsset(fromFileAt: source) } }),
            ("emptyTrash()", { _ = try await library.emptyTrash() }),
            ("checkBinding()", { try library.checkBinding() }),
            ("retryFailedUploads()", { try library.retryFailedUploads() }),
            ("uploads", { _ = try library.uploads }),
            ("pin(_:)", { try library.pin(assets) }),
            ("unpin(_:)", { try library.unpin(assets) }),
            ("evict(_:)", { try library.evict([local]) }),
            ("cacheUsage()", { _ = try library.cacheUsage() }),
            ("resolveCredentials()", { _ = try await library.resolveCredentials() }),
            ("assetCounts()", { _ = try library.assetCounts() }),
            ("makeThumbnail(for:isNetworkAccessAllowed:)", { _ = try await library.makeThumbnail(for: remote) }),
            ("data(for:options:)", { _ = try await library.data(for: remote, options: network) }),
            ("requestFile(for:options:)", { _ = try await library.requestFile(for: remote, options: network) }),
            (
                "writeData(for:toFile:options:)",
                {
                    try await library.writeData(
                        for: remote, toFile: URL(fileURLWithPath: "/tmp/never-\(UUID().uuidString)"), options: network)
                }
            ),
            (
                "streamData(for:options:chunkSize:dataReceivedHandler:)",
                {
                    try await library.streamData(for: remote, options: network) { _ in }
                }
            ),
            ("read(_:range:isNetworkAccessAllowed:)", { _ = try await library.read(remote, range: 0..<10) }),
            (
                "requestPlaybackURL(for:options:)",
                { _ = try await library.requestPlaybackURL(for: remote, options: network) }
            ),
            (
                "image(for:targetSize:contentMode:options:)",
                {
                    var options = ImageRequestOptions()
                    options.isNetworkAccessAllowed = true
                    _ = try await library.image(
                        for: remote, targetSize: CGSize(width: 16, height: 16), options: options)
                }
            ),
            (
                "requestContentEditingInput(for:options:)",
                { _ = try await library.requestContentEditingInput(for: remote) }
            ),
            ("contentRevisions(of:)", { _ = try library.contentRevisions(of: local) }),
            (
                "applyBasicEdit(to:resume:isNetworkAccessAllowed:_:)",
                {
                    _ = try await library.applyBasicEdit(to: remote) { try $0.setRotation(degrees: 90) }
                }
            ),
        ]
    }

    @Test("every public throwing method throws libraryClosed, callbacks answer it, waits return")
    func everyPublicMethodAfterClose() async throws {
        try await withHarness { harness in
            try harness.put("a.jpg", data: try solidJPEG(width: 32, height: 24, (1, 2, 3)))
            try harness.put("b.jpg", data: testBytes(count: 500, seed: 2))
            let library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            let local = try library.asset(path: "a.jpg")
            _ = try await library.data(for: local, options: AssetLibrary.networkOptions())
            let remote = try library.asset(path: "b.jpg")
            library.close()
            let source = try harness.sourceFile("new.jpg", testBytes(count: 64, seed: 9))
            await Self.answersAtOnce("the throwing methods") {
                // `init` opens another library: it is the one call that works after this one closed.
                for (name, call) in Self.throwingCalls(library, local: local, remote: remote, source: source)
                where name != "init(configuration:)" {
                    await Self.closed(name) { try await call() }
                }
                await Self.closed("data(for:) of a local original") {
                    _ = try await library.data(for: local, options: AssetLibrary.networkOptions())
                }
            }
            await Self.answersAtOnce("requestData's callback") {
                let info = await withCheckedContinuation { continuation in
                    library.requestData(for: local, options: AssetLibrary.networkOptions()) { _, info in
                        if info.isFinal { continuation.resume(returning: info) }
                    }
                }
                #expect(info.error?.code == .libraryClosed)
            }
            await Self.answersAtOnce("requestImage's callback") {
                let info = await withCheckedContinuation { continuation in
                    library.requestImage(for: local, targetSize: CGSize(width: 16, height: 16)) { _, info in
                        if info.isFinal { continuation.resume(returning: info) }
                    }
                }
                #expect(info.error?.code == .libraryClosed)
            }
            await Self.answersAtOnce("waitForUploads") { await library.waitForUploads() }
            await Self.answersAtOnce("the changes stream") { for await _ in library.changes {} }
        }
    }
}
