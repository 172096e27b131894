import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Requests leave no book-keeping behind once answered.
@Suite("Library: request book-keeping", .heavy, .timeLimit(.minutes(1)))
struct LibraryRequestBookkeepingTests {
    @Test("answered requests, local or downloaded, leave no pending entries behind")
    func answeredRequestsLeaveNothingPending() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 2000, seed: 260), thumbnail: testBytes(count: 9, seed: 261))
            try harness.put("b.png", data: testBytes(count: 2000, seed: 262))
            let library = try await harness.open()
            try await library.sync()
            let a = try library.asset(path: "a.png")
            let b = try library.asset(path: "b.png")
            _ = await allAnswers(of: library, for: a, options: AssetLibrary.networkOptions(.opportunistic))
            for _ in 0..<50 {
                _ = await allAnswers(of: library, for: a, options: AssetRequestOptions())
                _ = await allAnswers(of: library, for: b, options: AssetRequestOptions())
            }
            #expect(library.cache.downloads.pendingRequestCount == 0)
        }
    }
}
