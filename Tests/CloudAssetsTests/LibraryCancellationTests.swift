import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// Cancelling requests: the answer says so, the bytes already on disk stay for a resume.
@Suite("Library: cancellation", .heavy, .timeLimit(.minutes(1)))
struct LibraryCancellationTests {
    /// The downloader writes (and reports progress) in 1 MiB chunks: a stall a little past the first chunk leaves
    /// a report of 1 MiB on disk while the transfer hangs.
    static let chunk = 1_048_576
    static let size = 3 * chunk
    static let stallAt = chunk + 100_000

    @Test("cancelRequest ends the request as cancelled and keeps the .part file, which a new request resumes")
    func cancelKeepsPartFileForResume() async throws {
        try await withHarness { harness in
            let original = testBytes(count: Self.size, seed: 20)
            let (library, asset) = try await harness.openSynced(with: "big.png", data: original)
            // The first GET sends a third of the object, then holds the connection open.
            harness.server.faults.add(
                .stallAfter(bytes: Self.stallAt), keyPattern: "originals/big.png", method: "GET", times: 1)

            let probe = ProgressProbe()
            let (id, stream) = answers(of: library, for: asset, options: probe.options())
            try await probe.waitFor(bytes: Int64(Self.chunk))
            library.cancelRequest(id)
            var received: [RequestAnswer] = []
            for await answer in stream { received.append(answer) }
            #expect(received.count == 1)
            #expect(received.first?.data == nil)
            #expect(received.first?.info.isCancelled == true)
            #expect(received.first?.info.error == nil)
            #expect(try library.current(asset).availability == .cloudOnly)
            let part = harness.storeURL.appendingPathComponent("originals/\(asset.id).png.part")
            #expect(FileManager.default.fileExists(atPath: part.path))

            // A new request continues from the bytes on disk.
            let resumed = await allAnswers(of: library, for: asset, options: AssetLibrary.networkOptions())
            #expect(resumed.last?.data == original)
            let gets = harness.gets(of: "big.png")
            #expect(gets.count == 2)
            // The bytes received before the cancel were kept (at least the first chunk, which progress reported;
            // the partial chunk after it is flushed at the attempt's end): the new GET asks only for the rest.
            let range = try #require(gets.last?.rangeHeader)
            let offset = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
            #expect(range == "bytes=\(offset)-")
            #expect(offset >= Self.chunk && offset <= Self.stallAt)
            #expect(try library.current(asset).availability == .full)
            #expect(!FileManager.default.fileExists(atPath: part.path))
        }
    }

    @Test("setting the progress handler's stop flag cancels the request")
    func progressStopFlagCancels() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(
                with: "big.png", data: testBytes(count: Self.size, seed: 21))
            harness.server.faults.add(
                .stallAfter(bytes: Self.stallAt), keyPattern: "originals/big.png", method: "GET", times: 1)
            var options = AssetLibrary.networkOptions()
            options.progressHandler = { _, _, stop, progress in
                if progress.bytesReceived >= Int64(Self.chunk) { stop = true }
            }
            let received = await allAnswers(of: library, for: asset, options: options)
            #expect(received.count == 1)
            #expect(received.first?.info.isCancelled == true)
            #expect(received.first?.data == nil)
            #expect(try library.current(asset).availability == .cloudOnly)
        }
    }

    @Test("cancelling the task awaiting requestFile throws and leaves the asset not full")
    func cancellingRequestFileTaskThrows() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(
                with: "big.png", data: testBytes(count: Self.size, seed: 22))
            harness.server.faults.add(
                .stallAfter(bytes: Self.stallAt), keyPattern: "originals/big.png", method: "GET", times: 1)
            let probe = ProgressProbe()
            let options = probe.options()
            let task = Task { try await library.requestFile(for: asset, options: options) }
            try await probe.waitFor(bytes: Int64(Self.chunk))
            task.cancel()
            await #expect(throws: (any Error).self) { try await task.value }
            #expect(try library.current(asset).availability == .cloudOnly)
        }
    }

    @Test("cancelling one of two requests sharing a download lets the other finish")
    func cancellingOneSharerKeepsTheOther() async throws {
        try await withHarness { harness in
            let original = testBytes(count: Self.size, seed: 23)
            let (library, asset) = try await harness.openSynced(with: "big.png", data: original)
            // Slow enough (a second per chunk) that the second request joins the first one's transfer and the first
            // is cancelled well before the end.
            harness.server.faults.add(
                .bandwidthLimit(bytesPerSecond: Self.chunk), keyPattern: "originals/big.png", method: "GET")
            let first = ProgressProbe()
            let (firstID, firstAnswers) = answers(of: library, for: asset, options: first.options())
            try await first.waitFor(bytes: 1)
            let second = ProgressProbe()
            let (_, secondAnswers) = answers(of: library, for: asset, options: second.options())
            try await second.waitFor(bytes: Int64(2 * Self.chunk))
            library.cancelRequest(firstID)

            var firstReceived: [RequestAnswer] = []
            for await answer in firstAnswers { firstReceived.append(answer) }
            var secondReceived: [RequestAnswer] = []
            for await answer in secondAnswers { secondReceived.append(answer) }
            #expect(firstReceived.last?.info.isCancelled == true)
            #expect(secondReceived.last?.data == original)
            #expect(secondReceived.last?.info.isCancelled == false)
            #expect(harness.gets(of: "big.png").count == 1)
            #expect(try library.current(asset).availability == .full)
        }
    }
}
