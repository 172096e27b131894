import AssetStore
import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Folders of keys as albums (`Configuration.keyFoldersAsAlbums`): a bucket another tool organised in folders
/// shows them as albums and folders, kept current as that tool adds and deletes objects, read-only to requests,
/// and absent when the setting is off.
@Suite(.heavy) struct KeyFolderAlbumTests {
    static let paths = [
        "Trips/Rome/r2.jpg", "Trips/Rome/r1.jpg", "Trips/Paris/p1.jpg", "Trips/t0.jpg", "Home/h1.jpg", "loose.jpg",
        "A/B/C/deep.jpg",
    ]

    static func open(_ harness: LibraryHarness, _ name: String, keyFolders: Bool) async throws -> AssetLibrary {
        var configuration = harness.configuration(storeURL: harness.folder.appendingPathComponent(name))
        configuration.keyFoldersAsAlbums = keyFolders
        configuration.startsBackgroundTransfers = false
        return try await harness.open(configuration)
    }

    /// Every album as "folder path/title: keys in the album's default order".
    static func tree(_ library: AssetLibrary) throws -> [String] {
        var lines: [String] = []
        func walk(_ folder: CollectionList?, _ path: String) throws {
            for album in try library.fetchAlbums(in: folder) {
                let keys = try library.fetchAssets(in: album).map {
                    $0.key.replacingOccurrences(of: "originals/", with: "")
                }
                lines.append("\(path)\(album.title) (\(album.estimatedAssetCount)): \(keys.joined(separator: " "))")
            }
            for inner in try library.fetchFolders(in: folder) { try walk(inner, path + inner.title + "/") }
        }
        try walk(nil, "")
        return lines
    }

