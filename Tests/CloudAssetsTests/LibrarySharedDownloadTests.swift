import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Requests for the same original share one transfer.
@Suite("Library: shared downloads", .heavy, .timeLimit(.minutes(1)))
struct LibrarySharedDownloadTests {
    /// Progress comes per 1 MiB written. The server sends half the object, then holds the rest until the test
    /// opens the gate — once the second request is attached to the transfer, however long that takes.
    static let size = 4 * 1_048_576

    /// Holds every GET of `shared.png` after half its bytes, until the returned gate opens.
    static func holdTransfer(in harness: LibraryHarness) -> FaultGate {
        let gate = FaultGate()
        harness.server.faults.add(
            .holdAfter(bytes: size / 2, gate: gate), keyPattern: "originals/shared.png", method: "GET")
        return gate
    }

    /// Waits until two requests are attached to downloads of `asset`, then lets the transfer go on.
    static func release(_ gate: FaultGate, once library: AssetLibrary, downloadsTwice asset: Asset) async throws {
        try await eventually { library.cache.downloads.downloadCount(of: asset.rowID) == 2 }
        gate.open()
    }

    @Test("two requests for one original make one GET and both get the bytes")
    func twoRequestsShareOneDownload() async throws {
        try await withHarness { harness in
            let original = testBytes(count: Self.size, seed: 30)
            let (library, asset) = try await harness.openSynced(with: "shared.png", data: original)
            // The transfer waits half-way, so the second request arrives while the first is under way.
            let gate = Self.holdTransfer(in: harness)

            let first = ProgressProbe()
            let (_, firstAnswers) = answers(of: library, for: asset, options: first.options())
            try await first.waitFor(bytes: 1)
            let second = ProgressProbe()
            let (_, secondAnswers) = answers(of: library, for: asset, options: second.options())
            try await Self.release(gate, once: library, downloadsTwice: asset)
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
            let gate = Self.holdTransfer(in: harness)

            let first = ProgressProbe()
            let options = first.options()
            let file = Task { try await library.requestFile(for: asset, options: options) }
            try await first.waitFor(bytes: 1)
            let second = ProgressProbe()
            async let viaCallback = allAnswers(of: library, for: asset, options: second.options())
            try await Self.release(gate, once: library, downloadsTwice: asset)
            let url = try await file.value
            #expect(try Data(contentsOf: url) == original)
            #expect(await viaCallback.last?.data == original)
            #expect(harness.gets(of: "shared.png").count == 1)
            #expect(second.fractions.current.last == 1.0)
        }
    }
}
