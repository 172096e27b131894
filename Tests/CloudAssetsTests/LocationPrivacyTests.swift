import CloudAssets
import Foundation
import TestSupport
import Testing

@Suite("Library: location privacy", .heavy)
struct LocationPrivacyTests {
    static let paris = AssetLocation(latitude: 48.8584, longitude: 2.2945, altitude: 35)

    /// Puts an original whose metadata carries a location.
    static func putLocated(_ harness: LibraryHarness, _ path: String) throws {
        try harness.server.putObject(
            bucket: LibraryHarness.bucket, key: "originals/" + path, data: Data("located".utf8),
            metadata: [
                "creation-date": "2024-05-01T12:00:00Z", "media-type": "image", "location": paris.serialized,
            ])
    }

    @Test("a library opened with location access denied (the default) never hands out a location")
    func deniedByDefault() async throws {
        try await withHarness { harness in
            try Self.putLocated(harness, "tower.jpg")
            var configuration = harness.configuration()
            #expect(AssetLibrary.Configuration(storeURL: harness.storeURL).locationAccess == .denied)
            configuration.locationAccess = .denied
            let library = try await harness.open(configuration)
            var recorder = ChangeReader(observing: library)
            try await library.sync(fetchThumbnails: false)
            #expect(try library.asset(path: "tower.jpg").location == nil)
            #expect(try library.fetchAssets().map(\.location) == [nil])
            let before = try library.fetchAssets()
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: "originals/second.jpg", data: Data("b".utf8),
                metadata: ["media-type": "image", "location": Self.paris.serialized])
            try await library.sync(fetchThumbnails: false)
            let change = try await recorder.next()
            let details = try #require(change.details(for: before))
            #expect(details.insertedObjects.map(\.location) == [nil])
            #expect(details.fetchResultAfterChanges.map(\.location) == [nil, nil])
        }
    }

    @Test("a library with location access granted sees the location the bucket carries, in every way it reads one")
    func grantedSeesTheLocation() async throws {
        try await withHarness { harness in
            try Self.putLocated(harness, "tower.jpg")
            var configuration = harness.configuration()
            configuration.locationAccess = .granted
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            var recorder = ChangeReader(observing: library)
            let asset = try library.asset(path: "tower.jpg")
            #expect(asset.location == Self.paris)
            #expect(try library.asset(withLocalIdentifier: asset.localIdentifier)?.location == Self.paris)
            let before = try library.fetchAssets()
            #expect(before.first?.location == Self.paris)
            _ = try await library.performChanges { $0.setFavorite(true, for: [asset]) }
            let change = try await recorder.next()
            #expect(change.details(for: before)?.changedObjects.map(\.location) == [Self.paris])
        }
    }
}
