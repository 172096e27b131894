import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

extension LibraryHarness {
    /// A library in its own folder with the journal's defaults (a full listing on the first sync, then a day
    /// apart), uploading only when told to.
    func journalLibrary(_ name: String) async throws -> AssetLibrary {
        var configuration = quietConfiguration(storeURL: folder.appendingPathComponent(name))
        configuration.fullSyncInterval = 24 * 3600
        configuration.checkpointInterval = 24 * 3600
        return try await open(configuration)
    }

    /// Imports a JPEG under `name` into `library` and waits until it is in the bucket (and its journal entry).
    @discardableResult
    func importPhoto(_ name: String, into library: AssetLibrary, seed: Int = 1) async throws -> Asset {
        let jpeg = jpegWithEXIF(
            width: 800 + seed, height: 600, orientation: 1, date: "2024:07:14 09:30:05", offset: "+00:00",
            padding: 64 + seed)
        let ids = try await library.performChanges { $0.createAsset(fromFileAt: try! sourceFile(name, jpeg)) }
        try await library.sync(mode: .incremental, fetchThumbnails: false)
        return try #require(try library.asset(withLocalIdentifier: ids[0]))
    }

    /// Library "a" after it listed a bucket of one original (`one.jpg`) and wrote the bucket's checkpoint.
    func checkpointedLibrary() async throws -> AssetLibrary {
        try put("one.jpg", data: testBytes(count: 50, seed: 1))
        let library = try await journalLibrary("a")
        #expect(try await library.sync(fetchThumbnails: false).wroteCheckpoint)
        return library
    }

    /// Journal entries in the bucket.
    var journalKeys: [String] { (try? server.keys(bucket: Self.bucket, prefix: "journal/")) ?? [] }

    /// Writes a journal entry as another library would.
    func writeJournalEntry(time: Int64, device: String = "other", sequence: Int64 = 1, _ body: String) throws {
        let key = JournalKey.make(prefix: "journal/", time: time, device: device, sequence: sequence)
        try server.putObject(bucket: Self.bucket, key: key, data: Data(body.utf8))
    }

    /// The catalog as comparable facts: key → (ETag, favourite, trashed).
    static func catalog(_ library: AssetLibrary) throws -> [String: String] {
        var facts: [String: String] = [:]
        var options = FetchOptions(includeHiddenAssets: true)
        options.includeTrashedAssets = true
        for asset in try library.fetchAssets(options) {
            facts[asset.key] = "\(asset.etag) fav=\(asset.isFavorite) trash=\(asset.isTrashed) \(asset.pixelWidth)"
        }
        return facts
    }
}

extension FakeS3Server {
    /// The keys under `prefix` in the harness's bucket (none when it cannot list).
    func keysOrEmpty(prefix: String) -> [String] { (try? keys(bucket: LibraryHarness.bucket, prefix: prefix)) ?? [] }
}

@Suite("Library: incremental sync from the bucket journal", .heavy)
struct JournalSyncTests {
    @Test("an import reaches another library through the journal: no listing of originals, no HEAD")
    func importReachesAnotherLibraryThroughTheJournal() async throws {
        try await withHarness { harness in
            let writer = try await harness.journalLibrary("a")
            let reader = try await harness.journalLibrary("b")
            let first = try await reader.sync(fetchThumbnails: false)
            #expect(first.mode == .full)

            let asset = try await harness.importPhoto("IMG_1.JPG", into: writer)
            #expect(harness.journalKeys.count == 1)
            let before = harness.log.count
            let summary = try await reader.sync(fetchThumbnails: false)
            let requests = harness.log.dropFirst(before)
            #expect(summary.mode == .incremental)
            #expect(summary.inserted == 1 && summary.headRequests == 0 && summary.journalEntriesRead == 1)
            #expect(!requests.contains { $0.method == "HEAD" })
            #expect(!requests.contains { $0.query.contains("prefix=originals") })
            let seen = try #require(try reader.asset(forKey: asset.key))
            #expect((seen.pixelWidth, seen.pixelHeight) == (asset.pixelWidth, asset.pixelHeight))
            #expect(seen.creationDate == asset.creationDate && seen.contentSHA256 == asset.contentSHA256)
            #expect(seen.etag == asset.etag && seen.availability == .cloudOnly)
            // The bytes are the import's.
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            #expect(try await reader.data(for: seen, options: options) == (try await writer.data(for: asset)))
        }
    }

