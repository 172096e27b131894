import CloudAssets
import Foundation
import S3Transfer
import TestSupport
import Testing

/// The library against Ceph's RADOS Gateway, a real distributed S3 (Debian 12's Ceph Pacific 16.2): one mon, one
/// OSD on memstore and radosgw, booted once for the whole test process by `scripts/ceph-rgw.sh` (see
/// ``RGWFixture``). Buckets are filled with boto3, as in ``MotoInteropTests``; each test uses its own bucket.
///
/// When the cluster cannot start (Ceph not installed and not root, or the boot fails) every test is cancelled
/// (reported as skipped) with the reason; `CLOUDASSETS_REQUIRE_RGW=1` makes that a failure instead.
/// `CLOUDASSETS_RGW_ENDPOINT` (with `CLOUDASSETS_RGW_ACCESS_KEY_ID` / `CLOUDASSETS_RGW_SECRET_ACCESS_KEY`, else
/// `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`) runs the suite against a gateway that is already running.
@Suite(.heavy, .serialized) struct RGWInteropTests {
    @Test("sync lists every original with its metadata; single-part and multipart originals download intact")
    func syncMetadataAndDownloads() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            let photo = testBytes(count: 300_000, seed: 1)
            let clip = testBytes(count: 12 << 20, seed: 2)
            try bucket.fill(
                """
                put("originals/2024/05/IMG 0001+ä.jpg", "photo", {"creation-date": "2024-05-01T12:00:00Z",
                    "pixel-width": "4032", "pixel-height": "3024", "media-type": "image", "orientation": "6"})
                put("thumbnails/2024/05/IMG 0001+ä.jpg.jpg", b"thumbnail")
                multipart("originals/2024/06/clip.mov", "clip", {"creation-date": "2024-06-02T08:30:00Z",
                    "pixel-width": "1920", "pixel-height": "1080", "media-type": "video", "orientation": "1"})
                put("originals/2023/old.heic", b"0123456789", {"creation-date": "2023-01-01T00:00:00Z"})
                """, files: ["photo": photo, "clip": clip])
            let library = try await bucket.open()
            let summary = try await library.sync()
            #expect(summary.inserted == 3)
            #expect(summary.thumbnailsFetched == 1)
            #expect(summary.removed == 0)

