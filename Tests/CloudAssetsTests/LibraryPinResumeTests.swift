import CloudAssets
import Foundation
import TestSupport
import Testing

@Suite("Library: pinned downloads resume on open", .heavy, .timeLimit(.minutes(1)))
struct LibraryPinResumeTests {
    @Test("a pinned asset whose original is not local is downloaded when the library opens")
    func pinnedAssetIsFetchedOnOpen() async throws {
        try await withHarness { harness in
            let bytes = testBytes(count: 200_000, seed: 901)
            try harness.put("pinned.png", data: bytes)
            // Pin while offline: the pin is recorded, no download can start.
            var offline = harness.configuration()
            offline.networkPolicy = .offline
            do {
                let library = try await harness.open(offline)
                library.networkPolicy = .allowed
                try await library.sync(fetchThumbnails: false)
                library.networkPolicy = .offline
                let asset = try #require(try library.asset(forKey: "originals/pinned.png"))
                try library.pin([asset])
                #expect(harness.gets(of: "pinned.png").isEmpty)
                library.close()
            }
            // Reopen online: the pinned original arrives without any request from the app.
            let library = try await harness.open()
            let stream = library.changes
            if try library.asset(forKey: "originals/pinned.png")?.availability != .full {
                for await change in stream {
                    let asset = try #require(try library.asset(forKey: "originals/pinned.png"))
                    if change.details(for: asset)?.objectAfterChanges?.availability == .full { break }
                }
            }
            let asset = try #require(try library.asset(forKey: "originals/pinned.png"))
            #expect(asset.availability == .full && asset.isPinned)
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = false
            #expect(try await library.data(for: asset, options: options) == bytes)
        }
    }
}
