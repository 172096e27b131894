import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// An import's thumbnail goes up with it, so every library shows the new photo at once.
@Suite("Library: an import's thumbnail reaches other libraries", .heavy)
struct ImportThumbnailTests {
    @Test("an imported photo is a thumbnail, not a blank cell, in another library after its next sync")
    func importedPhotoArrivesWithItsThumbnail() async throws {
        try await withHarness { harness in
            let a = try await harness.journalLibrary("a")
            let b = try await harness.journalLibrary("b")
            try await b.sync()
            let source = try harness.sourceFile("new.jpg", try solidJPEG(width: 640, height: 480, (90, 120, 200)))
            let ids = try await a.performChanges { $0.createAsset(fromFileAt: source) }
            await a.waitForUploads()
            let key = try #require(try a.asset(withLocalIdentifier: ids[0])).key
            let thumbnailKey = "thumbnails/" + key.dropFirst("originals/".count) + ".jpg"
            let thumbnail = try #require(
                try harness.server.objectData(bucket: LibraryHarness.bucket, key: thumbnailKey))
            #expect(thumbnail.starts(with: [0xFF, 0xD8]), "a JPEG")

            let summary = try await b.sync()
            #expect(summary.mode == .incremental)
            let seen = try #require(try b.asset(forKey: key))
            #expect(seen.availability == .thumbnail)
            #expect(try b.localThumbnailData(forLocalIdentifier: seen.localIdentifier) == thumbnail)
        }
    }

    @Test("a file that is not an image goes up without a thumbnail")
    func nonImageHasNoThumbnail() async throws {
        try await withHarness { harness in
            let a = try await harness.journalLibrary("a")
            let source = try harness.sourceFile("notes.jpg", testBytes(count: 2000, seed: 5))
            _ = try await a.performChanges { $0.createAsset(fromFileAt: source) }
            await a.waitForUploads()
            #expect(harness.server.keysOrEmpty(prefix: "thumbnails/").isEmpty)
            #expect(harness.server.keysOrEmpty(prefix: "originals/").count == 1)
        }
    }

    @Test("a first sync from a checkpoint counts every change it delivered as a transaction")
    func bootstrapCountsEveryChange() async throws {
        try await withHarness { harness in
            let a = try await harness.checkpointedLibrary()
            let source = try harness.sourceFile("later.jpg", try solidJPEG(width: 64, height: 48, (1, 2, 3)))
            _ = try await a.performChanges { $0.createAsset(fromFileAt: source) }
            await a.waitForUploads()
            let b = try await harness.journalLibrary("b")
            let counter = CountingObserver()
            b.register(counter)
            let summary = try await b.sync()
            #expect(summary.checkpointAssets == 1)
            await withCheckedContinuation { continuation in b.notifyWhenChangesDelivered { continuation.resume() } }
            let delivered = counter.count.withLock { $0 }
            #expect(delivered >= 3, "the checkpoint's part, the journal's import, its thumbnail: \(delivered)")
            #expect(summary.transactions == delivered)
        }
    }
}

/// Counts the changes it is told about.
final class CountingObserver: LibraryChangeObserver {
    let count = Shared(0)
    func libraryDidChange(_ change: LibraryChange) { count.withLock { $0 += 1 } }
}
