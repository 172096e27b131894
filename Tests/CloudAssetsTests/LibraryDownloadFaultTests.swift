import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// Downloads when the server misbehaves: resumed after a reset, corruption caught, remote changes mid-transfer.
@Suite("Library: faults during download", .heavy, .timeLimit(.minutes(1)))
struct LibraryDownloadFaultTests {
    static let size = 600_000

    static func setUp(_ harness: LibraryHarness, seed: UInt64) async throws -> (AssetLibrary, Asset, Data) {
        let original = testBytes(count: size, seed: seed)
        try harness.put("f.png", data: original, thumbnail: testBytes(count: 32, seed: seed + 1))
        let library = try await harness.open()
        try await library.sync()
        return (library, try library.asset(path: "f.png"), original)
    }

    @Test("a connection reset mid-download is resumed from the bytes received and the file verified")
    func resetIsResumed() async throws {
        try await withHarness { harness in
            let (library, asset, original) = try await Self.setUp(harness, seed: 120)
            harness.server.faults.add(
                .resetAfter(bytes: 200_000), keyPattern: "originals/f.png", method: "GET", times: 1)
            let answers = await allAnswers(of: library, for: asset, options: AssetLibrary.networkOptions())
            #expect(answers.last?.data == original)
            #expect(answers.last?.info.error == nil)
            let gets = harness.gets(of: "f.png")
            #expect(gets.count == 2)
            let range = try #require(gets.last?.rangeHeader)
            let offset = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
            #expect(range.hasPrefix("bytes=") && range.hasSuffix("-"))
            #expect(offset > 0 && offset <= 200_000)
            #expect(gets.last?.ifMatch != nil)
            #expect(try library.current(asset).availability == .full)
            let file = harness.storeURL.appendingPathComponent("originals/\(asset.id).png")
            #expect(try Data(contentsOf: file) == original)
        }
    }

    @Test("a corrupted body is caught by verification, fetched again, and never marked full while wrong")
    func corruptionIsCaughtAndRefetched() async throws {
        try await withHarness { harness in
            let (library, asset, original) = try await Self.setUp(harness, seed: 130)
            harness.server.faults.add(
                .flipByte(atOffset: 12_345), keyPattern: "originals/f.png", method: "GET", times: 1)
            let data = try await library.data(for: asset, options: AssetLibrary.networkOptions())
            #expect(data == original)
            #expect(harness.gets(of: "f.png").count == 2)
            #expect(try library.current(asset).availability == .full)
        }
    }

    @Test("an object deleted remotely during its download ends it with assetDeleted and removes the asset")
    func deletedDuringDownloadRemovesAsset() async throws {
        try await withHarness { harness in
            let (library, asset, _) = try await Self.setUp(harness, seed: 140)
            var reader = ChangeReader(observing: library)
            harness.server.faults.add(.deleteObject, keyPattern: "originals/f.png", method: "GET", times: 1)
            let answers = await allAnswers(of: library, for: asset, options: AssetLibrary.networkOptions())
            #expect(answers.count == 1)
            #expect(answers.last?.data == nil)
            let error = try #require(answers.last?.info.error)
            #expect(error.code == .assetDeleted, "\(error)")
            #expect(error.localIdentifier == asset.localIdentifier)
            #expect(try library.asset(withLocalIdentifier: asset.localIdentifier) == nil)
            let change = try await reader.next()
            #expect(change.deletedIdentifiers == [asset.id])
            #expect(
                !FileManager.default.fileExists(
                    atPath: harness.storeURL.appendingPathComponent("thumbnails/\(asset.id).jpg").path))
        }
    }

    @Test("an object replaced remotely during its download ends it with objectChanged; nothing stale is kept")
    func replacedDuringDownloadIsObjectChanged() async throws {
        try await withHarness { harness in
            let (library, asset, _) = try await Self.setUp(harness, seed: 150)
            let replacement = testBytes(count: 1000, seed: 151)
            harness.server.faults.add(
                .replaceObject(with: replacement), keyPattern: "originals/f.png", method: "GET", times: 1)
            let answers = await allAnswers(of: library, for: asset, options: AssetLibrary.networkOptions())
            #expect(answers.last?.data == nil)
            let error = try #require(answers.last?.info.error)
            #expect(error.code == .objectChanged, "\(error)")
            #expect(try library.current(asset).availability == .thumbnail)
            #expect(
                !FileManager.default.fileExists(
                    atPath: harness.storeURL.appendingPathComponent("originals/\(asset.id).png").path))

            // A sync sees the new version; the next request gets it.
            let summary = try await library.sync()
            #expect(summary.contentChanged == 1)
            #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == replacement)
        }
    }

    @Test("a sync that finds the object deleted ends its download in flight with assetDeleted")
    func syncDuringDownloadOfDeletedObjectEndsItWithAssetDeleted() async throws {
        try await withHarness { harness in
            let chunk = 1_048_576
            let original = testBytes(count: 3 * chunk, seed: 170)
            try harness.put("g.png", data: original)
            let library = try await harness.open()
            try await library.sync()
            let asset = try library.asset(path: "g.png")
            // The download hangs after its first chunk, until the sync removes the asset.
            harness.server.faults.add(
                .stallAfter(bytes: chunk + 1000), keyPattern: "originals/g.png", method: "GET", times: 1)
            let probe = ProgressProbe()
            let (_, stream) = answers(of: library, for: asset, options: probe.options())
            try await probe.waitFor(bytes: Int64(chunk))
            try harness.server.deleteObject(bucket: LibraryHarness.bucket, key: "originals/g.png")
            #expect(try await library.sync().removed == 1)
            var received: [RequestAnswer] = []
            for await answer in stream { received.append(answer) }
            #expect(received.count == 1)
            #expect(received.last?.data == nil)
            #expect(received.last?.info.isCancelled == false)
            let error = try #require(received.last?.info.error)
            #expect(error.code == .assetDeleted, "\(error)")
            #expect(error.localIdentifier == asset.localIdentifier)
            #expect(try library.asset(withLocalIdentifier: asset.localIdentifier) == nil)
        }
    }

    @Test("the offline policy refuses downloads and sync without touching the network")
    func offlinePolicyRefusesNetwork() async throws {
        try await withHarness { harness in
            let (library, asset, _) = try await Self.setUp(harness, seed: 160)
            library.networkPolicy = .offline
            let requests = harness.log.count
            let answers = await allAnswers(of: library, for: asset, options: AssetLibrary.networkOptions())
            #expect(answers.last?.info.isInCloud == true)
            #expect(answers.count == 1)
            #expect(answers.last?.data == nil)
            await expectError(.networkNotAllowed) { try await library.sync() }
            await expectError(.networkNotAllowed) { try await library.read(asset, range: 0..<10) }
            #expect(harness.log.count == requests)
        }
    }
}
