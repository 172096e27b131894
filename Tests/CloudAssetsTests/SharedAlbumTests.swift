import AssetStore
import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Albums and folders through the bucket: one library's albums reach another by the journal (and by a full
/// sync), the merge rules hold when libraries change one album at once, and a stranger's document is refused.
@Suite(.heavy) struct SharedAlbumTests {
    /// Opens library `name` on the harness's bucket, following the journal (no listing after the first sync).
    static func open(_ harness: LibraryHarness, _ name: String, journal: Bool = true) async throws -> AssetLibrary {
        var configuration = harness.configuration(storeURL: harness.folder.appendingPathComponent(name))
        configuration.fullSyncInterval = journal ? 24 * 3600 : 0
        configuration.startsBackgroundTransfers = false
        return try await harness.open(configuration)
    }

    /// Every album as (path, member keys in order), sorted by path: what two libraries must agree on.
    static func albums(_ library: AssetLibrary) throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for album in try library.fetchAllAlbums() {
            let folder = try album.folderIdentifier.map { id in
                try library.fetchFolders().first { $0.localIdentifier == id }?.title ?? "?"
            }
            let members = try library.fetchAssets(
                in: album, options: FetchOptions(includeHiddenAssets: true, includeTrashedAssets: true))
            result[(folder.map { $0 + "/" } ?? "") + album.title] = members.map(\.key)
        }
        return result
    }

    static func seed(_ harness: LibraryHarness, count: Int) throws {
        for index in 0..<count { try harness.put("a\(index).jpg", data: Data("asset \(index)".utf8)) }
    }

    static func asset(_ library: AssetLibrary, _ index: Int) throws -> Asset {
        try library.asset(path: "a\(index).jpg")
    }

    @Test("an album made on one library reaches another through the journal: created, filled, renamed, deleted")
    func albumReachesAnotherLibrary() async throws {
        try await withHarness { harness in
            try Self.seed(harness, count: 4)
            let a = try await Self.open(harness, "a")
            let b = try await Self.open(harness, "b")
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            var rome: CollectionPlaceholder!
            try await a.performChanges { requests in
                let trips = requests.createFolder(title: "Trips")
                rome = requests.createAlbum(title: "Rome", in: trips)
                requests.addAssets([try! Self.asset(a, 2), try! Self.asset(a, 0), try! Self.asset(a, 1)], to: rome)
            }
            let firstRound = try await a.sync(fetchThumbnails: false)
            #expect(firstRound.mode == .incremental)
            #expect(
                try harness.server.objectData(
                    bucket: LibraryHarness.bucket, key: "collections/\(rome.localIdentifier).json") != nil)
            let read = try await b.sync(fetchThumbnails: false)
            #expect(read.mode == .incremental && read.collectionsRead == 2)
            let expected = ["Trips/Rome": ["originals/a2.jpg", "originals/a0.jpg", "originals/a1.jpg"]]
            let onB = try Self.albums(b)
            #expect(onB == expected, "\(onB) \(read.collectionsRead)")
            #expect(try Self.albums(a) == expected)

            // B reorders and renames; A sees both.
            let album = try #require(try b.collection(withLocalIdentifier: rome.localIdentifier))
            try await b.performChanges { requests in
                requests.moveAssets(in: album, at: IndexSet([2]), to: 0)
                requests.renameCollection(album, to: "Roma")
            }
            try await b.sync(fetchThumbnails: false)
            try await a.sync(fetchThumbnails: false)
            let renamed = ["Trips/Roma": ["originals/a1.jpg", "originals/a2.jpg", "originals/a0.jpg"]]
            #expect(try Self.albums(a) == renamed && Self.albums(b) == renamed)

            // A deletes the folder (with the album); B's assets stay.
            let folder = try #require(try a.fetchFolders().first)
            try await a.performChanges { $0.deleteCollections([folder]) }
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            #expect(try b.fetchAllAlbums().isEmpty && b.fetchFolders().isEmpty)
            #expect(try b.fetchAssets().count == 4)

            // A new library that lists the bucket finds the same (nothing: both deleted).
            let c = try await Self.open(harness, "c", journal: false)
            try await c.sync(fetchThumbnails: false)
            #expect(try c.fetchAllAlbums().isEmpty)
        }
    }

    @Test("a change to a large album goes up as a delta of the change, and another library reads only that delta")
    func aChangeGoesUpAsADelta() async throws {
        try await withHarness { harness in
            try Self.seed(harness, count: 400)
            let a = try await Self.open(harness, "a")
            let b = try await Self.open(harness, "b")
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            let assets = try a.fetchAssets(FetchOptions(sortBy: [.key()]))
            var big: CollectionPlaceholder!
            try await a.performChanges { requests in
                big = requests.createAlbum(title: "Big")
                requests.addAssets(Array(assets.prefix(399)), to: big)
            }
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            let document = try #require(
                try harness.server.objectData(
                    bucket: LibraryHarness.bucket, key: "collections/\(big.localIdentifier).json"))
            #expect(document.count > 40_000, "the whole album: \(document.count) bytes")

            // One insertion, one move: a delta naming two assets, no read or write of the document.
            let album = try #require(try a.collection(withLocalIdentifier: big.localIdentifier))
            let before = harness.log.count
            try await a.performChanges { requests in
                requests.insertAssets([assets[399]], into: album, at: 10)
                requests.moveAssets(in: album, at: IndexSet([300]), to: 0)
            }
            try await a.sync(fetchThumbnails: false)
            let written = harness.log.dropFirst(before).filter {
                $0.method == "PUT" && $0.key?.hasPrefix("collections/") == true
            }
            #expect(written.count == 1, "\(written)")
            let deltaKey = try #require(written.first?.key)
            #expect(deltaKey.hasPrefix("collections/\(big.localIdentifier)/") && written.first?.ifNoneMatch == "*")
            let delta = try #require(try harness.server.objectData(bucket: LibraryHarness.bucket, key: deltaKey))
            #expect(delta.count < 1_000, "\(delta.count) bytes")
            #expect(
                try harness.server.objectData(
                    bucket: LibraryHarness.bucket, key: "collections/\(big.localIdentifier).json")
                    == document)

            let readBefore = harness.log.count
            let summary = try await b.sync(fetchThumbnails: false)
            let reads = harness.log.dropFirst(readBefore).filter {
                $0.method == "GET" && $0.key?.hasPrefix("collections/") == true
            }
            #expect(summary.collectionsRead == 1 && reads.map(\.key) == [deltaKey], "\(reads)")
            #expect(try Self.albums(b) == Self.albums(a))
            #expect(try Self.albums(b)["Big"]?.count == 400)

            // A library that lists the bucket reads the document and the delta: the same album.
            let c = try await Self.open(harness, "c", journal: false)
            try await c.sync(fetchThumbnails: false)
            #expect(try Self.albums(c) == Self.albums(a))
        }
    }

    @Test("deltas are folded into the document and deleted (only those folded): every library keeps the same album")
    func deltasAreFolded() async throws {
        try await withHarness { harness in
            try Self.seed(harness, count: 12)
            let a = try await Self.open(harness, "a")
            let b = try await Self.open(harness, "b")
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            var made: CollectionPlaceholder!
            try await a.performChanges { requests in
                made = requests.createAlbum(title: "Moves")
                requests.addAssets(try! (0..<12).map { try Self.asset(a, $0) }, to: made)
            }
            try await a.sync(fetchThumbnails: false)
            let id = made.localIdentifier
            let prefix = "collections/\(id)/"
            // A stranger's object among the deltas: never merged, never deleted.
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: prefix + "1-0000000000000000.json", data: Data("{}".utf8))
            var random = SeededRandom(seed: 42)
            var bSaw = 0
            for round in 0..<(CollectionSharing.deltasBeforeFolding + 6) {
                let album = try #require(try a.collection(withLocalIdentifier: id))
                try await a.performChanges { requests in
                    requests.moveAssets(in: album, at: IndexSet([random.below(12)]), to: random.below(12))
                }
                try await a.sync(fetchThumbnails: false)
                // B follows now and then: some deltas it reads, some are folded before it does.
                if round % 9 == 4 {
                    try await b.sync(fetchThumbnails: false)
                    bSaw += 1
                    let (onA, onB) = (try Self.albums(a), try Self.albums(b))
                    #expect(onB == onA, "round \(round): \(onB) vs \(onA)")
                }
            }
            let left = harness.server.keysOrEmpty(prefix: prefix)
            #expect(left.contains(prefix + "1-0000000000000000.json"))
            // Folded (by count, or by bytes: half the document) and deleted, each delete naming the version read.
            #expect(left.count < CollectionSharing.deltasBeforeFolding, "\(left.count) left")
            let deletes = harness.log.filter { $0.method == "DELETE" && $0.key?.hasPrefix(prefix) == true }
            let puts = harness.log.filter { $0.method == "PUT" && $0.key?.hasPrefix(prefix) == true }
            #expect(deletes.count + left.count == puts.count + 1, "the stranger's object stays")
            #expect(deletes.allSatisfy { $0.ifMatch != nil && $0.status == 204 && !left.contains($0.key ?? "") })
            try await b.sync(fetchThumbnails: false)
            #expect(try Self.albums(b) == Self.albums(a) && bSaw > 0)
            let c = try await Self.open(harness, "c", journal: false)
            let listed = try await c.sync(fetchThumbnails: false)
            #expect(listed.skipped.map(\.key) == [prefix + "1-0000000000000000.json"])
            #expect(try Self.albums(c) == Self.albums(a))
        }
    }

    @Test("two libraries fold one album's deltas at once while a third writes one: one fold wins, nothing is lost")
    func concurrentFolds() async throws {
        try await withHarness { harness in
            try Self.seed(harness, count: 12)
            let libraries = [
                try await Self.open(harness, "a"), try await Self.open(harness, "b"), try await Self.open(harness, "c"),
            ]
            for library in libraries { try await library.sync(fetchThumbnails: false) }
            let (a, b, c) = (libraries[0], libraries[1], libraries[2])
            var made: CollectionPlaceholder!
            try await a.performChanges { requests in
                made = requests.createAlbum(title: "Raced")
                requests.addAssets(try! (0..<12).map { try Self.asset(a, $0) }, to: made)
            }
            try await a.sync(fetchThumbnails: false)
            let id = made.localIdentifier
            var random = SeededRandom(seed: 7)
            // Deltas from both folders-to-be, each reading the other's (below the folding threshold).
            for round in 0..<12 {
                let library = libraries[round % 2]
                try await library.sync(fetchThumbnails: false)
                let album = try #require(try library.collection(withLocalIdentifier: id))
                try await library.performChanges { requests in
                    requests.moveAssets(in: album, at: IndexSet([random.below(12)]), to: random.below(12))
                }
                try await library.sync(fetchThumbnails: false)
            }
            for library in libraries { try await library.sync(fetchThumbnails: false) }
            let prefix = "collections/\(id)/"
            #expect(harness.server.keysOrEmpty(prefix: prefix).count >= 10)
            // C changes the album while A and B fold.
            let album = try #require(try c.collection(withLocalIdentifier: id))
            let moved = try c.fetchAssets(in: album)[11].key
            try await c.performChanges { requests in requests.moveAssets(in: album, at: IndexSet([11]), to: 0) }
            func fold(_ library: AssetLibrary) async {
                guard let remote = library.uploadEngine.remote,
                    let device = try? library.catalog.deviceIdentifier()
                else { return }
                try? await library.uploadEngine.foldCollectionDeltas(id, device: device, remote: remote)
            }
            async let foldA: Void = fold(a)
            async let foldB: Void = fold(b)
            async let sendC = c.sync(fetchThumbnails: false)
            _ = try await (foldA, foldB, sendC)
            // Every delete named the version read; what is left is only what no fold holds.
            let deletes = harness.log.filter { $0.method == "DELETE" && $0.key?.hasPrefix(prefix) == true }
            #expect(!deletes.isEmpty && deletes.allSatisfy { $0.ifMatch != nil })
            for library in libraries + libraries { try await library.sync(fetchThumbnails: false) }
            let expected = try Self.albums(c)
            #expect(try Self.albums(a) == expected && Self.albums(b) == expected)
            #expect(expected["Raced"]?.first == moved && expected["Raced"]?.count == 12, "C's move, the latest")
            // A library that lists the bucket (document and whatever deltas are left) agrees.
            let d = try await Self.open(harness, "d", journal: false)
            try await d.sync(fetchThumbnails: false)
            #expect(try Self.albums(d) == expected)
        }
    }

    @Test("two libraries adding to one album at once keep both, in the same order everywhere; removals win by time")
    func concurrentChangesConverge() async throws {
        try await withHarness { harness in
            try Self.seed(harness, count: 5)
            let a = try await Self.open(harness, "a")
            let b = try await Self.open(harness, "b")
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            var shared: CollectionPlaceholder!
            try await a.performChanges { requests in
                shared = requests.createAlbum(title: "Shared")
                requests.addAssets([try! Self.asset(a, 0)], to: shared)
            }
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            // Both change it before seeing the other's change.
            try await a.performChanges { requests in
                requests.addAssets([try! Self.asset(a, 1), try! Self.asset(a, 2)], to: shared)
            }
            try await b.performChanges { requests in
                requests.insertAssets([try! Self.asset(b, 3)], into: shared, at: 0)
                requests.removeAssets([try! Self.asset(b, 0)], from: shared)
            }
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            let onA = try Self.albums(a)
            #expect(onA == (try Self.albums(b)))
            #expect(onA["Shared"] == ["originals/a3.jpg", "originals/a1.jpg", "originals/a2.jpg"])
        }
    }

    @Test("a stranger's garbage under collections/ is skipped, reported, and changes nothing")
    func strangersDocumentsAreRefused() async throws {
        try await withHarness { harness in
            try Self.seed(harness, count: 1)
            let id = UUID().uuidString.lowercased()
            let bucket = LibraryHarness.bucket
            try harness.server.putObject(bucket: bucket, key: "collections/\(id).json", data: Data("{not json".utf8))
            let other = UUID().uuidString.lowercased()
            let escaping = """
                {"format":1,"id":"\(other)","kind":"album","title":"Evil","titleStamp":{"time":1,"device":"x"},\
                "parentStamp":{"time":1,"device":"x"},"members":[{"key":"journal/../x","added":{"time":1,"device":"x"},\
                "position":1,"placed":{"time":1,"device":"x"}}]}
                """
            try harness.server.putObject(bucket: bucket, key: "collections/\(other).json", data: Data(escaping.utf8))
            try harness.server.putObject(bucket: bucket, key: "collections/not-an-id.json", data: Data("{}".utf8))
            let library = try await Self.open(harness, "a", journal: false)
            let summary = try await library.sync(fetchThumbnails: false)
            #expect(try library.fetchAllAlbums().isEmpty)
            let skipped = Set(summary.skipped.map(\.key))
            #expect(skipped == ["collections/\(id).json", "collections/\(other).json"])
        }
    }

    /// Libraries "a", "b" and "c" on a bucket of 8 assets, synced, with one album "a" made and every library has.
    static func threeLibraries(_ harness: LibraryHarness, album title: String) async throws
        -> ([AssetLibrary], CollectionPlaceholder)
    {
        try Self.seed(harness, count: 8)
        var libraries: [AssetLibrary] = []
        for name in ["a", "b", "c"] {
            let library = try await Self.open(harness, name)
            try await library.sync(fetchThumbnails: false)
            libraries.append(library)
        }
        var album: CollectionPlaceholder!
        try await libraries[0].performChanges { album = $0.createAlbum(title: title) }
        for library in libraries { try await library.sync(fetchThumbnails: false) }
        return (libraries, album)
    }

    @Test("three libraries changing albums at random, syncing at random, end with the same albums in the same order")
    func threeLibrariesConverge() async throws {
        try await withHarness { harness in
            let (libraries, album) = try await Self.threeLibraries(harness, album: "Random")
            var random = SplitMix64(seed: 7)
            for _ in 0..<40 {
                let library = libraries[Int(random.next() % 3)]
                guard let current = try library.collection(withLocalIdentifier: album.localIdentifier) else { continue }
                let members = try library.fetchAssets(in: current)
                let pick = try Self.asset(library, Int(random.next() % 8))
                switch random.next() % 5 {
                case 0, 1:
                    let index = Int(random.next() % UInt64(members.count + 1))
                    try await library.performChanges { $0.insertAssets([pick], into: current, at: index) }
                case 2: try await library.performChanges { $0.removeAssets([pick], from: current) }
                case 3 where members.count > 1:
                    let from = Int(random.next() % UInt64(members.count))
                    let to = Int(random.next() % UInt64(members.count))
                    try await library.performChanges { $0.moveAssets(in: current, at: IndexSet([from]), to: to) }
                default: try await library.sync(fetchThumbnails: false)
                }
            }
            for _ in 0..<2 { for library in libraries { try await library.sync(fetchThumbnails: false) } }
            let first = try Self.albums(libraries[0])
            #expect(first.count == 1)
            for library in libraries.dropFirst() { #expect(try Self.albums(library) == first) }
        }
    }

    @Test("after kill -9 while an album goes up, the reopened library announces it and another library shows it")
    func killWhileAnAlbumGoesUp() async throws {
        let executable = try CLIBinary.locate("ca-test-child")
        try await withHarness { harness in
            try Self.seed(harness, count: 1)
            let setup = try await Self.open(harness, "a")
            try await setup.sync(fetchThumbnails: false)
            let store = setup.configuration.storeURL
            setup.close()
            let other = try await Self.open(harness, "b")
            try await other.sync(fetchThumbnails: false)
            // The server stores the document and holds its answer: the child never learns it went up.
            harness.server.faults.add(
                .latency(milliseconds: 120_000), keyPattern: "collections/*.json", method: "PUT", times: 1)
            let child = try ChildProcess(
                executable: executable,
                arguments: [
                    "album-until-killed", store.path, harness.server.endpoint.absoluteString, "originals/a0.jpg",
                ],
                environment: LibraryCrashTests.childCredentials)
            let line = await child.firstLine(containing: "ALBUM-CHILD-COMMITTED")
            let id = try #require(line?.split(separator: " ").last.map(String.init))
            let key = "collections/\(id).json"
            #expect(
                await waitUntilTrue { (try? harness.server.objectData(bucket: LibraryHarness.bucket, key: key)) != nil }
            )
            child.kill()
            #expect(await child.exitStatus() == SIGKILL)

            let reopened = try await Self.open(harness, "a")
            let journalBefore = harness.journalKeys.count
            await reopened.waitForUploads()
            #expect(harness.journalKeys.count == journalBefore + 1, "the album is announced again")
            let summary = try await other.sync(fetchThumbnails: false)
            #expect(summary.mode == .incremental && summary.collectionsRead == 1)
            let album = try #require(try other.collection(withLocalIdentifier: id))
            #expect(try other.fetchAssets(in: album).map(\.key) == ["originals/a0.jpg"])
        }
    }

    /// Library "a" with 30 albums of the harness's assets, shared, then the bucket's checkpoint written with them.
    static func checkpointWithAlbums(_ harness: LibraryHarness) async throws -> [String] {
        try Self.seed(harness, count: 12)
        var configuration = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("a"))
        configuration.fullSyncInterval = 24 * 3600
        configuration.checkpointInterval = 0
        var a: AssetLibrary? = try await harness.open(configuration)
        try await a!.sync(fetchThumbnails: false)
        var made: [CollectionPlaceholder] = []
        let assets = try (0..<12).map { try Self.asset(a!, $0) }
        try await a!.performChanges { requests in
            let folder = requests.createFolder(title: "Years")
            for index in 0..<30 {
                let album = requests.createAlbum(title: "Album \(index)", in: index % 3 == 0 ? folder : nil)
                requests.addAssets([assets[index % 12], assets[(index * 5 + 1) % 12]], to: album)
                made.append(album)
            }
        }
        try await a!.sync(fetchThumbnails: false)
        // A change before the checkpoint: a delta the checkpoint carries (by name), not read again by a bootstrap.
        let third = try #require(try a!.collection(withLocalIdentifier: made[3].localIdentifier))
        try await a!.performChanges { $0.moveAssets(in: third, at: IndexSet([1]), to: 0) }
        try await a!.sync(fetchThumbnails: false)
        #expect(!harness.server.keysOrEmpty(prefix: "collections/\(made[3].localIdentifier)/").isEmpty)
        a!.close()
        a = nil
        configuration.checkpointInterval = 24 * 3600
        let writer = try await harness.open(configuration)
        #expect(try await writer.sync(fetchThumbnails: false).wroteCheckpoint)
        return made.map(\.localIdentifier)
    }

    @Test("a new library takes the albums from the checkpoint: only the delta of a change made since is read")
    func albumsComeWithTheCheckpoint() async throws {
        try await withHarness { harness in
            let albums = try await Self.checkpointWithAlbums(harness)
            let writer = try await Self.open(harness, "a")
            // After the checkpoint: one album changes (the journal announces a delta of it).
            let changed = try #require(try writer.collection(withLocalIdentifier: albums[7]))
            try await writer.performChanges { $0.renameCollection(changed, to: "Renamed") }
            try await writer.sync(fetchThumbnails: false)

            let before = harness.log.count
            var configuration = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("b"))
            configuration.fullSyncInterval = 24 * 3600
            configuration.checkpointInterval = 24 * 3600
            let reader = try await harness.open(configuration)
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.checkpointAssets == 12 && summary.skipped.isEmpty, "\(summary.skipped)")
            let documentReads = harness.log.dropFirst(before).filter {
                $0.method == "GET" && $0.key?.hasPrefix("collections/") == true
            }
            let reads = documentReads.compactMap(\.key)
            #expect(reads.count == 1, "\(documentReads)")
            #expect(reads.allSatisfy { $0.hasPrefix("collections/\(albums[7])/") }, "\(documentReads)")
            #expect(try Self.albums(reader) == Self.albums(writer))
            #expect(try reader.collection(withLocalIdentifier: albums[7])?.title == "Renamed")
            #expect(try reader.fetchFolders().map(\.title) == ["Years"])
        }
    }

    @Test("a checkpoint's collections that cannot be read are reported, and the documents are read instead")
    func aStrangersCollectionPartIsNotTrusted() async throws {
        try await withHarness { harness in
            let albums = try await Self.checkpointWithAlbums(harness)
            let writer = try await Self.open(harness, "a")
            let part = try #require(
                harness.server.keysOrEmpty(prefix: "checkpoints/").first { $0.contains("/collections-") })
            // Well-formed zlib of the right size, but a line whose document names no valid collection.
            let manifestKey = try #require(
                harness.server.keysOrEmpty(prefix: "checkpoints/").first { $0.hasSuffix("manifest.json") })
            let manifest = try JSONDecoder().decode(
                CheckpointManifest.self,
                from: try #require(try harness.server.objectData(bucket: LibraryHarness.bucket, key: manifestKey)))
            let size = try #require(manifest.collectionParts?.first?.bytes)
            let original = try #require(try harness.server.objectData(bucket: LibraryHarness.bucket, key: part))
            let text = String(decoding: try #require(Zlib.uncompress(original, size: size)), as: UTF8.self)
            let forged = text.replacingOccurrences(of: "\"kind\":\"album\"", with: "\"kind\":\"bomb!\"")
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: part, data: Zlib.compress(Data(forged.utf8)))
            var configuration = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("b"))
            configuration.fullSyncInterval = 24 * 3600
            configuration.checkpointInterval = 24 * 3600
            let reader = try await harness.open(configuration)
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.checkpointAssets == 12)
            #expect(summary.skipped.contains { $0.key == part && $0.reason.contains("documents are read instead") })
            #expect(summary.collectionsRead == albums.count + 2, "every album, the folder and the delta, one by one")
            #expect(try Self.albums(reader) == Self.albums(writer))
        }
    }

    @Test("three libraries, one of them killed with -9 at random moments, change one album at random and converge")
    func threeLibrariesConvergeThroughKills() async throws {
        let executable = try CLIBinary.locate("ca-test-child")
        try await withHarness { harness in
            let (three, album) = try await Self.threeLibraries(harness, album: "Through kills")
            var libraries = three
            let store = libraries[2].configuration.storeURL
            var random = SplitMix64(seed: 11)
            var kills = 0
            for round in 0..<4 {
                // "c" runs in a child that is killed after a random number of its operations, while "a" and "b"
                // change the album and sync in this process.
                libraries[2].close()
                let child = try ChildProcess(
                    executable: executable,
                    arguments: [
                        "album-ops-until-killed", store.path, harness.server.endpoint.absoluteString,
                        "\(album.localIdentifier):\(round + 1)",
                    ],
                    environment: LibraryCrashTests.childCredentials)
                for _ in 0..<6 {
                    let library = libraries[Int(random.next() % 2)]
                    guard let current = try library.collection(withLocalIdentifier: album.localIdentifier) else {
                        continue
                    }
                    let members = try library.fetchAssets(in: current)
                    let pick = try Self.asset(library, Int(random.next() % 8))
                    switch random.next() % 4 {
                    case 0, 1:
                        let index = Int(random.next() % UInt64(members.count + 1))
                        try await library.performChanges { $0.insertAssets([pick], into: current, at: index) }
                    case 2: try await library.performChanges { $0.removeAssets([pick], from: current) }
                    default: try await library.sync(fetchThumbnails: false)
                    }
                }
                let operations = 1 + Int(random.next() % 12)
                let line = await child.firstLine(containing: "ALBUM-OP \(operations) done")
                #expect(line != nil, "the child ran \(operations) operations before the kill (round \(round))")
                child.kill()
                #expect(await child.exitStatus() == SIGKILL)
                kills += 1
                libraries[2] = try await Self.open(harness, "c")
                try await libraries[2].sync(fetchThumbnails: false)
            }
            for _ in 0..<2 { for library in libraries { try await library.sync(fetchThumbnails: false) } }
            let first = try Self.albums(libraries[0])
            #expect(first.count == 1 && kills == 4)
            for library in libraries.dropFirst() { #expect(try Self.albums(library) == first) }
        }
    }
}
