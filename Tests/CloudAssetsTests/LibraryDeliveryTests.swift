import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// Delivery modes: which answers a request gets, in which order, with which flags.
@Suite("Library: delivery modes", .heavy, .timeLimit(.minutes(1)))
struct LibraryDeliveryTests {
    @Test("opportunistic delivers the degraded thumbnail first, then the original")
    func opportunisticDeliversThumbnailThenOriginal() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 50_000, seed: 10)
            let thumbnail = testBytes(count: 500, seed: 11)
            try harness.put("a.png", data: original, thumbnail: thumbnail)
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "a.png")
            #expect(asset.availability == .thumbnail)
            #expect(asset.hasThumbnail)

            let answers = await allAnswers(
                of: library, for: asset, options: AssetLibrary.networkOptions(.opportunistic))
            #expect(answers.count == 2)
            let first = try #require(answers.first)
            #expect(first.data == thumbnail)
            #expect(first.info.isDegraded)
            #expect(!first.info.isFinal)
            #expect(!first.info.isInCloud)
            let last = try #require(answers.last)
            #expect(last.data == original)
            #expect(!last.info.isDegraded)
            #expect(last.info.isFinal)
            #expect(first.info.requestID == last.info.requestID)
        }
    }

    @Test("opportunistic without network: the degraded thumbnail, not final, then nil in the cloud, at once")
    func opportunisticOfflineAnswersThumbnailThenInCloud() async throws {
        try await withHarness { harness in
            let thumbnail = testBytes(count: 400, seed: 12)
            try harness.put("a.png", data: testBytes(count: 10_000, seed: 13), thumbnail: thumbnail)
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "a.png")
            let requests = harness.log.count

            let answers = await allAnswers(of: library, for: asset, options: AssetRequestOptions())
            #expect(answers.count == 2)
            #expect(answers.first?.data == thumbnail)
            #expect(answers.first?.info.isDegraded == true)
            #expect(answers.first?.info.isFinal == false)
            #expect(answers.last?.data == nil)
            #expect(answers.last?.info.isInCloud == true)
            #expect(answers.last?.info.isDegraded == false)
            #expect(answers.last?.info.isFinal == true)
            #expect(harness.log.count == requests)
        }
    }

    @Test(
        "a download's progress only rises and reports 1.0 once, with the verified original",
        arguments: [300, 3_000_000])
    func progressRisesAndCompletesOnce(size: Int) async throws {
        try await withHarness { harness in
            let original = testBytes(count: size, seed: 31)
            let (library, asset) = try await harness.openSynced(with: "progress.bin", data: original)
            let probe = ProgressProbe()
            #expect(try await library.data(for: asset, options: probe.options()) == original)
            let fractions = probe.fractions.withLock { $0 }
            #expect(fractions.last == 1.0)
            #expect(fractions.filter { $0 == 1.0 }.count == 1, "\(fractions)")
            #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 < $1 }, "\(fractions)")
        }
    }

    @Test("opportunistic for an asset without a thumbnail delivers the original only")
    func opportunisticWithoutThumbnailDeliversOriginalOnly() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 20_000, seed: 14)
            try harness.put("a.png", data: original)
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "a.png")
            #expect(asset.availability == .cloudOnly)

            let answers = await allAnswers(
                of: library, for: asset, options: AssetLibrary.networkOptions(.opportunistic))
            #expect(answers.count == 1)
            #expect(answers.first?.data == original)
            #expect(answers.first?.info.isDegraded == false)
        }
    }

    @Test("fast format answers once from local data and never uses the network")
    func fastFormatAnswersFromLocalDataOnly() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 20_000, seed: 15)
            let thumbnail = testBytes(count: 300, seed: 16)
            try harness.put("a.png", data: original, thumbnail: thumbnail)
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "a.png")
            let requests = harness.log.count

            let before = await allAnswers(of: library, for: asset, options: AssetLibrary.networkOptions(.fastFormat))
            #expect(before.count == 1)
            #expect(before.first?.data == thumbnail)
            #expect(before.first?.info.isDegraded == true)
            #expect(harness.log.count == requests)

            _ = try await library.data(for: asset, options: AssetLibrary.networkOptions())
            let after = await allAnswers(of: library, for: asset, options: AssetLibrary.networkOptions(.fastFormat))
            #expect(after.count == 1)
            #expect(after.first?.data == original)
            #expect(after.first?.info.isDegraded == false)
        }
    }

    @Test("answers arrive on the result queue given in the options")
    func answersArriveOnTheResultQueue() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 1000, seed: 17), thumbnail: testBytes(count: 10, seed: 18))
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "a.png")
            let queue = DispatchQueue(label: "LibraryDeliveryTests.results")
            let key = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: key, value: true)
            var options = AssetLibrary.networkOptions(.opportunistic)
            options.resultQueue = queue
            let onQueue = Shared<[Bool]>([])
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                library.requestData(for: asset, options: options) { _, info in
                    onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key) == true) }
                    if info.isFinal { done.resume() }
                }
            }
            #expect(onQueue.current == [true, true])
        }
    }
}