            let sorted = try library.fetchAssets(FetchOptions(sortBy: [.creationDate(ascending: false)]))
            #expect(
                sorted.map(\.key) == [
                    "originals/2024/06/clip.mov", "originals/2024/05/IMG 0001+ä.jpg", "originals/2023/old.heic",
                ])
            let movie = try library.asset(path: "2024/06/clip.mov")
            #expect(movie.mediaType == .video)
            #expect(movie.pixelWidth == 1920 && movie.pixelHeight == 1080 && movie.orientation == 1)
            #expect(movie.creationDate == ISO8601DateFormatter().date(from: "2024-06-02T08:30:00Z"))
            #expect(movie.size == Int64(clip.count))
            #expect(movie.etag.hasSuffix("-3"), "12 MiB in 5 MiB parts: a multipart ETag, got \(movie.etag)")
            #expect(movie.availability == .cloudOnly)
            let image = try library.asset(path: "2024/05/IMG 0001+ä.jpg")
            #expect(image.mediaType == .image && image.orientation == 6)
            #expect(image.storedPixelWidth == 4032 && image.storedPixelHeight == 3024)
            #expect(image.pixelWidth == 3024 && image.pixelHeight == 4032)
            #expect(image.creationDate == ISO8601DateFormatter().date(from: "2024-05-01T12:00:00Z"))
            #expect(image.availability == .thumbnail)
            let old = try library.asset(path: "2023/old.heic")
            #expect(old.creationDate == ISO8601DateFormatter().date(from: "2023-01-01T00:00:00Z"))
            #expect(try library.fetchAssets(FetchOptions(predicate: .mediaType(.video))).map(\.id) == [movie.id])

            #expect(try await library.data(for: image, options: AssetLibrary.networkOptions()) == photo)
            #expect(try library.current(image).availability == .full)
            #expect(try await library.data(for: movie, options: AssetLibrary.networkOptions()) == clip)
            #expect(try library.current(movie).availability == .full)
            #expect(try await library.data(for: old, options: AssetLibrary.networkOptions()) == Data("0123456789".utf8))

            // A second sync of the unchanged bucket writes nothing.
            let token = library.currentChangeToken
            let again = try await library.sync()
            #expect(again.transactions == 0 && again.inserted == 0 && library.currentChangeToken == token)
        }
    }

    @Test("first sync: an object boto3 replaces between the listing and its head read keeps the listing's facts")
    func firstSyncObjectReplacedBeforeItsRead() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            let listed = testBytes(count: 40_000, seed: 11)
            let replacement = testBytes(count: 50_000, seed: 12)
            try bucket.fill(
                """
                put("originals/a.dat", "listed", {"creation-date": "2024-01-01T00:00:00Z"})
                put("originals/b.dat", b"b" * 3000, {"creation-date": "2024-02-01T00:00:00Z"})
                """, files: ["listed": listed])
            let library = try await bucket.open()
            let replaced = Shared(false)
            // Another tool writes a.dat again once the catalog holds the listing, before the heads are read.
            let first = try await library.sync(mode: .full, fetchThumbnails: false) { progress in
                guard case .catalogReady = progress, !replaced.withLock({ $0 }) else { return }
                replaced.withLock { $0 = true }
                try? bucket.fill(
                    """
                    put("originals/a.dat", "replacement", {"creation-date": "2025-03-01T00:00:00Z"})
                    """, files: ["replacement": replacement])
            }
            #expect(replaced.withLock { $0 })
            #expect(first.inserted == 2 && first.metadataFilled == 1 && first.metadataPending == 1)
            let a = try library.asset(path: "a.dat")
            #expect(a.etag == md5Hex(listed))
            #expect(a.size == Int64(listed.count) && !a.provisionalFields.isEmpty)
            let b = try library.asset(path: "b.dat")
            #expect(b.provisionalFields.isEmpty)
            #expect(b.creationDate == ISO8601DateFormatter().date(from: "2024-02-01T00:00:00Z"))

            // The next listing sees the new version: a content change, its head read at once.
            let second = try await library.sync(mode: .full, fetchThumbnails: false)
            #expect(second.contentChanged == 1 && second.metadataPending == 0)
            let now = try library.asset(path: "a.dat")
            #expect(now.size == Int64(replacement.count) && now.provisionalFields.isEmpty)
            #expect(now.creationDate == ISO8601DateFormatter().date(from: "2025-03-01T00:00:00Z"))
        }
    }

    @Test("writeData copies an original out without keeping it, never over a file, never a version it did not list")
    func writeDataAgainstTheGateway() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            let clip = testBytes(count: 12 << 20, seed: 13)
            try bucket.fill(
                """
                multipart("originals/clip.mov", "clip", {"creation-date": "2024-06-02T08:30:00Z",
                    "media-type": "video"})
                put("originals/b.dat", b"b" * 3000, {"creation-date": "2024-02-01T00:00:00Z"})
                """, files: ["clip": clip])
            let library = try await bucket.open()
            try await library.sync(mode: .full, fetchThumbnails: false)
            let out = bucket.folder.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)

            let movie = try library.asset(path: "clip.mov")
            let target = out.appendingPathComponent("clip.mov")
            try await library.writeData(for: movie, toFile: target, options: AssetLibrary.networkOptions())
            #expect(try Data(contentsOf: target) == clip)
            #expect(try library.current(movie).availability == .cloudOnly)
            #expect(try library.cacheUsage().bytes == 0)
            // Something at the path is never replaced.
            let other = try library.asset(path: "b.dat")
            await #expect(throws: CloudAssetsError.self) {
                try await library.writeData(for: other, toFile: target, options: AssetLibrary.networkOptions())
            }
            #expect(try Data(contentsOf: target) == clip)

            // boto3 replaces b.dat after the listing: the copy is refused and leaves nothing behind.
            try bucket.fill(#"put("originals/b.dat", b"c" * 4000)"#)
            let stale = out.appendingPathComponent("b.dat")
            await #expect(throws: CloudAssetsError.self) {
                try await library.writeData(for: other, toFile: stale, options: AssetLibrary.networkOptions())
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["clip.mov"])
        }
    }

    @Test("albums through the gateway: an album reaches another library; concurrent adds converge; garbage skipped")
    func albumsThroughTheGateway() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            try bucket.fill(
                """
                for i in range(4):
                    put("originals/a%d.jpg" % i, b"photo %d" % i, {"creation-date": "2024-01-0%dT00:00:00Z" % (i + 1)})
                """)
            let a = try await bucket.open(name: "a", journal: true)
            let b = try await bucket.open(name: "b", journal: true)
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            var album: CollectionPlaceholder!
            let onA = try (0..<4).map { try a.asset(path: "a\($0).jpg") }
            try await a.performChanges { requests in
                album = requests.createAlbum(title: "Shared")
                requests.addAssets([onA[2], onA[0]], to: album)
            }
            try await a.sync(fetchThumbnails: false)
            let read = try await b.sync(fetchThumbnails: false)
            #expect(read.collectionsRead == 1)
            func keys(_ library: AssetLibrary) throws -> [String] {
                let collection = try #require(try library.collection(withLocalIdentifier: album.localIdentifier))
                return try library.fetchAssets(in: collection).map(\.key)
            }
            #expect(try keys(b) == ["originals/a2.jpg", "originals/a0.jpg"])

            // Both add at once; a stranger writes garbage beside the album.
            let onB = try (0..<4).map { try b.asset(path: "a\($0).jpg") }
            try await a.performChanges { $0.addAssets([onA[1]], to: album) }
            try await b.performChanges { $0.insertAssets([onB[3]], into: album, at: 0) }
            let stranger = UUID().uuidString.lowercased()
            try bucket.fill(#"put("collections/\#(stranger).json", b"{\"format\":1,\"id\":\"x\"}")"#)
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            try await a.sync(fetchThumbnails: false)
            #expect(try keys(a) == keys(b))
            #expect(try keys(a) == ["originals/a3.jpg", "originals/a2.jpg", "originals/a0.jpg", "originals/a1.jpg"])
            let fresh = try await bucket.open(name: "c")
            let listed = try await fresh.sync(fetchThumbnails: false)
            #expect(try keys(fresh) == keys(a))
            #expect(listed.skipped.map(\.key) == ["collections/\(stranger).json"])
            // A library bootstrapping from a's latest checkpoint takes the album from it: no document read.
            let booted = try await bucket.open(name: "d", journal: true)
            let boot = try await booted.sync(fetchThumbnails: false)
            #expect(boot.checkpointAssets == 4 && boot.collectionsRead == 0, "\(boot)")
            #expect(try keys(booted) == keys(a))
        }
    }

    @Test("albums on the gateway: three libraries change them at random, syncing at once, beside a stranger")
    func albumPropertyThroughTheGateway() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            try bucket.fill(
                """
                for i in range(8):
                    put("originals/a%d.jpg" % i, b"photo %d" % i, {"creation-date": "2024-01-0%dT00:00:00Z" % (i + 1)})
                """)
            try await AlbumPropertyTests.randomChanges(on: bucket, steps: 40, seed: 11)
        }
    }

    @Test("folders of keys another tool writes and deletes through the gateway show as albums in folders")
    func keyFoldersThroughTheGateway() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            try bucket.fill(
                """
                for key in ["Trips/Rome/r2.jpg", "Trips/Rome/r1.jpg", "Trips/t0.jpg", "loose.jpg"]:
                    put("originals/" + key, key.encode(), {"creation-date": "2024-01-01T00:00:00Z"})
                """)
            let library = try await bucket.open(keyFolders: true)
            try await library.sync(fetchThumbnails: false)
            func tree() throws -> [String] {
                let trips = try #require(try library.fetchFolders().first { $0.title == "Trips" })
                return try library.fetchAlbums(in: trips).map { album in
                    "\(album.title): " + (try library.fetchAssets(in: album).map(\.key)).joined(separator: " ")
                }
            }
            #expect(
                try tree() == [
                    "Rome: originals/Trips/Rome/r1.jpg originals/Trips/Rome/r2.jpg", "Trips: originals/Trips/t0.jpg",
                ])
            try bucket.fill(
                """
                s3.delete_object(Bucket=bucket, Key="originals/Trips/Rome/r1.jpg")
                put("originals/Trips/Venice/v1.jpg", b"v1", {"creation-date": "2024-01-02T00:00:00Z"})
                """)
            try await library.sync(fetchThumbnails: false)
            #expect(
                try tree() == [
                    "Rome: originals/Trips/Rome/r2.jpg", "Trips: originals/Trips/t0.jpg",
                    "Venice: originals/Trips/Venice/v1.jpg",
                ])
        }
    }

    @Test("ranged reads across part boundaries, offline refusal, eviction and a second download")
    func rangedReadsOfflineAndEviction() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            let clip = testBytes(count: 12 << 20, seed: 3)
            try bucket.fill(
                """
                multipart("originals/clip.mov", "clip", {"creation-date": "2024-05-01T12:00:00Z",
                    "media-type": "video"})
                """, files: ["clip": clip])
            let library = try await bucket.open()
            try await library.sync()
            let asset = try library.asset(path: "clip.mov")
            #expect(asset.availability == .cloudOnly)

            // Across the boundary of the first two 5 MiB parts, then the end of the object.
            let boundary = Int64(5 << 20)
            let middle = (boundary - 1000)..<(boundary + 1000)
            #expect(
                try await library.read(asset, range: middle) == clip[Int(middle.lowerBound)..<Int(middle.upperBound)])
            let tail = Int64(clip.count - 4096)..<Int64(clip.count + 100)
            #expect(try await library.read(asset, range: tail) == clip.suffix(4096))
            let partial = try library.current(asset)
            #expect(partial.availability == .partial)
            #expect(partial.partialRanges == [middle, Int64(clip.count - 4096)..<Int64(clip.count)])
            // Bytes already here are served without the network; others are refused.
            #expect(try await library.read(asset, range: middle, isNetworkAccessAllowed: false).count == 2000)
            await expectError(.networkNotAllowed) {
                try await library.read(asset, range: 0..<10, isNetworkAccessAllowed: false)
            }

            // A request without network access answers at once, "in cloud"; so does every request offline.
            let withoutNetwork = await allAnswers(of: library, for: asset, options: AssetRequestOptions())
            #expect(withoutNetwork.count == 1)
            #expect(withoutNetwork.first?.data == nil && withoutNetwork.first?.info.isInCloud == true)
            library.networkPolicy = .offline
            let offline = await allAnswers(of: library, for: asset, options: AssetLibrary.networkOptions())
            #expect(offline.count == 1)
            #expect(offline.first?.data == nil && offline.first?.info.isInCloud == true)
            await expectError(.networkNotAllowed) { try await library.sync() }
            #expect(try library.current(asset).availability == .partial)
            library.networkPolicy = .allowed

            let online = await allAnswers(of: library, for: asset, options: AssetLibrary.networkOptions())
            #expect(online.last?.data == clip)
            #expect(online.last?.info.isInCloud == false && online.last?.info.error == nil)
            #expect(try library.current(asset).availability == .full)
            #expect(try library.cacheUsage().bytes == Int64(clip.count))

            try library.evict([asset])
            let evicted = try library.current(asset)
            #expect(evicted.availability == .cloudOnly)
            #expect(evicted.partialRanges.isEmpty)
            #expect(try library.cacheUsage().bytes == 0)
            let afterEviction = await allAnswers(of: library, for: asset, options: AssetRequestOptions())
            #expect(afterEviction.first?.info.isInCloud == true)
            #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == clip)
            #expect(try library.current(asset).availability == .full)
        }
    }

    @Test("an object deleted on the server is removed from the library, its file and every fetch result")
    func remoteDeletion() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            try bucket.fill(
                """
                put("originals/a.jpg", b"a" * 5000, {"creation-date": "2024-01-01T00:00:00Z"})
                put("originals/b.jpg", b"b" * 6000, {"creation-date": "2024-01-02T00:00:00Z"})
                """)
            let library = try await bucket.open()
            try await library.sync()
            let a = try library.asset(path: "a.jpg")
            let file = try await library.requestFile(for: a, options: AssetLibrary.networkOptions())
            #expect(FileManager.default.fileExists(atPath: file.path))
            let all = try library.fetchAssets(FetchOptions(sortBy: [.key()]))
            #expect(all.map(\.key) == ["originals/a.jpg", "originals/b.jpg"])
            var reader = ChangeReader(observing: library)

            try bucket.fill(#"s3.delete_object(Bucket=bucket, Key="originals/a.jpg")"#)
            let summary = try await library.sync()
            #expect(summary.removed == 1 && summary.inserted == 0)
            #expect(try library.asset(withLocalIdentifier: a.localIdentifier) == nil)
            #expect(!FileManager.default.fileExists(atPath: file.path))
            let change = try await reader.next { $0.details(for: all) != nil }
            let details = try #require(change.details(for: all))
            #expect(details.removedIndexes == IndexSet(integer: 0))
            #expect(details.fetchResultAfterChanges.map(\.key) == ["originals/b.jpg"])
        }
    }

    @Test("two libraries converge through every write: add, favourite, hide, trash, restore, edit, revert, purge")
    func twoLibrariesConvergeThroughWrites() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            let a = try await bucket.open(name: "a", journal: true)
            let b = try await bucket.open(name: "b", journal: true)
            try await b.sync(fetchThumbnails: false)
            let source = bucket.folder.appendingPathComponent("photo.jpg")
            try solidJPEG(width: 64, height: 48, (200, 100, 50)).write(to: source)
            let other = bucket.folder.appendingPathComponent("other.jpg")
            try solidJPEG(width: 32, height: 32, (10, 20, 30)).write(to: other)
            let ids = try await a.performChanges {
                $0.createAsset(fromFileAt: source)
                $0.createAsset(fromFileAt: other)
            }
            await a.waitForUploads()
            let photo = try #require(try a.asset(withLocalIdentifier: ids[0]))
            let second = try #require(try a.asset(withLocalIdentifier: ids[1]))
            #expect(photo.uploadState == .uploaded && second.uploadState == .uploaded)

            /// Lets `from` send what it holds and `to` read it, then compares what both say of every asset.
            func converge(_ from: AssetLibrary, _ to: AssetLibrary) async throws {
                await from.waitForUploads()
                #expect(try from.uploads.unsharedEdits == 0, "every shared property reached the gateway")
                try await to.sync(fetchThumbnails: false)
                #expect(try sharedFacts(of: from) == (try sharedFacts(of: to)))
            }
            try await converge(a, b)
            // Each conditional sidecar write after the first uses If-Match; RGW 16 compares it bare.
            try await a.performChanges { $0.setFavorite(true, for: [photo]) }
            try await converge(a, b)
            let inB = try #require(try b.asset(forKey: photo.key))
            try await b.performChanges { $0.setHidden(true, for: [inB]) }
            try await converge(b, a)
            try await a.performChanges { $0.deleteAssets([try a.current(photo)]) }
            try await converge(a, b)
            #expect(try #require(try b.asset(forKey: photo.key)).isTrashed)
            try await b.performChanges { $0.restoreAssets([try b.current(inB)]) }
            try await converge(b, a)
            #expect(try !a.current(photo).isTrashed)

            _ = try await a.applyBasicEdit(to: try a.current(photo)) { try $0.setRotation(degrees: 90) }
            try await converge(a, b)
            #expect(try b.current(inB).hasAdjustments)
            try await b.performChanges { $0.revertAssetContentToOriginal(try! b.current(inB)) }
            try await converge(b, a)
            #expect(try !a.current(photo).hasAdjustments)

            // A purge by a library whose trash another library emptied of nothing: one asset goes everywhere.
            try await a.performChanges { $0.deleteAssets([try a.current(second)]) }
            try await converge(a, b)
            #expect(try await b.emptyTrash() == 1)
            try await converge(b, a)
            #expect(try a.asset(forKey: second.key) == nil)

            // A third library starts from the checkpoint one of them wrote, then follows the journal.
            try await a.sync(fetchThumbnails: false)
            let c = try await bucket.open(name: "c", journal: true)
            let summary = try await c.sync(fetchThumbnails: false)
            #expect(summary.checkpointAssets == 1)
            #expect(try sharedFacts(of: c) == (try sharedFacts(of: a)))
        }
    }

    @Test("emptying the trash leaves an object another tool wrote over the trashed version")
    func purgeLeavesAReplacedObject() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            let a = try await bucket.open(name: "a", journal: true)
            let source = bucket.folder.appendingPathComponent("photo.jpg")
            try solidJPEG(width: 64, height: 48, (200, 100, 50)).write(to: source)
            let ids = try await a.performChanges { $0.createAsset(fromFileAt: source) }
            await a.waitForUploads()
            let photo = try #require(try a.asset(withLocalIdentifier: ids[0]))
            try await a.performChanges { $0.deleteAssets([photo]) }
            await a.waitForUploads()
            let replacement = testBytes(count: 7000, seed: 9)
            try bucket.fill(#"put("\#(photo.key)", "replacement")"#, files: ["replacement": replacement])
            #expect(try await a.emptyTrash() == 0)
            let kept = try a.current(photo)
            #expect(!kept.isTrashed && kept.size == 7000)
            #expect(try await a.data(for: kept, options: AssetLibrary.networkOptions()) == replacement)
        }
    }

    @Test("wrong credentials and a missing bucket are typed errors")
    func wrongCredentials() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            let wrongSecret = try await bucket.open(
                credentials: .static(accessKeyID: rgw.accessKeyID, secretAccessKey: "not-the-secret"), name: "secret")
            await expectError(.accessDenied) { try await wrongSecret.sync() }
            let unknownKey = try await bucket.open(
                credentials: .static(accessKeyID: "NOSUCHKEY0000000000", secretAccessKey: "x"), name: "key")
            await expectError(.accessDenied) { try await unknownKey.sync() }
            let noBucket = try await bucket.open(bucket: bucket.name + "-missing", name: "bucket")
            await expectError(.noSuchBucket) { try await noBucket.sync() }
        }
    }

    @Test("over HTTPS with the gateway's CA: sync, a download and an upload; without that CA, one typed refusal")
    func overTLS() async throws {
        let rgw = try await RGWFixture.gateway()
        guard rgw.tls != nil else {
            try Test.cancel("the gateway has no HTTPS endpoint (set CLOUDASSETS_RGW_TLS_ENDPOINT and _CA_BUNDLE)")
        }
        try await RGWBucket.with(rgw) { bucket in
            let photo = testBytes(count: 300_000, seed: 21)
            try bucket.fill(
                """
                put("originals/tls/a.jpg", "photo", {"creation-date": "2024-05-01T12:00:00Z", "media-type": "image"})
                """, files: ["photo": photo])
            let library = try await bucket.open(overTLS: true)
            #expect(library.configuration.endpoint?.scheme == "https")
            #expect(try await library.sync(fetchThumbnails: false).inserted == 1)
            let asset = try library.asset(path: "tls/a.jpg")
            #expect(try await library.data(for: asset, options: AssetLibrary.networkOptions()) == photo)
            let source = bucket.folder.appendingPathComponent("upload.jpg")
            try solidJPEG(width: 32, height: 32, (10, 20, 30)).write(to: source)
            let ids = try await library.performChanges { $0.createAsset(fromFileAt: source) }
            let status = await library.waitForUploads()
            #expect(status.failures.isEmpty, "\(status.failures)")
            #expect(try library.asset(withLocalIdentifier: ids[0])?.uploadState == .uploaded)

            let untrusted = try await bucket.open(name: "untrusted", overTLS: true, trustsGatewayCA: false)
            let error = await expectError(.tlsNotTrusted) { try await untrusted.sync() }
            #expect(error?.description.contains("caBundlePath") == true)
        }
    }
}