    @Test("a sync with nothing new makes one request and no write")
    func syncWithNothingNewMakesOneRequest() async throws {
        try await withHarness { harness in
            let writer = try await harness.journalLibrary("a")
            try await harness.importPhoto("IMG_1.JPG", into: writer)
            let reader = try await harness.journalLibrary("b")
            try await reader.sync(fetchThumbnails: false)
            try await reader.sync(fetchThumbnails: false)
            let token = reader.currentChangeToken
            let before = harness.log.count
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.mode == .incremental && summary.journalEntriesRead == 0 && summary.transactions == 0)
            #expect(harness.log.count - before == 1, "\(harness.log.dropFirst(before).map(\.query))")
            #expect(reader.currentChangeToken == token)
        }
    }

    @Test("favourites, trash and deletions from two libraries converge on a third, as a full listing sees them")
    func changesFromTwoLibrariesConverge() async throws {
        try await withHarness { harness in
            let a = try await harness.journalLibrary("a")
            let b = try await harness.journalLibrary("b")
            let reader = try await harness.journalLibrary("reader")
            try await reader.sync(fetchThumbnails: false)
            let one = try await harness.importPhoto("ONE.JPG", into: a, seed: 1)
            let two = try await harness.importPhoto("TWO.JPG", into: b, seed: 2)
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            // Both libraries edit the same asset (a property each), then b trashes the other and purges it.
            let oneInB = try #require(try b.asset(forKey: one.key))
            try await a.performChanges { $0.setFavorite(true, for: [one]) }
            try await b.performChanges { $0.setHidden(true, for: [oneInB]) }
            try await b.performChanges { $0.deleteAssets([try! #require(try b.asset(forKey: two.key))]) }
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            #expect(try await b.emptyTrash() == 1)

            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.mode == .incremental && summary.headRequests == 0)
            let fresh = try await harness.journalLibrary("fresh")
            try await fresh.sync(mode: .full, fetchThumbnails: false)
            #expect(try LibraryHarness.catalog(reader) == (try LibraryHarness.catalog(fresh)))
            let seen = try #require(try reader.asset(forKey: one.key))
            #expect(seen.isFavorite && seen.isHidden)
            #expect(try reader.asset(forKey: two.key) == nil)
        }
    }

    @Test("an object written by another tool is not in the journal: only a full sync finds it")
    func objectWithoutEntryIsFoundByAFullSync() async throws {
        try await withHarness { harness in
            let reader = try await harness.journalLibrary("b")
            try await reader.sync(fetchThumbnails: false)
            try harness.put("outside.jpg", data: testBytes(count: 100, seed: 3))
            #expect(try await reader.sync(fetchThumbnails: false).inserted == 0)
            let full = try await reader.sync(mode: .full, fetchThumbnails: false)
            #expect(full.mode == .full && full.inserted == 1)
        }
    }

    @Test("an entry for an object that is gone: a read that finds it missing removes the asset, so does a full sync")
    func entryForAGoneObject() async throws {
        try await withHarness { harness in
            let reader = try await harness.journalLibrary("b")
            try await reader.sync(fetchThumbnails: false)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try harness.writeJournalEntry(
                time: now,
                #"{"format":1,"device":"other","changes":[{"op":"put","key":"originals/ghost.jpg","size":10,"etag":"abc"},{"op":"put","key":"originals/ghost2.jpg","size":10,"etag":"def"}]}"#
            )
            #expect(try await reader.sync(fetchThumbnails: false).inserted == 2)
            let ghost = try #require(try reader.asset(forKey: "originals/ghost.jpg"))
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            await expectError(.assetDeleted) { _ = try await reader.data(for: ghost, options: options) }
            #expect(try reader.asset(forKey: "originals/ghost.jpg") == nil)
            let full = try await reader.sync(mode: .full, fetchThumbnails: false)
            #expect(full.removed == 1)
            #expect(try reader.asset(forKey: "originals/ghost2.jpg") == nil)
        }
    }

    @Test("an entry that is not one is skipped and reported; the sync goes on with the rest")
    func garbageEntryIsSkipped() async throws {
        try await withHarness { harness in
            let reader = try await harness.journalLibrary("b")
            try await reader.sync(fetchThumbnails: false)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try harness.writeJournalEntry(time: now, sequence: 1, "this is not JSON")
            try harness.writeJournalEntry(
                time: now, sequence: 2,
                #"{"format":1,"device":"other","changes":[{"op":"put","key":"originals/ok.jpg","size":5,"etag":"e1"}]}"#
            )
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.skipped.map(\.key).count == 1 && summary.skipped[0].reason == "not a journal entry")
            #expect(summary.inserted == 1)
        }
    }

    @Test("an entry written late with an earlier time is applied, and an entry listed again is applied once")
    func lateEntryWithinTheLookBackIsAppliedOnce() async throws {
        try await withHarness { harness in
            let reader = try await harness.journalLibrary("b")
            try await reader.sync(fetchThumbnails: false)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try harness.writeJournalEntry(
                time: now + 60_000, sequence: 1,
                #"{"format":1,"device":"x","changes":[{"op":"put","key":"originals/new.jpg","size":5,"etag":"n1"}]}"#)
            #expect(try await reader.sync(fetchThumbnails: false).inserted == 1)
            // Written now, but stamped a minute before the entry already applied (a slower writer).
            try harness.writeJournalEntry(
                time: now, device: "y", sequence: 1,
                #"{"format":1,"device":"y","changes":[{"op":"put","key":"originals/late.jpg","size":5,"etag":"l1"}]}"#)
            let late = try await reader.sync(fetchThumbnails: false)
            #expect(late.inserted == 1 && late.journalEntriesRead == 1)
            // Delete late.jpg here and sync again: the late entry is not applied a second time.
            let again = try await reader.sync(fetchThumbnails: false)
            #expect(again.journalEntriesRead == 0 && again.transactions == 0)
        }
    }

    @Test("a failed journal listing changes nothing; the next sync applies what it missed")
    func failedListingChangesNothing() async throws {
        try await withHarness { harness in
            let writer = try await harness.journalLibrary("a")
            let reader = try await harness.journalLibrary("b")
            try await reader.sync(fetchThumbnails: false)
            let asset = try await harness.importPhoto("IMG_1.JPG", into: writer)
            let token = reader.currentChangeToken
            let fault = harness.server.faults.add(.internalError, keyPattern: "", method: "GET")
            await #expect(throws: CloudAssetsError.self) { try await reader.sync(fetchThumbnails: false) }
            #expect(reader.currentChangeToken == token)
            harness.server.faults.remove(fault)
            #expect(try await reader.sync(fetchThumbnails: false).inserted == 1)
            #expect(try reader.asset(forKey: asset.key) != nil)
        }
    }

    @Test("changes stay in the outbox while the journal cannot be written, and go up with the next sync")
    func outboxSurvivesAFailedJournalWrite() async throws {
        try await withHarness { harness in
            let writer = try await harness.journalLibrary("a")
            let reader = try await harness.journalLibrary("b")
            try await reader.sync(fetchThumbnails: false)
            let fault = harness.server.faults.add(.internalError, keyPattern: "journal/*", method: "PUT")
            let asset = try await harness.importPhoto("IMG_1.JPG", into: writer)
            #expect(asset.uploadState == .uploaded)
            #expect(harness.journalKeys.isEmpty)
            #expect(try writer.catalog.store.journalOutbox(limit: 10).count == 1)
            harness.server.faults.remove(fault)
            try await writer.sync(fetchThumbnails: false)
            #expect(harness.journalKeys.count == 1)
            #expect(try writer.catalog.store.journalOutbox(limit: 10).isEmpty)
            #expect(try await reader.sync(fetchThumbnails: false).inserted == 1)
        }
    }

    @Test("after a full sync an older entry for a newer listed version does not take the asset back")
    func olderEntryDoesNotRevertAListedVersion() async throws {
        try await withHarness { harness in
            let reader = try await harness.journalLibrary("b")
            let old = Int64(Date().timeIntervalSince1970 * 1000) - 120_000
            try harness.writeJournalEntry(
                time: old,
                #"{"format":1,"device":"x","changes":[{"op":"put","key":"originals/a.jpg","size":5,"etag":"old"}]}"#)
            let etag = try harness.put("a.jpg", data: testBytes(count: 77, seed: 9))
            try await reader.sync(fetchThumbnails: false)  // full: the listing shows the current version
            var configuration = reader.configuration
            configuration.journalLookBack = 3600  // the old entry is listed again
            reader.close()
            let reopened = try await harness.open(configuration)
            let summary = try await reopened.sync(fetchThumbnails: false)
            #expect(summary.mode == .incremental && summary.journalEntriesRead == 1)
            let asset = try #require(try reopened.asset(forKey: "originals/a.jpg"))
            #expect(asset.etag == etag.trimmingCharacters(in: ["\""]))
        }
    }

    @Test("a new library bootstraps from the newest checkpoint and the journal after it, without a listing")
    func newLibraryBootstrapsFromACheckpoint() async throws {
        try await withHarness { harness in
            for index in 0..<3 {
                try harness.put("outside\(index).jpg", data: testBytes(count: 50, seed: UInt64(index)))
            }
            let writer = try await harness.journalLibrary("a")
            let first = try await writer.sync(fetchThumbnails: false)
            #expect(first.mode == .full && first.wroteCheckpoint)
            let manifests = harness.server.keysOrEmpty(prefix: "checkpoints/").filter { $0.hasSuffix("manifest.json") }
            #expect(manifests.count == 1)
            // After the checkpoint: an import and a favourite, in the journal only.
            try await harness.importPhoto("IMG_1.JPG", into: writer)
            let outside = try #require(try writer.asset(forKey: "originals/outside1.jpg"))
            try await writer.performChanges { $0.setFavorite(true, for: [outside]) }
            #expect(try await writer.sync(fetchThumbnails: false).wroteCheckpoint == false)

            let before = harness.log.count
            let reader = try await harness.journalLibrary("b")
            let summary = try await reader.sync(fetchThumbnails: false)
            let requests = harness.log.dropFirst(before)
            #expect(summary.mode == .incremental && summary.checkpointAssets == 3 && summary.headRequests == 0)
            #expect(!requests.contains { $0.query.contains("prefix=originals") })
            // The journal's tail, read while the checkpoint went in, is not read again to be applied.
            let entryReads = requests.filter { $0.method == "GET" && $0.key?.hasPrefix("journal/") == true }
            #expect(!entryReads.isEmpty && Set(entryReads.compactMap(\.key)).count == entryReads.count)
            #expect(try LibraryHarness.catalog(reader) == (try LibraryHarness.catalog(writer)))
            #expect(try reader.asset(forKey: "originals/outside1.jpg")?.isFavorite == true)
            // The bootstrap counts as the writer's full listing: the next automatic sync is incremental.
            #expect(try await reader.sync(fetchThumbnails: false).mode == .incremental)
            // Neither library writes the slot again.
            #expect(try await reader.sync(fetchThumbnails: false).wroteCheckpoint == false)
            #expect(
                harness.server.keysOrEmpty(prefix: "checkpoints/").filter { $0.hasSuffix("manifest.json") } == manifests
            )
        }
    }

    @Test("entries read ahead are applied as read, over several pages; one read from elsewhere is not used")
    func journalReadAheadIsAppliedAsRead() async throws {
        try await withHarness { harness in
            let reader = try await harness.journalLibrary("b")
            #expect(try await reader.sync(fetchThumbnails: false).mode == .full)
            // Five entries another library wrote, listed two keys a page.
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            var etags: [String] = []
            for index in 0..<5 {
                let etag = try harness.put("tail\(index).jpg", data: testBytes(count: 40, seed: UInt64(index)))
                try harness.writeJournalEntry(
                    time: now + Int64(index), sequence: Int64(index),
                    #"{"format":1,"device":"other","changes":[{"op":"put","key":"originals/tail\#(index).jpg","size":40,"etag":\#(etag)}]}"#
                )
                etags.append(etag)
            }
            let journal = JournalSync(sync: reader.syncEngine, remote: try reader.syncEngine.remote.checked())
            let cursor = Int64(try reader.catalog.store.setting(SyncEngine.JournalSetting.cursor) ?? "") ?? 0
            let ahead = try await journal.readAhead(from: cursor, pageLimit: 2, maxKeys: 2)
            #expect(ahead.pages.count == 2 && ahead.bodies.count == 4)
            // The bodies read ahead are what is applied: an entry gone since then still counts.
            for key in harness.journalKeys.prefix(4) {
                try harness.server.deleteObject(bucket: LibraryHarness.bucket, key: key)
            }
            let before = harness.log.count
            var summary = SyncSummary()
            try await journal.run(summary: &summary, readAhead: ahead)
            let entryReads = harness.log.dropFirst(before).filter {
                $0.method == "GET" && $0.key?.hasPrefix("journal/") == true
            }
            #expect(summary.inserted == 5 && summary.journalEntriesRead == 5 && entryReads.count == 1)
            #expect(try reader.asset(forKey: "originals/tail0.jpg") != nil)

            // A read-ahead listed from another position stands for nothing: the sync reads the journal itself.
            let other = try await harness.journalLibrary("c")
            #expect(try await other.sync(mode: .full, fetchThumbnails: false).inserted == 5)
            let stale = try await journal.readAhead(from: 0, pageLimit: 1, maxKeys: 2)
            try harness.server.deleteObject(bucket: LibraryHarness.bucket, key: "originals/tail4.jpg")
            try harness.writeJournalEntry(
                time: now + 10, sequence: 10,
                #"{"format":1,"device":"other","changes":[{"op":"delete","key":"originals/tail4.jpg","etag":\#(etags[4])}]}"#
            )
            var next = SyncSummary()
            let otherJournal = JournalSync(sync: other.syncEngine, remote: try other.syncEngine.remote.checked())
            try await otherJournal.run(summary: &next, readAhead: stale)
            #expect(next.removed == 1)
            #expect(try other.asset(forKey: "originals/tail4.jpg") == nil)
        }
    }

    @Test("a journal that cannot be read ahead during a bootstrap is read after it: the tail is applied all the same")
    func failedReadAheadFallsBackToTheJournalSync() async throws {
        try await withHarness { harness in
            let writer = try await harness.checkpointedLibrary()
            try await harness.importPhoto("IMG_1.JPG", into: writer)
            #expect(harness.journalKeys.count == 1)
            // The read-ahead's GET of the entry fails through every retry; the journal sync's own succeeds.
            let fault = harness.server.faults.add(.internalError, keyPattern: "journal/*", method: "GET", times: 5)
            let reader = try await harness.journalLibrary("b")
            let before = harness.log.count
            let summary = try await reader.sync(fetchThumbnails: false)
            harness.server.faults.remove(fault)
            #expect(summary.checkpointAssets == 1 && summary.journalEntriesRead == 1 && summary.inserted == 2)
            #expect(try LibraryHarness.catalog(reader) == (try LibraryHarness.catalog(writer)))
            let entryReads = harness.log.dropFirst(before).filter {
                $0.method == "GET" && $0.key?.hasPrefix("journal/") == true
            }
            #expect(entryReads.count == 6)
        }
    }

    @Test("a slot without a manifest (being written, or a lost race) is passed over for the one before")
    func slotWithoutManifestIsPassedOver() async throws {
        try await withHarness { harness in
            _ = try await harness.checkpointedLibrary()
            // A later slot with a part and no manifest.
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: "checkpoints/9999999999999/other/part-00000.z",
                data: Data("garbage".utf8))
            let reader = try await harness.journalLibrary("b")
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.checkpointAssets == 1 && summary.mode == .incremental)
            #expect(try reader.asset(forKey: "originals/one.jpg") != nil)
        }
    }

    @Test("checkpoint rows round-trip every field a catalog row takes from the bucket")
    func checkpointRowsRoundTrip() throws {
        var record = RemoteMetadata.record(
            for: .init(key: "originals/a.heic", size: 123, etag: "e", lastModified: Date(timeIntervalSince1970: 1000)),
            metadata: [
                "creation-date": "2024-05-01T12:00:00Z", "pixel-width": "4032", "pixel-height": "3024",
                "media-type": "image", "orientation": "6", "sha256": String(repeating: "ab", count: 32),
                "location": "-33.8568,151.2153,12.5",
            ], contentType: "image/heic",
            thumbnail: .init(key: "thumbnails/a.heic.jpg", size: 9, etag: "t", lastModified: Date()))
        #expect(record.location == AssetLocation(latitude: -33.8568, longitude: 151.2153, altitude: 12.5))
        record.sidecarETag = "s"
        record.metadataFill = .imageHeaders
        var shared = SharedMetadata()
        shared.isFavorite = true
        shared.title = "Sea"
        shared.stamps[.favorite] = SharedMetadata.Stamp(time: 1_763_900_000_000, device: "d")
        shared.stamps[.title] = SharedMetadata.Stamp(time: 1_763_900_000_001, device: "d")
        shared.apply(to: &record)
        let restored = CheckpointAsset(record).record
        #expect(restored == record)
        let line = CheckpointAsset(record).line
        let inflated = try #require(Zlib.uncompress(Zlib.compress(line), size: line.count))
        #expect(CheckpointAsset(line: inflated[...])?.record == record)
        // Text with tabs, newlines and backslashes survives; a line of another shape is refused.
        record.key = "originals/a\tb\nc\\d.jpg"
        record.title = "tab\there"
        #expect(CheckpointAsset(line: CheckpointAsset(record).line[...])?.record == record)
        #expect(CheckpointAsset(line: Data("originals/x\t1".utf8)[...]) == nil)
        // A field ending inside an escape (a lone trailing backslash) is refused, not read as an empty key
        // (found by `make fuzz`: Fuzz/regressions/checkpoint-part/lone-backslash-field).
        let dangling = CheckpointAsset(record).line.split(separator: 0x09, omittingEmptySubsequences: false)
        let refused = ([Data("originals/a.jpg\\".utf8)] + dangling.dropFirst()).joined(separator: [0x09])
        #expect(CheckpointAsset(line: Data(refused)[...]) == nil)
        // A line written before location and pending headers existed (17 fields) is still read, with neither.
        var old = CheckpointAsset(record).line
        for _ in 0..<3 { old = old[..<old.lastIndex(of: 0x09)!] }
        let oldRecord = try #require(CheckpointAsset(line: old[...])?.record)
        #expect(oldRecord.location == nil && oldRecord.metadataFill == .complete && oldRecord.key == record.key)
        // A video's container facts round-trip; a line without them (19 fields) leaves them to the next sync.
        var video = record
        video.mediaType = .video
        video.metadataFill = .complete
        (video.duration, video.videoCodec, video.frameRate) = (12.345, "hvc1", 29.97)
        #expect(CheckpointAsset(line: CheckpointAsset(video).line[...])?.record == video)
        let withoutFacts = CheckpointAsset(video).line
        let nineteen = try #require(CheckpointAsset(line: withoutFacts[..<withoutFacts.lastIndex(of: 0x09)!])?.record)
        #expect(nineteen.duration == 0 && nineteen.metadataFill == .imageHeaders)
        // Facts that are not numbers, or not finite, refuse the line.
        for bad in ["x;avc1;25", "inf;avc1;25", "1;avc1", "-1;avc1;25"] {
            let line = withoutFacts[..<withoutFacts.lastIndex(of: 0x09)!] + Data(("\t" + bad).utf8)
            #expect(CheckpointAsset(line: line[...]) == nil, "\(bad)")
        }
    }

    @Test("a location is read from x-amz-meta-location only when it is a place on Earth")
    func locationMetadataIsValidated() {
        #expect(AssetLocation(serialized: "48.8584,2.2945") == AssetLocation(latitude: 48.8584, longitude: 2.2945))
        for bad in ["", "48.8", "91,0", "0,181", "nan,0", "1,2,x", "1,2,3,4", "a,b"] {
            #expect(AssetLocation(serialized: bad) == nil, "\(bad)")
        }
        let location = AssetLocation(latitude: -1.5, longitude: 2.25, altitude: -3)
        #expect(AssetLocation(serialized: location.serialized) == location)
    }

    @Test("shared properties and trash travel in the checkpoint itself, not only in the journal after it")
    func sharedPropertiesTravelInTheCheckpoint() async throws {
        try await withHarness { harness in
            for index in 0..<3 { try harness.put("p\(index).jpg", data: testBytes(count: 40, seed: UInt64(index))) }
            var configuration = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("a"))
            configuration.fullSyncInterval = 24 * 3600
            configuration.checkpointInterval = 0.001  // a new slot on every sync
            let writer = try await harness.open(configuration)
            try await writer.sync(fetchThumbnails: false)
            let favourite = try #require(try writer.asset(forKey: "originals/p0.jpg"))
            let trashed = try #require(try writer.asset(forKey: "originals/p2.jpg"))
            try await writer.performChanges {
                $0.setFavorite(true, for: [favourite])
                $0.setTitle("Sea", for: favourite)
                $0.deleteAssets([trashed])
            }
            #expect(try await writer.sync(fetchThumbnails: false).wroteCheckpoint)
            // The journal is gone (as after a retention): only the checkpoint can carry the edits.
            for key in harness.journalKeys { try harness.server.deleteObject(bucket: LibraryHarness.bucket, key: key) }
            let reader = try await harness.journalLibrary("b")
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.checkpointAssets == 3)
            #expect(try LibraryHarness.catalog(reader) == (try LibraryHarness.catalog(writer)))
            let seen = try #require(try reader.asset(forKey: "originals/p0.jpg"))
            #expect(seen.isFavorite && seen.title == "Sea")
            #expect(try reader.asset(forKey: "originals/p2.jpg")?.isTrashed == true)
        }
    }
}
