import AssetStore
import Essentials
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Albums, folders and smart albums in one library: the order of an album through every request, folders, the
/// requests refused whole, an asset leaving its albums, and change details of album results against the truth.
@Suite(.heavy) struct AlbumTests {
    /// An offline library holding `count` assets (`a0`, `a1`, … by creation day).
    static func library(
        assets count: Int, _ body: (AssetLibrary, [Asset]) async throws -> Void
    ) async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration())
        defer { library.close() }
        let (ids, _) = try library.catalog.store.write { tx in
            try (0..<count).map { try tx.insert(testRecord("a\($0)", day: $0)) }
        }
        let assets = try ids.map { try #require(try library.asset(withLocalIdentifier: String($0))) }
        try await body(library, assets)
    }

    static func order(_ library: AssetLibrary, _ album: any CollectionIdentifying) throws -> [Int64] {
        let collection = try #require(try library.collection(withLocalIdentifier: album.localIdentifier))
        return Array(try library.fetchAssets(in: collection).identifiers)
    }

    @Test("an album keeps its own order through add, insert, move and remove; a second add changes nothing")
    func albumOrder() async throws {
        try await Self.library(assets: 5) { library, a in
            var album: CollectionPlaceholder!
            try await library.performChanges { requests in
                album = requests.createAlbum(title: "  Trips  ")
                requests.addAssets([a[2], a[0], a[4]], to: album)
            }
            let ids = a.map(\.rowID)
            #expect(try Self.order(library, album) == [ids[2], ids[0], ids[4]])
            let fetched = try #require(try library.collection(withLocalIdentifier: album.localIdentifier))
            #expect(fetched.title == "Trips" && fetched.kind == .album && fetched.subtype == .albumRegular)
            #expect(fetched.estimatedAssetCount == 3 && fetched.folderIdentifier == nil)

            try await library.performChanges { requests in
                requests.insertAssets([a[1], a[2]], into: album, at: 1)  // a2 is in it already: stays first
            }
            #expect(try Self.order(library, album) == [ids[2], ids[1], ids[0], ids[4]])
            try await library.performChanges { requests in
                requests.moveAssets(in: album, at: IndexSet([0, 2]), to: 2)
            }
            #expect(try Self.order(library, album) == [ids[1], ids[4], ids[2], ids[0]])
            try await library.performChanges { requests in
                requests.removeAssets([a[4], a[3]], from: album)
                requests.addAssets([a[3]], to: album)
            }
            #expect(try Self.order(library, album) == [ids[1], ids[2], ids[0], ids[3]])
            // A sort given by the caller replaces the album's order; a predicate filters it.
            let collection = try #require(try library.collection(withLocalIdentifier: album.localIdentifier))
            let byDate = try library.fetchAssets(
                in: collection, options: FetchOptions(sortBy: [.creationDate(ascending: true)]))
            #expect(Array(byDate.identifiers) == [ids[0], ids[1], ids[2], ids[3]])
            let limited = try library.fetchAssets(in: collection, options: FetchOptions(limit: 2))
            #expect(Array(limited.identifiers) == [ids[1], ids[2]])
            #expect(try library.fetchCollections(containing: a[0]).map(\.localIdentifier) == [album.localIdentifier])
            #expect(try library.fetchCollections(containing: a[4]).isEmpty)

            // A token unchanged by a request that changes nothing.
            let token = library.currentChangeToken
            try await library.performChanges { requests in requests.addAssets([a[0]], to: album) }
            #expect(library.currentChangeToken == token)
        }
    }

    @Test("inserting again and again at one place renumbers the album when the gap runs out, keeping its order")
    func repeatedInsertionsAtOnePlace() async throws {
        try await Self.library(assets: 70) { library, a in
            var album: CollectionPlaceholder!
            try await library.performChanges { requests in
                album = requests.createAlbum(title: "Dense")
                requests.addAssets([a[0], a[1]], to: album)
            }
            // Each goes between a0 and the one inserted before it: the gap halves every time (2^20 at first).
            for asset in a[2...] {
                try await library.performChanges { requests in requests.insertAssets([asset], into: album, at: 1) }
            }
            let ids = a.map(\.rowID)
            #expect(try Self.order(library, album) == [ids[0]] + ids[2...].reversed() + [ids[1]])
        }
    }

    @Test("folders nest; a folder never goes inside itself; deleting one deletes its albums, not their assets")
    func folders() async throws {
        try await Self.library(assets: 2) { library, a in
            var trips: CollectionPlaceholder!
            var italy: CollectionPlaceholder!
            var rome: CollectionPlaceholder!
            try await library.performChanges { requests in
                trips = requests.createFolder(title: "Trips")
                italy = requests.createFolder(title: "Italy", in: trips)
                rome = requests.createAlbum(title: "Rome", in: italy)
                requests.addAssets(a, to: rome)
                requests.createAlbum(title: "Home")
            }
            #expect(try library.fetchFolders().map(\.title) == ["Trips"])
            let tripsFolder = try #require(try library.fetchFolders().first)
            #expect(tripsFolder.count == 1)
            let italyFolder = try #require(try library.fetchFolders(in: tripsFolder).first)
            #expect(italyFolder.title == "Italy" && italyFolder.folderIdentifier == trips.localIdentifier)
            #expect(try library.fetchAlbums(in: italyFolder).map(\.title) == ["Rome"])
            #expect(try library.fetchAlbums().map(\.title) == ["Home"])
            #expect(try library.fetchAllAlbums().map(\.title) == ["Home", "Rome"])
            #expect(try library.fetchAlbums(in: italyFolder).first?.folderIdentifier == italy.localIdentifier)

            // Trips into Italy (which is inside Trips): refused, and the whole change with it.
            let token = library.currentChangeToken
            let error = await #expect(throws: CloudAssetsError.self) {
                try await library.performChanges { requests in
                    requests.renameCollection(tripsFolder, to: "Travels")
                    requests.moveCollection(tripsFolder, to: italyFolder)
                }
            }
            #expect(error?.code == .cannotChangeCollection)
            #expect(library.currentChangeToken == token)
            #expect(try library.fetchFolders().map(\.title) == ["Trips"])

            try await library.performChanges { requests in requests.moveCollection(italyFolder, to: nil) }
            #expect(try library.fetchFolders().map(\.title) == ["Italy", "Trips"])
            try await library.performChanges { requests in requests.deleteCollections([italyFolder]) }
            #expect(try library.fetchFolders().map(\.title) == ["Trips"])
            #expect(try library.fetchAllAlbums().map(\.title) == ["Home"])
            #expect(try library.collection(withLocalIdentifier: rome.localIdentifier) == nil)
            #expect(try library.fetchAssets().count == 2)
        }
    }

    @Test("a request naming a smart album, an unknown album, a folder as an album or an empty title commits nothing")
    func refusedRequests() async throws {
        try await Self.library(assets: 2) { library, a in
            let favorites = try #require(try library.fetchSmartAlbums().first { $0.subtype == .smartAlbumFavorites })
            var folder: CollectionPlaceholder!
            try await library.performChanges { requests in folder = requests.createFolder(title: "F") }
            let token = library.currentChangeToken
            let cases: [(CloudAssetsError.Code, (AssetChangeRequests) -> Void)] = [
                (.cannotChangeCollection, { $0.addAssets(a, to: favorites) }),
                (.noSuchCollection, { $0.addAssets(a, to: CollectionPlaceholder(localIdentifier: "nope")) }),
                (.cannotChangeCollection, { $0.addAssets(a, to: folder) }),
                (.cannotChangeCollection, { $0.createAlbum(title: " \n ") }),
                (.noSuchCollection, { $0.createAlbum(title: "X", in: CollectionPlaceholder(localIdentifier: "nope")) }),
            ]
            for (code, body) in cases {
                let error = await #expect(throws: CloudAssetsError.self) {
                    try await library.performChanges { requests in
                        requests.createAlbum(title: "Made first")
                        body(requests)
                    }
                }
                #expect(error?.code == code)
            }
            #expect(library.currentChangeToken == token)
            #expect(try library.fetchAllAlbums().isEmpty)
        }
    }

    @Test("smart albums follow the catalog: favourites, videos, hidden, recently deleted")
    func smartAlbums() async throws {
        try await Self.library(assets: 0) { library, _ in
            let store = library.catalog.store
            let (ids, _) = try store.write { tx in
                [
                    try tx.insert(testRecord("f", day: 1, favorite: true)),
                    try tx.insert(testRecord("v", day: 2, mediaType: .video)),
                    try tx.insert(testRecord("h", day: 3, favorite: true, hidden: true)),
                    try tx.insert(testRecord("p", day: 4)),
                ]
            }
            let p = try #require(try library.asset(withLocalIdentifier: String(ids[3])))
            try await library.performChanges { requests in requests.deleteAssets([p]) }
            let smart = Dictionary(uniqueKeysWithValues: try library.fetchSmartAlbums().map { ($0.subtype, $0) })
            func members(_ subtype: AssetCollection.Subtype) throws -> [Int64] {
                Array(try library.fetchAssets(in: try #require(smart[subtype])).identifiers)
            }
            #expect(try members(.smartAlbumFavorites) == [ids[0]])
            #expect(try members(.smartAlbumVideos) == [ids[1]])
            #expect(try members(.smartAlbumHidden) == [ids[2]])
            #expect(try members(.smartAlbumRecentlyDeleted) == [ids[3]])
            #expect(try members(.smartAlbumEdited) == [])
            #expect(smart[.smartAlbumFavorites]?.estimatedAssetCount == 1)
            #expect(smart[.smartAlbumRecentlyDeleted]?.estimatedAssetCount == 1)
            #expect(smart.values.allSatisfy { $0.kind == .smartAlbum && !$0.canContainAssets })
            let again = try library.collection(
                withLocalIdentifier: try #require(smart[.smartAlbumVideos]).localIdentifier)
            #expect(again?.subtype == .smartAlbumVideos)
        }
    }

    @Test("Recently Added: added in the last 30 days or not listed yet, newest first; an import is an insertion")
    func recentlyAdded() async throws {
        try await Self.library(assets: 0) { library, _ in
            let store = library.catalog.store
            let now = Date()
            func added(_ name: String, _ date: Date, hidden: Bool = false) -> AssetRecord {
                var record = testRecord(name, hidden: hidden)
                record.lastModified = date
                return record
            }
            let (ids, _) = try store.write { tx in
                [
                    try tx.insert(added("old", now.addingTimeInterval(-31 * 86_400))),
                    try tx.insert(added("week", now.addingTimeInterval(-7 * 86_400))),
                    try tx.insert(added("today", now.addingTimeInterval(-60))),
                    try tx.insert(added("pending", AssetRecord.notListedYet)),
                    try tx.insert(added("hidden", now.addingTimeInterval(-60), hidden: true)),
                ]
            }
            let album = try #require(
                try library.fetchSmartAlbums().first { $0.subtype == .smartAlbumRecentlyAdded })
            #expect(album.title == "Recently Added" && album.localIdentifier == "smart:recentlyadded")
            #expect(album.estimatedAssetCount == 3)
            let before = try library.fetchAssets(in: album)
            #expect(Array(before.identifiers) == [ids[3], ids[2], ids[1]])
            #expect(before[0].addedDate == nil)
            #expect(before[1].addedDate == now.addingTimeInterval(-60))
            #expect(
                try library.collection(withLocalIdentifier: album.localIdentifier)?.subtype == .smartAlbumRecentlyAdded)

            // Another import (not listed yet): first, as an insertion; the old asset listed anew comes in too.
            let token = library.currentChangeToken
            let (imported, _) = try store.write { tx -> Int64 in
                try tx.update(ids[0]) { $0.lastModified = now.addingTimeInterval(-86_400) }
                return try tx.insert(added("imported", AssetRecord.notListedYet))
            }
            let change = try #require(try library.changes(since: token).first)
            let details = try #require(change.details(for: before))
            #expect(Array(details.fetchResultAfterChanges.identifiers) == [imported, ids[3], ids[2], ids[0], ids[1]])
            #expect(details.insertedIndexes == IndexSet([0, 3]) && details.removedIndexes == IndexSet())
            #expect(
                Array(details.fetchResultAfterChanges.identifiers)
                    == Array(try library.fetchAssets(in: album).identifiers))
        }
    }

    @Test("an asset deleted from the library leaves every album: a removal in the album's result, a changed album")
    func deletedAssetLeavesItsAlbums() async throws {
        try await Self.library(assets: 3) { library, a in
            var one: CollectionPlaceholder!
            var two: CollectionPlaceholder!
            try await library.performChanges { requests in
                one = requests.createAlbum(title: "One")
                two = requests.createAlbum(title: "Two")
                requests.addAssets(a, to: one)
                requests.addAssets([a[1]], to: two)
            }
            let album = try #require(try library.collection(withLocalIdentifier: one.localIdentifier))
            let before = try library.fetchAssets(in: album)
            let token = library.currentChangeToken
            _ = try library.catalog.store.write { tx in try tx.delete(a[1].rowID) }
            let change = try #require(try library.changes(since: token).first)
            #expect(change.changedCollectionIdentifiers == [one.localIdentifier, two.localIdentifier])
            let details = try #require(change.details(for: before))
            #expect(details.removedIndexes == IndexSet([1]) && details.insertedIndexes == IndexSet())
            #expect(Array(details.fetchResultAfterChanges.identifiers) == [a[0].rowID, a[2].rowID])
            #expect(try library.collection(withLocalIdentifier: two.localIdentifier)?.estimatedAssetCount == 0)
        }
    }

    @Test("change details of an album's result turn the before list into the after list, with the fewest moves")
    func albumChangeDetailsAgainstTheTruth() async throws {
        try await Self.library(assets: 12) { library, a in
            var album: CollectionPlaceholder!
            try await library.performChanges { requests in
                album = requests.createAlbum(title: "Random")
                requests.addAssets(Array(a.prefix(6)), to: album)
            }
            var random = SplitMix64(seed: 41)
            let store = library.catalog.store
            let observer = RecordingObserver()
            library.register(observer)
            var live = Set(a.map(\.rowID))
            for round in 0..<150 {
                let collection = try #require(try library.collection(withLocalIdentifier: album.localIdentifier))
                // Every third round filters favourites out, to test membership through a predicate too.
                let options: FetchOptions? =
                    round % 3 == 2 ? FetchOptions(predicate: .not(.isFavorite(true))) : nil
                let before = try library.fetchAssets(in: collection, options: options)
                let beforeIDs = Array(before.identifiers)
                let members = try store.memberIDs(
                    ofCollection: try #require(try store.collection(uuid: album.localIdentifier)).id)
                let token = library.currentChangeToken
                let pool = try a.filter { live.contains($0.rowID) }.map {
                    try #require(try library.asset(withLocalIdentifier: $0.localIdentifier))
                }
                switch random.next() % 5 {
                case 0:
                    let picks = (0..<Int(random.next() % 3 + 1)).map { _ in
                        pool[Int(random.next() % UInt64(pool.count))]
                    }
                    let index = Int(random.next() % UInt64(members.count + 2))
                    try await library.performChanges { $0.insertAssets(picks, into: album, at: index) }
                case 1:
                    let picks = pool.filter { _ in random.next() % 3 == 0 }
                    try await library.performChanges { $0.removeAssets(picks, from: album) }
                case 2 where members.count > 1:
                    let indexes = IndexSet((0..<members.count).filter { _ in random.next() % 3 == 0 })
                    let destination = Int(random.next() % UInt64(members.count - indexes.count + 1))
                    try await library.performChanges { $0.moveAssets(in: album, at: indexes, to: destination) }
                case 3:
                    let pick = pool[Int(random.next() % UInt64(pool.count))]
                    try await library.performChanges { $0.setFavorite(!pick.isFavorite, for: [pick]) }
                default:
                    if pool.count > 4 {
                        let pick = pool[Int(random.next() % UInt64(pool.count))]
                        _ = try store.write { tx in try tx.delete(pick.rowID) }
                        live.remove(pick.rowID)
                    }
                }
                let truth = Array(try library.fetchAssets(in: collection, options: options).identifiers)
                // The change as an observer gets it (its record of the album's members), then as the history
                // gives it (the album read again): each must turn the before list into the truth.
                await library.drainDeliveries()
                let live = observer.changes.first { $0.token.rawValue == token.rawValue + 1 }
                let historical = try library.changes(since: token).first
                // (A row deleted through the store directly is not delivered live: only the history has it.)
                for change in [live, historical].compactMap({ $0 }) {
                    guard let details = change.details(for: before) else {
                        #expect(truth == beforeIDs, "round \(round)")
                        continue
                    }
                    let afterIDs = Array(details.fetchResultAfterChanges.identifiers)
                    #expect(afterIDs == truth, "round \(round)")
                    #expect(applyPhotoKitConvention(beforeIDs, details) == afterIDs, "round \(round)")
                    var rows = beforeIDs
                    ListUpdate(details).apply(to: &rows, afterCount: afterIDs.count) { afterIDs[$0] }
                    #expect(rows == afterIDs, "round \(round)")
                    let kept = Set(beforeIDs).intersection(afterIDs)
                    #expect(
                        details.moves.count
                            == kept.count
                            - longestCommonSubsequence(beforeIDs.filter(kept.contains), afterIDs.filter(kept.contains)),
                        "round \(round)")
                    for move in details.moves { #expect(beforeIDs[move.beforeIndex] == afterIDs[move.toIndex]) }
                    let updated = Set(change.updatedIdentifiers.compactMap(Int64.init))
                    #expect(
                        Set((details.changedIndexes ?? []).map { afterIDs[$0] }) == kept.intersection(updated),
                        "round \(round)")
                }
            }
        }
    }

    static func positions(_ list: SortedIdentifiers) -> [Int64] {
        guard case .integer(let values)? = list.keys.first else { return [] }
        return Array(values)
    }

    @Test("the packed order of every album agrees with its members through random changes, hidden and trashed alike")
    func packedOrderAgreesWithTheMembers() async throws {
        try await Self.library(assets: 12) { library, a in
            let store = library.catalog.store
            var albums: [CollectionPlaceholder] = []
            try await library.performChanges { requests in
                albums = (0..<3).map { requests.createAlbum(title: "Album \($0)") }
            }
            var random = SplitMix64(seed: 23)
            func pick() -> Asset { a[Int(random.next(below: UInt64(a.count)))] }
            for round in 0..<80 {
                let album = albums[Int(random.next(below: 3))]
                guard let current = try library.collection(withLocalIdentifier: album.localIdentifier) else { continue }
                let count = try library.fetchAssets(in: current, options: FetchOptions(includeHiddenAssets: true)).count
                try await library.performChanges { requests in
                    switch random.next(below: 6) {
                    case 0, 1: requests.insertAssets([pick(), pick()], into: current, at: Int(random.next(below: 4)))
                    case 2: requests.removeAssets([pick()], from: current)
                    case 3 where count > 1:
                        requests.moveAssets(in: current, at: IndexSet([0]), to: Int(random.next(below: UInt64(count))))
                    case 4: requests.setHidden(random.next(below: 2) == 0, for: [pick()])
                    default: requests.deleteAssets([pick()])
                    }
                }
                // Two ways to the same members: the packed order (the default fetch) and a walk of the members
                // table (a predicate the packed order does not answer, selecting the same assets).
                for album in albums {
                    guard let record = try store.collection(uuid: album.localIdentifier) else { continue }
                    for base in [StorePredicate.all, .isHidden(false), .and([.isHidden(false), .isTrashed(false)])] {
                        let packed = try store.members(ofCollection: record.id, matching: base, limit: nil)
                        let walked = try store.members(
                            ofCollection: record.id, matching: .and([base, .keyPrefix("")]), limit: nil)
                        #expect(packed.ids == walked.ids, "round \(round), \(base)")
                        #expect(Self.positions(packed) == Self.positions(walked), "round \(round), positions")
                        let limited = try store.members(ofCollection: record.id, matching: base, limit: 2)
                        #expect(Array(limited.ids) == Array(walked.ids.prefix(2)))
                    }
                }
            }
        }
    }
}
