import FakeS3
import Foundation
import Testing

@testable import CloudAssets

/// After `close()`, every public method of `AssetLibrary` answers at once: a throwing one throws
/// `libraryClosed`, a request with a callback answers it in the callback, a waiting one returns.
@Suite("Library: every call after close answers libraryClosed at once")
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
            let assets = [local, remote]
            let source = try harness.sourceFile("new.jpg", testBytes(count: 64, seed: 9))
            await Self.answersAtOnce("the throwing methods") {
                await Self.closed("fetchAssets") { _ = try library.fetchAssets() }
                await Self.closed("fetchAssets(withLocalIdentifiers:)") {
                    _ = try library.fetchAssets(withLocalIdentifiers: [local.localIdentifier])
                }
                await Self.closed("asset(withLocalIdentifier:)") {
                    _ = try library.asset(withLocalIdentifier: local.localIdentifier)
                }
                await Self.closed("asset(forKey:)") { _ = try library.asset(forKey: local.key) }
                await Self.closed("changes(since:)") { _ = try library.changes(since: library.currentChangeToken) }
                await Self.closed("snapshot") { _ = try library.snapshot() }
                await Self.closed("localThumbnailData") {
                    _ = try library.localThumbnailData(forLocalIdentifier: local.localIdentifier)
                }
                await Self.closed("sync") { _ = try await library.sync() }
                await Self.closed("performChanges") {
                    _ = try await library.performChanges { $0.createAsset(fromFileAt: source) }
                }
                await Self.closed("emptyTrash") { _ = try await library.emptyTrash() }
                await Self.closed("retryFailedUploads") { try library.retryFailedUploads() }
                await Self.closed("uploads") { _ = try library.uploads }
                await Self.closed("pin") { try library.pin(assets) }
                await Self.closed("unpin") { try library.unpin(assets) }
                await Self.closed("evict") { try library.evict([local]) }
                await Self.closed("cacheUsage") { _ = try library.cacheUsage() }
                await Self.closed("assetCounts") { _ = try library.assetCounts() }
                await Self.closed("makeThumbnail") { _ = try await library.makeThumbnail(for: local) }
                await Self.closed("data(for:) of a local original") {
                    _ = try await library.data(for: local, options: AssetLibrary.networkOptions())
                }
                await Self.closed("data(for:) of a remote original") {
                    _ = try await library.data(for: remote, options: AssetLibrary.networkOptions())
                }
                await Self.closed("requestFile") {
                    _ = try await library.requestFile(for: local, options: AssetLibrary.networkOptions())
                }
                await Self.closed("requestData (stream)") {
                    try await library.streamData(for: local, options: AssetLibrary.networkOptions()) { _ in }
                }
                await Self.closed("read") { _ = try await library.read(local, range: 0..<10) }
                await Self.closed("image(for:)") {
                    _ = try await library.image(for: local, targetSize: CGSize(width: 16, height: 16))
                }
                await Self.closed("requestContentEditingInput") {
                    _ = try await library.requestContentEditingInput(for: local)
                }
                await Self.closed("contentRevisions") { _ = try library.contentRevisions(of: local) }
                await Self.closed("applyBasicEdit") {
                    _ = try await library.applyBasicEdit(to: local) { try $0.setRotation(degrees: 90) }
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