/// A running RADOS Gateway: its endpoint and the keys of an S3 user.
struct RGWGateway: Sendable {
    var endpoint: URL
    var accessKeyID: String
    var secretAccessKey: String
    /// Whether it was booted for this process (and is thrown away at exit), rather than named by the environment.
    var isThrowaway: Bool
    /// Its HTTPS endpoint and the CA bundle that trusts it, when it has one.
    var tls: (endpoint: URL, caBundlePath: String)?
}

/// Why the gateway is unavailable (printed as the skip reason, or the failure with `CLOUDASSETS_REQUIRE_RGW=1`).
struct RGWUnavailable: Error, CustomStringConvertible {
    var description: String
}

/// The gateway shared by every test of the process: `CLOUDASSETS_RGW_ENDPOINT`, or a cluster booted by
/// `scripts/ceph-rgw.sh start` on first use and stopped when the process exits (an `atexit` handler; the script's
/// watchdog stops it too should the process die without running it).
enum RGWFixture {
    /// `CLOUDASSETS_REQUIRE_RGW=1`: an unavailable gateway fails the tests instead of skipping them.
    static let isRequired = ProcessInfo.processInfo.environment["CLOUDASSETS_REQUIRE_RGW"] == "1"

    /// Started on first access; never blocks a cooperative thread (the script runs as a child process).
    private static let boot = Task { await startOrFind() }

