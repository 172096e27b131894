import AssetStore
import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Several libraries change albums and folders at random while their syncs overlap in time, a stranger writes
/// garbage and crafted documents under `collections/`, and syncs fail half-way: after every step no change a library
/// made is undone unless a later change undid it, and at the end every library holds the same albums, folders,
/// members and order.
@Suite(.heavy) struct AlbumPropertyTests {
    /// What a change set: one album's membership of one key, a collection's title, folder or deletion.
    enum Target: Hashable {
        case member(album: String, key: String)
        case title(String)
        case folder(String)
    }

    /// A change made by one library, in the order the test made them.
    struct Event {
        var library: Int
        var value: String
        var millis: Int64
    }

    /// The last change made to each target, and the one before it by another library.
    struct Ledger {
        var last: [Target: Event] = [:]
        var previousByOther: [Target: Event] = [:]
        var deleted = Set<String>()

        mutating func record(_ target: Target, library: Int, value: String) {
            let event = Event(library: library, value: value, millis: Int64(Date().timeIntervalSince1970 * 1000))
            if let last = last[target], last.library != library { previousByOther[target] = last }
            last[target] = event
        }
    }

    static func state(_ library: AssetLibrary, of target: Target) throws -> String? {
        switch target {
        case .member(let album, let key):
            guard let collection = try library.collection(withLocalIdentifier: album) else { return nil }
            let members = try library.fetchAssets(
                in: collection, options: FetchOptions(includeHiddenAssets: true, includeTrashedAssets: true))
            return members.contains { $0.key == key } ? "in" : "out"
        case .title(let id):
            if let album = try library.collection(withLocalIdentifier: id) { return album.title }
            return try Self.folders(library)[id]?.title
        case .folder(let id):
            if let album = try library.collection(withLocalIdentifier: id) { return album.folderIdentifier ?? "top" }
            return try Self.folders(library)[id].map { $0.folderIdentifier ?? "top" }
        }
    }

    /// Every folder shown, by identifier.
    static func folders(_ library: AssetLibrary) throws -> [String: CollectionList] {
        var result: [String: CollectionList] = [:]
        func visit(_ folder: CollectionList?) throws {
            for inner in try library.fetchFolders(in: folder) where result[inner.localIdentifier] == nil {
                result[inner.localIdentifier] = inner
                try visit(inner)
            }
        }
        try visit(nil)
        return result
    }

    /// The whole shared state a library shows: folders (id → title, folder) and albums (id → title, folder,
    /// members in order).
    static func snapshot(_ library: AssetLibrary) throws -> [String: String] {
        var result: [String: String] = [:]
        for (id, folder) in try folders(library) {
            result[id] = "folder \(folder.title) in \(folder.folderIdentifier ?? "top")"
        }
        for album in try library.fetchAllAlbums() {
            let members = try library.fetchAssets(
                in: album, options: FetchOptions(includeHiddenAssets: true, includeTrashedAssets: true))
            result[album.localIdentifier] =
                "album \(album.title) in \(album.folderIdentifier ?? "top"): "
                + members.map(\.key).joined(separator: ",")
        }
        return result
    }

    @Test("libraries changing albums and folders at random, syncing at once, beside a stranger: nothing undone")
    func randomChangesConverge() async throws {
        try await withHarness { harness in
            try SharedAlbumTests.seed(harness, count: 8)
            try await Self.randomChanges(on: harness, steps: 70, seed: 53)
        }
    }

