import AssetStore
import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Albums changed by libraries whose syncs overlap in time: no change one library made is undone by another's
/// sync unless a later change undid it.
@Suite(.heavy) struct AlbumRaceTests {
    /// Libraries "a" and "b" following the journal of a bucket of `assets` originals, both synced once.
    static func twoLibraries(_ harness: LibraryHarness, assets: Int) async throws -> (AssetLibrary, AssetLibrary) {
        try SharedAlbumTests.seed(harness, count: assets)
        let a = try await SharedAlbumTests.open(harness, "a")
        let b = try await SharedAlbumTests.open(harness, "b")
        try await a.sync(fetchThumbnails: false)
        try await b.sync(fetchThumbnails: false)
        return (a, b)
    }

    @Test("a removal made while another library adds, both syncing at once, is never undone")
    func removalsSurviveConcurrentSyncs() async throws {
        try await withHarness { harness in
            let (a, b) = try await Self.twoLibraries(harness, assets: 16)
            var album: CollectionPlaceholder!
            try await a.performChanges { album = $0.createAlbum(title: "Race") }
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            var removed: [String] = []
            for round in 0..<12 {
                let onA = try #require(try a.collection(withLocalIdentifier: album.localIdentifier))
                try await a.performChanges { $0.addAssets([try! SharedAlbumTests.asset(a, round)], to: onA) }
                // B takes out every member it has been shown: A's additions of earlier rounds.
                let onB = try #require(try b.collection(withLocalIdentifier: album.localIdentifier))
                let shown = Array(try b.fetchAssets(in: onB))
                if !shown.isEmpty {
                    try await b.performChanges { $0.removeAssets(shown, from: onB) }
                    removed += shown.map(\.key)
                }
                async let syncedA = a.sync(fetchThumbnails: false)
                async let syncedB = b.sync(fetchThumbnails: false)
                _ = try await (syncedA, syncedB)
            }
            for _ in 0..<2 {
                try await a.sync(fetchThumbnails: false)
                try await b.sync(fetchThumbnails: false)
            }
            let onA = try SharedAlbumTests.albums(a)["Race"] ?? []
            let onB = try SharedAlbumTests.albums(b)["Race"] ?? []
            #expect(onA == onB)
            #expect(removed.count >= 8)
            #expect(Set(onA).intersection(removed).isEmpty, "removals undone: \(Set(onA).intersection(removed))")
        }
    }

    /// A crafted collection document: `members` are (key, present) pairs; stamps at `time`.
    static func document(
        id: String, kind: String = "album", title: String, parent: String? = nil, deleted: Bool = false,
        members: [(String, Bool)] = [], time: Int64 = 1_000
    ) -> Data {
        let stamp = "{\"device\":\"stranger\",\"time\":\(time)}"
        var text = "{\"format\":1,\"id\":\"\(id)\",\"kind\":\"\(kind)\",\"title\":\"\(title)\""
        text += ",\"titleStamp\":\(stamp),\"parentStamp\":\(stamp)"
        if let parent { text += ",\"parent\":\"\(parent)\"" }
        if deleted { text += ",\"deleted\":\(stamp)" }
        text += ",\"members\":["
        text += members.enumerated().map { index, member in
            "{\"key\":\"\(member.0)\",\"added\":\(stamp),\"position\":\(index + 1),\"placed\":\(stamp)"
                + (member.1 ? "" : ",\"removed\":{\"device\":\"stranger\",\"time\":\(time + 1)}") + "}"
        }.joined(separator: ",")
        return Data((text + "]}").utf8)
    }

    static func uuid() -> String { UUID().uuidString.lowercased() }

    /// Every collection reachable from the top level, as paths of titles.
    static func tree(_ library: AssetLibrary) throws -> Set<String> {
        var paths = Set<String>()
        func visit(_ folder: CollectionList?, _ prefix: String) throws {
            for album in try library.fetchAlbums(in: folder) { paths.insert(prefix + album.title) }
            for inner in try library.fetchFolders(in: folder) {
                paths.insert(prefix + inner.title + "/")
                try visit(inner, prefix + inner.title + "/")
            }
        }
        try visit(nil, "")
        return paths
    }

