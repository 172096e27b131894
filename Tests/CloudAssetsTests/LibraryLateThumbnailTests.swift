import FakeS3
import Foundation
import S3Transfer
import TestSupport
import Testing

@testable import CloudAssets

/// A thumbnail fetched by a sync whose asset is deleted before the fetch is recorded.
@Suite("Library: a late thumbnail", .heavy, .timeLimit(.minutes(1)))
struct LibraryLateThumbnailTests {
    @Test("a thumbnail that arrives for an asset deleted meanwhile is removed again, not left behind")
    func lateThumbnailOfADeletedAssetIsRemoved() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 1_000, seed: 5))
            let library = try await harness.open()
            try await library.sync()
            let a = try library.asset(path: "a.png")
            try await library.cache.removeAssets([a.rowID])
            // The fetch wrote its file after the deletion removed the asset's files; its commit comes now.
            let file = library.cache.files.thumbnail(id: a.rowID)
            try Data("late thumbnail".utf8).write(to: file)
            let fetcher = ThumbnailFetcher(sync: library.syncEngine, remote: try library.syncEngine.remote.checked())
            await #expect(try fetcher.commit([(a.rowID, "\"0123\"")]) == 0)
            #expect(!FileManager.default.fileExists(atPath: file.path))
        }
    }
}