    /// The script's `stop` command for the `atexit` handler, once a cluster was booted.
    private static let stopCommand = Shared<String?>(nil)

    /// The gateway, or the test is cancelled (skipped) with the reason it is unavailable; with
    /// `CLOUDASSETS_REQUIRE_RGW=1` the reason is thrown instead.
    static func gateway() async throws -> RGWGateway {
        switch await boot.value {
        case .success(let gateway): return gateway
        case .failure(let reason):
            if isRequired { throw reason }
            try Test.cancel("Ceph RGW unavailable (CLOUDASSETS_REQUIRE_RGW=1 makes this a failure): \(reason)")
        }
    }

    private static func startOrFind() async -> Result<RGWGateway, RGWUnavailable> {
        let environment = ProcessInfo.processInfo.environment
        if let endpoint = environment["CLOUDASSETS_RGW_ENDPOINT"] {
            guard let url = URL(string: endpoint),
                let key = environment["CLOUDASSETS_RGW_ACCESS_KEY_ID"] ?? environment["AWS_ACCESS_KEY_ID"],
                let secret = environment["CLOUDASSETS_RGW_SECRET_ACCESS_KEY"] ?? environment["AWS_SECRET_ACCESS_KEY"]
            else {
                return .failure(RGWUnavailable(description: "CLOUDASSETS_RGW_ENDPOINT is set but not its keys"))
            }
            return .success(
                RGWGateway(
                    endpoint: url, accessKeyID: key, secretAccessKey: secret, isThrowaway: false,
                    tls: tlsSettings(
                        environment["CLOUDASSETS_RGW_TLS_ENDPOINT"], environment["CLOUDASSETS_RGW_CA_BUNDLE"])))
        }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let script = repository.appendingPathComponent("scripts/ceph-rgw.sh").path
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cloudassets-rgw-\(getpid())-\(UUID().uuidString.prefix(8))")
        let log = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cloudassets-rgw-\(getpid())-\(UUID().uuidString.prefix(8)).log")
        defer { try? FileManager.default.removeItem(at: log) }
        do {
            var childEnvironment = environment
            childEnvironment["CEPH_RGW_DIR"] = folder.path
            childEnvironment["CEPH_RGW_PARENT_PID"] = String(getpid())
            // Standard output is not read: the keys are read from the folder's `env` file.
            let status = try await exitStatus(
                of: ["/bin/bash", script, "start"], environment: childEnvironment, standardError: log.path)
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            guard status == 0 else {
                // The script's own lines (what failed), not the end of the daemon log it quotes.
                let all = output.split(separator: "\n")
                let own = all.filter { $0.hasPrefix("ceph-rgw:") }
                let lines = (own.isEmpty ? all : own).suffix(6).joined(separator: "\n")
                return .failure(RGWUnavailable(description: "scripts/ceph-rgw.sh start exited \(status):\n\(lines)"))
            }
            stopCommand.withLock { $0 = "CEPH_RGW_DIR='\(folder.path)' /bin/bash '\(script)' stop" }
            atexit { RGWFixture.stopAtExit() }
            // The script's last line on standard error: "Ceph 16.2.x RGW ready at … in N s, daemons' RSS N MiB".
            if let ready = output.split(separator: "\n").last { print(ready) }
            let values = try parseEnvironmentFile(folder.appendingPathComponent("env"))
            guard let endpoint = values["AWS_ENDPOINT_URL"].flatMap(URL.init(string:)),
                let key = values["AWS_ACCESS_KEY_ID"], let secret = values["AWS_SECRET_ACCESS_KEY"]
            else { return .failure(RGWUnavailable(description: "the script's env file lacks the endpoint or keys")) }
            return .success(
                RGWGateway(
                    endpoint: endpoint, accessKeyID: key, secretAccessKey: secret, isThrowaway: true,
                    tls: tlsSettings(values["CEPH_RGW_TLS_ENDPOINT"], values["CEPH_RGW_CA_BUNDLE"])))
        } catch {
            return .failure(RGWUnavailable(description: "cannot run scripts/ceph-rgw.sh: \(error)"))
        }
    }