    @Test("a folder deleted while another library moves an album into it and makes one there: gone everywhere")
    func folderDeletedWhileAnotherUsesIt() async throws {
        try await withHarness { harness in
            let (a, b) = try await Self.twoLibraries(harness, assets: 3)
            var folder: CollectionPlaceholder!
            var moved: CollectionPlaceholder!
            try await a.performChanges { requests in
                folder = requests.createFolder(title: "F")
                moved = requests.createAlbum(title: "X")
                requests.addAssets([try! SharedAlbumTests.asset(a, 0)], to: moved)
            }
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            try await a.performChanges { requests in
                requests.deleteCollections([folder])
            }
            var made: CollectionPlaceholder!
            try await b.performChanges { requests in
                let inB: CollectionPlaceholder = folder
                requests.moveCollection(moved, to: inB)
                made = requests.createAlbum(title: "NewInF", in: inB)
                requests.addAssets([try! SharedAlbumTests.asset(b, 1)], to: made)
            }
            async let syncedA = a.sync(fetchThumbnails: false)
            async let syncedB = b.sync(fetchThumbnails: false)
            _ = try await (syncedA, syncedB)
            for library in [a, b] { try await library.sync(mode: .full, fetchThumbnails: false) }
            for library in [a, b] { try await library.sync(mode: .full, fetchThumbnails: false) }
            let c = try await SharedAlbumTests.open(harness, "c", journal: false)
            try await c.sync(fetchThumbnails: false)
            for library in [a, b, c] {
                #expect(try library.collection(withLocalIdentifier: moved.localIdentifier) == nil)
                #expect(try library.collection(withLocalIdentifier: made.localIdentifier) == nil)
                #expect(try library.fetchAllAlbums().isEmpty)
                #expect(try Self.tree(library).isEmpty)
            }
        }
    }