    /// The property, on any bucket holding `originals/a0.jpg` … `a7.jpg`.
    static func randomChanges(on world: some AlbumBucket, steps: Int, seed: UInt64) async throws {
        do {
            var libraries: [AssetLibrary] = []
            for name in ["a", "b", "c"] {
                let library = try await world.open(name, journal: true)
                try await library.sync(fetchThumbnails: false)
                libraries.append(library)
            }
            var random = SplitMix64(seed: seed)
            var ledger = Ledger()
            var albums: [String] = []
            var folders: [String] = []
            func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[Int(random.next() % UInt64(items.count))] }
            for step in 0..<steps {
                let index = Int(random.next() % 3)
                let library = libraries[index]
                let keyIndex = Int(random.next() % 8)
                let asset = try SharedAlbumTests.asset(library, keyIndex)
                switch random.next() % 12 {
                case 0:
                    var created: CollectionPlaceholder!
                    let folder = pick(folders).flatMap { id in
                        random.next() % 2 == 0 && (try? Self.folders(library)[id]) != nil ? id : nil
                    }
                    try await library.performChanges {
                        created = $0.createAlbum(
                            title: "Album \(step)", in: folder.map { CollectionPlaceholder(localIdentifier: $0) })
                    }
                    albums.append(created.localIdentifier)
                    ledger.record(.title(created.localIdentifier), library: index, value: "Album \(step)")
                case 1:
                    var created: CollectionPlaceholder!
                    try await library.performChanges { created = $0.createFolder(title: "Folder \(step)") }
                    folders.append(created.localIdentifier)
                    ledger.record(.title(created.localIdentifier), library: index, value: "Folder \(step)")
                case 2, 3, 4:
                    guard let album = pick(albums), try library.collection(withLocalIdentifier: album) != nil else {
                        continue
                    }
                    let target = CollectionPlaceholder(localIdentifier: album)
                    let inIt = try Self.state(library, of: .member(album: album, key: asset.key)) == "in"
                    try await library.performChanges {
                        if inIt { $0.removeAssets([asset], from: target) } else { $0.addAssets([asset], to: target) }
                    }
                    ledger.record(.member(album: album, key: asset.key), library: index, value: inIt ? "out" : "in")
                case 5:
                    guard let id = pick(albums + folders), try Self.state(library, of: .title(id)) != nil else {
                        continue
                    }
                    try await library.performChanges {
                        $0.renameCollection(CollectionPlaceholder(localIdentifier: id), to: "Renamed \(step)")
                    }
                    ledger.record(.title(id), library: index, value: "Renamed \(step)")
                case 6:
                    // Albums only move (folders moving into each other at once would make a loop, settled apart).
                    guard let album = pick(albums), try library.collection(withLocalIdentifier: album) != nil else {
                        continue
                    }
                    let shown = try Self.folders(library)
                    let into = pick(folders.filter { shown[$0] != nil })
                    try await library.performChanges {
                        $0.moveCollection(
                            CollectionPlaceholder(localIdentifier: album),
                            to: into.map { CollectionPlaceholder(localIdentifier: $0) })
                    }
                    ledger.record(.folder(album), library: index, value: into ?? "top")
                case 7 where step % 3 == 0:
                    guard let id = pick(albums + folders), try Self.state(library, of: .title(id)) != nil else {
                        continue
                    }
                    try await library.performChanges {
                        $0.deleteCollections([CollectionPlaceholder(localIdentifier: id)])
                    }
                    ledger.deleted.insert(id)
                case 8:
                    // A stranger: garbage, and a crafted document naming keys that do not exist.
                    let id = UUID().uuidString.lowercased()
                    try world.putStranger("collections/\(id).json", "{\"format\":1,")
                    try world.putStranger("collections/\(pick(albums) ?? id)/garbage.json", "[]")
                case 9:
                    // A sync that fails half-way (its album reads fail), as on a full disk.
                    guard let heal = world.failCollectionReads() else { continue }
                    _ = try? await library.sync(fetchThumbnails: false)
                    heal()
                default:
                    // Two libraries sync at the same moment.
                    let other = libraries[(index + 1 + Int(random.next() % 2)) % 3]
                    async let first = library.sync(fetchThumbnails: false)
                    async let second = other.sync(fetchThumbnails: false)
                    _ = try await (first, second)
                }
                // No library shows a change of its own undone when nobody changed the same thing after it.
                for (target, event) in ledger.last {
                    if let previous = ledger.previousByOther[target], event.millis - previous.millis < 2 { continue }
                    let owner = libraries[event.library]
                    guard let shown = try Self.state(owner, of: target) else { continue }  // deleted: final
                    #expect(shown == event.value, "step \(step): library \(event.library) shows \(target) as \(shown)")
                }
            }
            for _ in 0..<2 { for library in libraries { try await library.sync(fetchThumbnails: false) } }
            let fresh = try await world.open("d", journal: false)
            try await fresh.sync(fetchThumbnails: false)
            let first = try Self.snapshot(libraries[0])
            #expect(!first.isEmpty)
            for library in libraries.dropFirst() + [fresh] { #expect(try Self.snapshot(library) == first) }
            for id in ledger.deleted { #expect(first[id] == nil) }
        }
    }
}

/// A bucket the album property runs on: the bundled server or Ceph's gateway.
protocol AlbumBucket: Sendable {
    /// Opens library `name` (following the journal, or listing at every sync).
    func open(_ name: String, journal: Bool) async throws -> AssetLibrary
    /// Writes an object as a stranger would.
    func putStranger(_ key: String, _ text: String) throws
    /// Makes reads under `collections/` fail (after the first) until the returned function runs; nil where the
    /// bucket cannot inject faults.
    func failCollectionReads() -> (@Sendable () -> Void)?
}

extension LibraryHarness: AlbumBucket {
    func open(_ name: String, journal: Bool) async throws -> AssetLibrary {
        try await SharedAlbumTests.open(self, name, journal: journal)
    }

    func putStranger(_ key: String, _ text: String) throws {
        try server.putObject(bucket: Self.bucket, key: key, data: Data(text.utf8))
    }

    func failCollectionReads() -> (@Sendable () -> Void)? {
        let fault = server.faults.add(.internalError, keyPattern: "collections/*", method: "GET", afterRequests: 1)
        let server = self.server
        return { server.faults.remove(fault) }
    }
}