    /// Runs a program to its end (`posix_spawn`, then `waitpid` on a thread of its own, so no cooperative thread
    /// waits) and returns its exit status. Foundation's `Process` is not used: in the test process its termination
    /// handler was never called and the child stayed a zombie.
    private static func exitStatus(of arguments: [String], environment: [String: String], standardError: String)
        async throws -> Int32
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        guard spawned == 0 else { throw RGWUnavailable(description: "posix_spawn \(arguments[0]): errno \(spawned)") }
        let child = pid
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var status: Int32 = 0
                while waitpid(child, &status, 0) == -1 && errno == EINTR {}
                // WIFEXITED / WEXITSTATUS (Glibc's macros are not imported): killed by a signal counts as failed.
                continuation.resume(returning: status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + status & 0x7f)
            }
        }
    }

    /// The HTTPS endpoint and CA bundle, when both are given.
    private static func tlsSettings(_ endpoint: String?, _ bundle: String?) -> (endpoint: URL, caBundlePath: String)? {
        guard let endpoint = endpoint.flatMap(URL.init(string:)), let bundle, !bundle.isEmpty else { return nil }
        return (endpoint, bundle)
    }

    /// `export NAME=value` lines.
    private static func parseEnvironmentFile(_ url: URL) throws -> [String: String] {
        var values: [String: String] = [:]
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            let assignment = line.hasPrefix("export ") ? line.dropFirst("export ".count) : line[...]
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        return values
    }

    /// Stops the booted cluster (run by `atexit`, once every test is done).
    private static func stopAtExit() {
        guard let command = stopCommand.withLock({ $0 }) else { return }
        _ = system(command)
    }
}