    @Test("crafted folder loops and an album inside an album are shown at the top level and can be changed by id")
    func craftedLoopsAreSettled() async throws {
        try await withHarness { harness in
            try SharedAlbumTests.seed(harness, count: 1)
            let bucket = LibraryHarness.bucket
            let (f1, f2, outer, inner, orphan) = (Self.uuid(), Self.uuid(), Self.uuid(), Self.uuid(), Self.uuid())
            let put = { (id: String, data: Data) in
                _ = try harness.server.putObject(bucket: bucket, key: "collections/\(id).json", data: data)
            }
            try put(f1, Self.document(id: f1, kind: "folder", title: "One", parent: f2))
            try put(f2, Self.document(id: f2, kind: "folder", title: "Two", parent: f1))
            try put(outer, Self.document(id: outer, title: "Outer"))
            try put(inner, Self.document(id: inner, title: "Inner", parent: outer))
            try put(orphan, Self.document(id: orphan, title: "Orphan", parent: Self.uuid()))
            let a = try await SharedAlbumTests.open(harness, "a", journal: false)
            try await a.sync(fetchThumbnails: false)
            let shown = try Self.tree(a)
            // The loop is broken (where depends on the order read); every collection shows exactly once.
            #expect(shown.contains("Outer") && shown.contains("Inner") && shown.contains("Orphan"))
            #expect(
                shown.filter { $0.hasSuffix("One/") }.count == 1 && shown.filter { $0.hasSuffix("Two/") }.count == 1)
            #expect(shown.count == 5)
            for id in [f1, f2] {
                try await a.performChanges {
                    $0.renameCollection(CollectionPlaceholder(localIdentifier: id), to: "Renamed " + id.prefix(4))
                }
            }
            let album = try #require(try a.collection(withLocalIdentifier: inner))
            try await a.performChanges { $0.renameCollection(album, to: "Inner again") }
            // Another library reads what this one settled and shows the same.
            try await a.sync(fetchThumbnails: false)
            let b = try await SharedAlbumTests.open(harness, "b", journal: false)
            try await b.sync(fetchThumbnails: false)
            let (onA, onB) = (try Self.tree(a), try Self.tree(b))
            #expect(onA == onB, "\(onA) \(onB)")
        }
    }

    @Test("a stranger's album naming 20,000 keys that do not exist is read once: kept aside, resolved when one comes")
    func unknownKeysCostNothingAfterTheFirstRead() async throws {
        try await withHarness { harness in
            try SharedAlbumTests.seed(harness, count: 2)
            let id = Self.uuid()
            let ghosts = (0..<20_000).map { "originals/ghost/\($0).jpg" }
            let members = [("originals/a0.jpg", true), ("originals/a1.jpg", true)] + ghosts.map { ($0, true) }
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: "collections/\(id).json",
                data: Self.document(id: id, title: "Big", members: members))
            let a = try await SharedAlbumTests.open(harness, "a", journal: false)
            try await a.sync(fetchThumbnails: false)
            let album = try #require(try a.collection(withLocalIdentifier: id))
            #expect(try a.fetchAssets(in: album).map(\.key) == ["originals/a0.jpg", "originals/a1.jpg"])
            let store = a.catalog.store
            let (kept, pending) = try store.write { tx in
                let row = try #require(try tx.collection(uuid: id))
                return (row.document?.utf8.count ?? 0, try tx.pendingMembers(ofCollection: row.id).count)
            }.0
            let flagged = try store.collectionsToShare().unresolved.contains(id)
            // The catalog's document holds what it shows; the rest waits aside, and nothing is left to resolve.
            #expect(kept < 2_000)
            #expect(pending == 20_000)
            #expect(!flagged)
            // An asset with one of those keys arrives: the album shows it.
            try harness.put("ghost/7.jpg", data: Data("seven".utf8))
            try await a.sync(mode: .full, fetchThumbnails: false)
            let again = try #require(try a.collection(withLocalIdentifier: id))
            #expect(
                try a.fetchAssets(in: again).map(\.key) == [
                    "originals/a0.jpg", "originals/a1.jpg", "originals/ghost/7.jpg",
                ])
            #expect(
                try store.write { tx in
                    try tx.pendingMembers(ofCollection: try #require(try tx.collection(uuid: id)).id).count
                }.0 == 19_999)
            // Deleted: the catalog keeps its header alone.
            try await a.performChanges { $0.deleteCollections([again]) }
            try await a.sync(fetchThumbnails: false)
            let (document, left) = try store.write { tx in
                let row = try #require(try tx.collection(uuid: id, includingDeleted: true))
                return (row.document ?? "", try tx.pendingMembers(ofCollection: row.id).count)
            }.0
            #expect(!document.contains("members") && left == 0)
            let written = try #require(
                try harness.server.objectData(bucket: LibraryHarness.bucket, key: "collections/\(id).json"))
            #expect(written.count < 2_000, "the bucket's document of a deleted album is its header")
        }
    }

    @Test("an album's count is what it shows: members in the trash or hidden are not counted")
    func countsAgreeWithContents() async throws {
        try await withHarness { harness in
            try SharedAlbumTests.seed(harness, count: 6)
            let a = try await SharedAlbumTests.open(harness, "a")
            try await a.sync(fetchThumbnails: false)
            var album: CollectionPlaceholder!
            let assets = try (0..<6).map { try SharedAlbumTests.asset(a, $0) }
            try await a.performChanges { requests in
                album = requests.createAlbum(title: "Counted")
                requests.addAssets(assets, to: album)
            }
            func agree() throws {
                let current = try #require(try a.collection(withLocalIdentifier: album.localIdentifier))
                let listed = try #require(try a.fetchAllAlbums().first { $0.localIdentifier == album.localIdentifier })
                let shown = try a.fetchAssets(in: current).count
                #expect(current.estimatedAssetCount == shown && listed.estimatedAssetCount == shown)
            }
            try agree()
            try await a.performChanges { $0.deleteAssets(Array(assets[0..<3])) }
            try agree()
            try await a.performChanges { $0.setHidden(true, for: [assets[3]]) }
            try agree()
            try await a.performChanges { $0.restoreAssets([assets[0]]) }
            try await a.performChanges { $0.setHidden(false, for: [assets[3]]) }
            try agree()
            #expect(try #require(try a.collection(withLocalIdentifier: album.localIdentifier)).estimatedAssetCount == 4)
        }
    }

    @Test("a sync that fails after it read the journal's album announcements leaves them to the next sync")
    func albumsSurviveAFailedSync() async throws {
        try await withHarness { harness in
            let (a, b) = try await Self.twoLibraries(harness, assets: 3)
            try await a.performChanges { requests in
                for index in 0..<3 {
                    let album = requests.createAlbum(title: "Album \(index)")
                    requests.addAssets([try! SharedAlbumTests.asset(a, index)], to: album)
                }
            }
            try await a.sync(fetchThumbnails: false)
            // The albums' documents cannot be read: the sync fails after the journal's entries are applied.
            let fault = harness.server.faults.add(.internalError, keyPattern: "collections/*", method: "GET")
            await #expect(throws: (any Error).self) { try await b.sync(fetchThumbnails: false) }
            #expect(try b.fetchAllAlbums().isEmpty)
            harness.server.faults.remove(fault)
            let recovered = try await b.sync(fetchThumbnails: false)
            #expect(recovered.collectionsRead >= 3)
            #expect(try SharedAlbumTests.albums(b) == (try SharedAlbumTests.albums(a)))
            #expect(try b.fetchAllAlbums().count == 3)
        }
    }
}
