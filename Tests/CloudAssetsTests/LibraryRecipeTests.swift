import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// The flow of Apple's own recipe for iCloud photos, end to end against the fake server.
@Suite("Library: Apple's recipe", .heavy, .timeLimit(.minutes(1)))
struct LibraryRecipeTests {
    @Test("observer → fetch → offline request is in cloud → network request with progress → change → local")
    func wholeFlowFromAppleRecipe() async throws {
        try await withHarness { harness in
            let original = testBytes(count: 2_500_000, seed: 1)
            let path = "2024/05/IMG_0002.png"
            try harness.put(
                "2024/05/IMG_0001.png", data: testBytes(count: 2000, seed: 2),
                created: Date(timeIntervalSince1970: 1_700_000_000), thumbnail: testBytes(count: 100, seed: 3))
            try harness.put(
                path, data: original, created: Date(timeIntervalSince1970: 1_700_000_100),
                thumbnail: testBytes(count: 120, seed: 4))
            try harness.put(
                "2024/05/IMG_0003.png", data: testBytes(count: 3000, seed: 5),
                created: Date(timeIntervalSince1970: 1_700_000_200))
            let library = try await harness.open()
            let summary = try await library.sync()
            #expect(summary.inserted == 3)
            #expect(summary.thumbnailsFetched == 2)

            // Register first, then fetch (PhotoKit's order).
            var reader = ChangeReader(observing: library)
            let all = try library.fetchAssets(FetchOptions(sortBy: [.creationDate(ascending: false)]))
            let localOnly = try library.fetchAssets(FetchOptions(predicate: .availability([.full])))
            #expect(all.count == 3)
            #expect(localOnly.isEmpty)
            let asset = try library.asset(path: path)
            let index = try #require(all.index(of: asset))
            // The app displays the result (this reads its assets, as they are now).
            #expect(all[index].availability == .thumbnail)
            #expect(all.map(\.availability) == [.cloudOnly, .thumbnail, .thumbnail])

            // Without network: no data, "in cloud", at once, and nothing sent to the server.
            let requestsBefore = harness.log.count
            var offline = AssetRequestOptions()
            offline.deliveryMode = .highQualityFormat
            let offlineAnswers = await allAnswers(of: library, for: asset, options: offline)
            #expect(offlineAnswers.count == 1)
            #expect(offlineAnswers.first?.data == nil)
            #expect(offlineAnswers.first?.info.isInCloud == true)
            #expect(offlineAnswers.first?.info.error == nil)
            await expectError(.networkNotAllowed) { try await library.data(for: asset) }
            #expect(harness.log.count == requestsBefore)

            // With network and a progress handler: the original, progress rising to 1.
            let probe = ProgressProbe()
            let online = await allAnswers(of: library, for: asset, options: probe.options())
            #expect(online.count == 1)
            let final = try #require(online.last)
            #expect(final.data == original)
            #expect(final.info.isInCloud == false)
            #expect(final.info.isDegraded == false)
            #expect(final.info.error == nil)
            let fractions = probe.fractions.current
            #expect(fractions.count >= 3)
            #expect(fractions.contains { $0 > 0 && $0 < 1 })
            #expect(fractions == fractions.sorted())
            #expect(fractions.last == 1.0)
            #expect(harness.gets(of: path).count == 1)

            // The change: before shows the asset not full, after shows it full, at the same index.
            let change = try await reader.next { $0.details(for: asset)?.objectAfterChanges?.availability == .full }
            let details = try #require(change.details(for: all))
            #expect(details.fetchResultBeforeChanges[index].availability == .thumbnail)
            #expect(details.fetchResultAfterChanges[index].availability == .full)
            #expect(details.fetchResultAfterChanges[index].id == asset.id)
            #expect(details.changedIndexes == IndexSet(integer: index))
            #expect(details.removedIndexes == IndexSet())
            #expect(details.insertedIndexes == IndexSet())
            #expect(change.details(for: asset)?.assetContentChanged == false)
            // A fetch result filtered on availability sees the asset inserted.
            let localDetails = try #require(change.details(for: localOnly))
            #expect(localDetails.insertedIndexes == IndexSet(integer: 0))
            #expect(localDetails.insertedObjects.map(\.id) == [asset.id])
            #expect(localDetails.fetchResultAfterChanges.count == 1)

            // The same request again is served locally: nothing more reaches the server.
            let requestsAfterDownload = harness.log.count
            let again = await allAnswers(of: library, for: asset, options: probe.options())
            #expect(again.count == 1)
            #expect(again.first?.data == original)
            #expect(again.first?.info.isInCloud == false)
            let withoutNetwork = await allAnswers(of: library, for: asset, options: offline)
            #expect(withoutNetwork.first?.data == original)
            #expect(try await library.data(for: asset) == original)
            let file = try await library.requestFile(for: asset)
            #expect(try Data(contentsOf: file) == original)
            #expect(file.path.hasPrefix(harness.storeURL.path))
            #expect(harness.log.count == requestsAfterDownload)
            #expect(try library.current(asset).availability == .full)
        }
    }

    @Test("fetchResultBeforeChanges shows the before state even for assets the app never read")
    func beforeResultShowsBeforeStateWhenNeverRead() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 1000, seed: 6))
            let library = try await harness.open()
            try await library.sync()
            var reader = ChangeReader(observing: library)
            let all = try library.fetchAssets()
            let asset = try library.asset(path: "a.png")
            _ = try await library.data(for: asset, options: AssetLibrary.networkOptions())
            let details = try #require(try await reader.next().details(for: all))
            #expect(details.fetchResultBeforeChanges[0].availability == .cloudOnly)
        }
    }
}