/// A fresh bucket on the gateway, filled by boto3, and the libraries opened on it (closed by ``with(_:_:)``).
final class RGWBucket: Sendable {
    let gateway: RGWGateway
    let name: String
    let folder: URL
    private let opened = Shared<[AssetLibrary]>([])

    private init(gateway: RGWGateway) {
        self.gateway = gateway
        name = "cloudassets-\(UUID().uuidString.prefix(13).lowercased())"
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("RGWInteropTests-\(UUID().uuidString)")
    }

    /// Creates a bucket, runs `body`, then closes its libraries and removes the local folder (and, on a gateway
    /// that outlives the process, the bucket), whether `body` throws or not.
    static func with(_ gateway: RGWGateway, _ body: (RGWBucket) async throws -> Void) async throws {
        let bucket = RGWBucket(gateway: gateway)
        try FileManager.default.createDirectory(at: bucket.folder, withIntermediateDirectories: true)
        defer {
            for library in bucket.opened.withLock({ $0 }) { library.close() }
            if !gateway.isThrowaway {
                try? bucket.fill(
                    """
                    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
                        for item in page.get("Contents", []):
                            s3.delete_object(Bucket=bucket, Key=item["Key"])
                    s3.delete_bucket(Bucket=bucket)
                    """)
            }
            try? FileManager.default.removeItem(at: bucket.folder)
        }
        try bucket.fill("s3.create_bucket(Bucket=bucket)")
        try await body(bucket)
    }

