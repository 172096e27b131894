import FakeS3
import Foundation
import S3Transfer
import TestSupport
import Testing

@testable import CloudAssets

/// A download of an older version that finishes after a download of the current version was committed.
@Suite("Library: a late, stale download commit", .heavy, .timeLimit(.minutes(1)))
struct LibraryStaleCommitTests {
    @Test("a stale commit leaves the current version's committed file and its full state alone")
    func staleCommitKeepsTheCommittedFileOfTheCurrentVersion() async throws {
        try await withHarness { harness in
            let old = testBytes(count: 30_000, seed: 170)
            let new = testBytes(count: 31_000, seed: 171)
            let oldETag = try harness.put("a.png", data: old)
            let library = try await harness.open()
            try await library.sync()
            let a = try library.asset(path: "a.png")
            try harness.put("a.png", data: new)
            try await library.sync()
            #expect(try await library.data(for: a, options: AssetLibrary.networkOptions()) == new)
            #expect(try library.current(a).availability == .full)
            let file = harness.storeURL.appendingPathComponent("originals/\(a.id).png")
            #expect(FileManager.default.fileExists(atPath: file.path))

            // The older version's download arrives at the same path only now: refused, and nothing removed.
            let late = DownloadResult(
                url: file, etag: oldETag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")), size: 30_000,
                verification: [.length], bytesTransferred: 30_000, attempts: 1)
            await #expect(throws: AssetRequestError.self) {
                try await library.cache.commitDownloaded(assetID: a.rowID, result: late)
            }
            #expect(try Data(contentsOf: file) == new)
            #expect(try library.current(a).availability == .full)
        }
    }
}