    @Test("folders of keys are albums in folders, in key order; they follow another tool's adds and deletes")
    func foldersOfKeysFollowTheBucket() async throws {
        try await withHarness { harness in
            for path in Self.paths { try harness.put(path, data: Data(path.utf8)) }
            let library = try await Self.open(harness, "shown", keyFolders: true)
            try await library.sync(fetchThumbnails: false)
            #expect(
                try Self.tree(library) == [
                    "Home (1): Home/h1.jpg",
                    "A/B/C (1): A/B/C/deep.jpg",
                    "Trips/Paris (1): Trips/Paris/p1.jpg",
                    "Trips/Rome (2): Trips/Rome/r1.jpg Trips/Rome/r2.jpg",
                    "Trips/Trips (1): Trips/t0.jpg",
                ])
            let trips = try #require(try library.fetchFolders().first { $0.title == "Trips" })
            #expect(trips.localIdentifier == "keyfolder:originals/Trips/" && trips.count == 3 && trips.isKeyFolder)
            let rome = try #require(try library.collection(withLocalIdentifier: "keys:originals/Trips/Rome/"))
            #expect(rome.subtype == .albumKeyFolder && rome.kind == .album && !rome.canContainAssets)
            #expect(rome.folderIdentifier == trips.localIdentifier && rome.creationDate == nil)
            let r1 = try library.asset(path: "Trips/Rome/r1.jpg")
            #expect(try library.fetchCollections(containing: r1).map(\.localIdentifier) == [rome.localIdentifier])
            #expect(try library.fetchAllAlbums().count == 5)

            // Another tool adds to Rome, makes Venice, empties Home: one sync, ordinary changes.
            let romeResult = try library.fetchAssets(in: rome)
            var reader = ChangeReader(observing: library)
            try harness.put("Trips/Rome/r3.jpg", data: Data("r3".utf8))
            try harness.put("Trips/Rome/r0.jpg", data: Data("r0".utf8))
            try harness.put("Trips/Venice/v1.jpg", data: Data("v1".utf8))
            try harness.server.deleteObject(bucket: LibraryHarness.bucket, key: "originals/Home/h1.jpg")
            try await library.sync(fetchThumbnails: false)
            var changed = Set<String>()
            var details: [FetchResultChangeDetails] = []
            while reader.lastToken < library.currentChangeToken {
                let change = try await reader.next()
                changed.formUnion(change.changedCollectionIdentifiers)
                if let detail = change.details(for: details.last?.fetchResultAfterChanges ?? romeResult) {
                    details.append(detail)
                }
            }
            #expect(
                changed.isSuperset(of: [
                    "keys:originals/Trips/Rome/", "keys:originals/Trips/Venice/", "keys:originals/Home/",
                    "keyfolder:originals/Trips/",
                ]), "\(changed.sorted())")
            let after = try #require(details.last?.fetchResultAfterChanges)
            #expect(after.map(\.key) == ["r0", "r1", "r2", "r3"].map { "originals/Trips/Rome/\($0).jpg" })
            #expect(details.reduce(0) { $0 + ($1.insertedIndexes?.count ?? 99) } == 2)
            #expect(
                try Self.tree(library) == [
                    "A/B/C (1): A/B/C/deep.jpg",
                    "Trips/Paris (1): Trips/Paris/p1.jpg",
                    "Trips/Rome (4): Trips/Rome/r0.jpg Trips/Rome/r1.jpg Trips/Rome/r2.jpg Trips/Rome/r3.jpg",
                    "Trips/Trips (1): Trips/t0.jpg",
                    "Trips/Venice (1): Trips/Venice/v1.jpg",
                ])
            #expect(try library.collection(withLocalIdentifier: "keys:originals/Home/") == nil)
            // Venice appeared in Trips, which now holds four albums.
            #expect(try library.fetchFolders().first { $0.title == "Trips" }?.count == 4)
        }
    }

    @Test("requests that name a folder of keys or its album are refused whole; nothing is committed")
    func foldersOfKeysCannotBeChanged() async throws {
        try await withHarness { harness in
            for path in Self.paths { try harness.put(path, data: Data(path.utf8)) }
            let library = try await Self.open(harness, "shown", keyFolders: true)
            try await library.sync(fetchThumbnails: false)
            let rome = try #require(try library.collection(withLocalIdentifier: "keys:originals/Trips/Rome/"))
            let trips = try #require(try library.fetchFolders().first { $0.title == "Trips" })
            let loose = try library.asset(path: "loose.jpg")
            let token = library.currentChangeToken
            let attempts: [(String, @Sendable (AssetChangeRequests) -> Void)] = [
                ("add", { $0.addAssets([loose], to: rome) }),
                ("rename", { $0.renameCollection(rome, to: "Roma") }),
                ("delete", { $0.deleteCollections([trips]) }),
                ("album in it", { $0.createAlbum(title: "Mine", in: trips) }),
                ("move into it", { $0.moveCollection($0.createAlbum(title: "Mine"), to: trips) }),
            ]
            for (name, request) in attempts {
                await #expect(throws: CloudAssetsError.self, "\(name)") {
                    try await library.performChanges { requests in
                        requests.createAlbum(title: "Made in the same call")
                        request(requests)
                    }
                }
            }
            #expect(library.currentChangeToken == token)
            #expect(try library.fetchAllAlbums().allSatisfy { $0.subtype == .albumKeyFolder })
        }
    }

    @Test("with the setting off there are no folders of keys, and no change names one")
    func offByDefault() async throws {
        try await withHarness { harness in
            for path in Self.paths { try harness.put(path, data: Data(path.utf8)) }
            let library = try await Self.open(harness, "hidden", keyFolders: false)
            var reader = ChangeReader(observing: library)
            try await library.sync(fetchThumbnails: false)
            #expect(try library.fetchAllAlbums().isEmpty && library.fetchFolders().isEmpty)
            #expect(try library.collection(withLocalIdentifier: "keys:originals/Trips/Rome/") == nil)
            while reader.lastToken < library.currentChangeToken {
                #expect(try await reader.next().changedCollectionIdentifiers.isEmpty)
            }
            // The catalog kept the counts all along: turning the setting on shows them at once.
            library.close()
            let shown = try await Self.open(harness, "hidden", keyFolders: true)
            #expect(try shown.fetchAllAlbums().count == 5)
        }
    }

    @Test("the folder counts the catalog keeps equal a recount of its keys after random inserts and deletes")
    func folderCountsMatchARecount() throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let store = try AssetStore(folder: folder.url.appendingPathComponent("store"))
        var random = SplitMix64(seed: 42)
        let names = ["a/", "a/b/", "b/", "", "a/b/c/", "é/", "a*[/"]
        var live: [String: Int64] = [:]
        for round in 0..<40 {
            _ = try store.write { tx in
                for step in 0..<Int(random.next() % 12) {
                    if !live.isEmpty, random.next() % 3 == 0 {
                        let key = live.keys.sorted()[Int(random.next() % UInt64(live.count))]
                        try tx.delete(live.removeValue(forKey: key)!)
                    } else {
                        let record = testRecord(
                            names[Int(random.next() % UInt64(names.count))] + "k\(round)-\(step)", day: round)
                        live[record.key] = try tx.insert(record)
                    }
                }
            }
            var recount: [String: Int] = [:]
            for key in live.keys {
                if let folder = StorePredicate.keyFolder(of: key) { recount[folder, default: 0] += 1 }
            }
            let kept = try store.keyFolders(under: "")
            #expect(Dictionary(uniqueKeysWithValues: kept.map { ($0.folder, $0.count) }) == recount, "round \(round)")
        }
    }
}