    /// Opens a library on this bucket (or another one), with the gateway's keys unless told otherwise.
    /// `journal`: the library follows the journal as libraries that share a bucket do (a full listing first,
    /// then the journal; a checkpoint at every sync), instead of listing the bucket on every sync.
    /// `overTLS`: through the gateway's HTTPS endpoint, trusting its CA unless `trustsGatewayCA` is false.
    func open(
        credentials: Credentials? = nil, bucket: String? = nil, name: String = "library", journal: Bool = false,
        overTLS: Bool = false, trustsGatewayCA: Bool = true, keyFolders: Bool = false
    ) async throws -> AssetLibrary {
        var configuration = AssetLibrary.Configuration(storeURL: folder.appendingPathComponent(name))
        configuration.endpoint = gateway.endpoint
        if overTLS, let tls = gateway.tls {
            configuration.endpoint = tls.endpoint
            configuration.caBundlePath = trustsGatewayCA ? tls.caBundlePath : nil
        }
        configuration.bucket = bucket ?? self.name
        configuration.credentials =
            credentials
            ?? .static(accessKeyID: gateway.accessKeyID, secretAccessKey: gateway.secretAccessKey)
        configuration.progressInterval = 0
        // boto3 writes the bucket behind the journal's back: every sync lists it.
        configuration.fullSyncInterval = journal ? 24 * 3600 : 0
        configuration.checkpointInterval = journal ? 0.001 : 0
        configuration.keyFoldersAsAlbums = keyFolders
        let library = try await AssetLibrary(configuration: configuration)
        opened.withLock { $0.append(library) }
        return library
    }

