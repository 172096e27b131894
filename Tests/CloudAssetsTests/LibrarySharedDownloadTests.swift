import CloudAssets
import FakeS3
import Foundation
import Testing

/// Requests for the same original share one transfer.
@Suite("Library: shared downloads", .timeLimit(.minutes(1)))
struct LibrarySharedDownloadTests {
    /// Progress comes per 1 MiB written; at `size / 2` bytes per second the transfer takes two seconds, and the
    /// second request joins right after the first chunk, with more than a second to spare.
    static let size = 4 * 1_048_576

    @Test("two requests for one original make one GET and both get the bytes")
    func twoRequestsShareOneDownload() async throws {
        try await withHarness { harness in
            let original = testBytes(count: Self.size, seed: 30)
            let (library, asset) = try await harness.openSynced(with: "shared.png", data: original)
            // Slow the transfer so the second request arrives while the first is under way.
            harness.server.faults.add(
                .bandwidthLimit(bytesPerSecond: Self.size / 2), keyPattern: "originals/shared.png", method: "GET")

            let first = ProgressProbe()
            let (_, firstAnswers) = answers(of: library, for: asset, options: first.options())
            try await first.waitFor(bytes: 1)
            let second = ProgressProbe()
            let (_, secondAnswers) = answers(of: library, for: asset, options: second.options())
            var firstReceived: [RequestAnswer] = []
            for await answer in firstAnswers { firstReceived.append(answer) }
            var secondReceived: [RequestAnswer] = []
            for await answer in secondAnswers { secondReceived.append(answer) }

            #expect(firstReceived.last?.data == original)
            #expect(secondReceived.last?.data == original)
            #expect(harness.gets(of: "shared.png").count == 1)
            // The second request took part in the transfer rather than being served from the finished file: only a
            // request attached to a download is told its final progress.
            #expect(second.fractions.current.last == 1.0)
        }
    }

    @Test("requestFile and requestData at once share one GET")
    func asyncAndCallbackFormsShareOneDownload() async throws {
        try await withHarness { harness in
            let original = testBytes(count: Self.size, seed: 31)
            let (library, asset) = try await harness.openSynced(with: "shared.png", data: original)
            harness.server.faults.add(
                .bandwidthLimit(bytesPerSecond: Self.size / 2), keyPattern: "originals/shared.png", method: "GET")

            let first = ProgressProbe()
            let options = first.options()
            let file = Task { try await library.requestFile(for: asset, options: options) }
            try await first.waitFor(bytes: 1)
            let second = ProgressProbe()
            let viaCallback = await allAnswers(of: library, for: asset, options: second.options())
            let url = try await file.value
            #expect(try Data(contentsOf: url) == original)
            #expect(viaCallback.last?.data == original)
            #expect(harness.gets(of: "shared.png").count == 1)
            #expect(second.fractions.current.last == 1.0)
        }
    }
}