    /// Runs Python statements with `s3` (a boto3 client for the gateway), `bucket` (this bucket's name),
    /// `put(key, body, metadata)` and `multipart(key, body, metadata)` (5 MiB parts) defined; a `str` body names
    /// one of `files`, written to the folder first.
    func fill(_ statements: String, files: [String: Data] = [:]) throws {
        for (name, data) in files { try data.write(to: folder.appendingPathComponent(name)) }
        // Plain uploads (no CRC trailers): Ceph Pacific predates S3's flexible checksums.
        let script = """
            import boto3, os, sys
            from botocore.config import Config
            s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                              aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3],
                              config=Config(request_checksum_calculation="when_required",
                                            response_checksum_validation="when_required"))
            bucket, folder = sys.argv[4], sys.argv[5]
            def body(value):
                return open(os.path.join(folder, value), "rb").read() if isinstance(value, str) else value
            def put(key, value, metadata={}):
                s3.put_object(Bucket=bucket, Key=key, Body=body(value), Metadata=metadata)
            def multipart(key, value, metadata={}):
                data, part = body(value), 5 << 20
                upload = s3.create_multipart_upload(Bucket=bucket, Key=key, Metadata=metadata)["UploadId"]
                parts = []
                for number, start in enumerate(range(0, len(data), part), 1):
                    etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=number,
                                          Body=data[start:start + part])["ETag"]
                    parts.append({"ETag": etag, "PartNumber": number})
                s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload,
                                             MultipartUpload={"Parts": parts})

            """ + statements
        try runPython(
            script,
            arguments: [
                gateway.endpoint.absoluteString, gateway.accessKeyID, gateway.secretAccessKey, name, folder.path,
            ])
    }
}

extension RGWBucket: AlbumBucket {
    func open(_ name: String, journal: Bool) async throws -> AssetLibrary {
        try await open(name: name, journal: journal)
    }

    func putStranger(_ key: String, _ text: String) throws {
        let (key, body) = (Data(key.utf8).base64EncodedString(), Data(text.utf8).base64EncodedString())
        try fill(#"import base64; put(base64.b64decode("\#(key)").decode(), base64.b64decode("\#(body)"))"#)
    }

    /// The gateway injects no faults.
    func failCollectionReads() -> (@Sendable () -> Void)? { nil }
}
