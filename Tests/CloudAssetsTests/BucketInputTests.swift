import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

extension LibraryHarness {
    /// A library that listed a bucket of `x.jpg` and `y.jpg` (another tool's objects): the victim of crafted input.
    func victimLibrary(_ name: String = "b") async throws -> AssetLibrary {
        try put("x.jpg", data: testBytes(count: 60, seed: 21))
        try put("y.jpg", data: testBytes(count: 70, seed: 22))
        let library = try await journalLibrary(name)
        try await library.sync(fetchThumbnails: false)
        return library
    }

    /// Writes a checkpoint as another library would (or a hostile writer): one part of `lines`, and a manifest that
    /// says what `manifest` returns (by default: the truth).
    func writeCheckpoint(
        slot: Int64, lines: [String], manifest: ((String, Data) -> String)? = nil
    ) throws {
        let body = Data((lines.joined(separator: "\n") + "\n").utf8)
        let part = CheckpointKey.part(prefix: "checkpoints/", slot: slot, device: "other", index: 0)
        try server.putObject(bucket: Self.bucket, key: part, data: Zlib.compress(body))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let truth = """
            {"format":1,"device":"other","time":\(now),"lastFullSync":\(now),"assets":\(lines.count),\
            "parts":[{"key":"\(part)","assets":\(lines.count),"bytes":\(body.count)}]}
            """
        try server.putObject(
            bucket: Self.bucket, key: CheckpointKey.manifest(prefix: "checkpoints/", slot: slot),
            data: Data((manifest?(part, body) ?? truth).utf8))
    }

    /// The checkpoint slot library "a" wrote (the bucket's only one).
    var writtenSlot: Int64 {
        get throws {
            let manifest = try #require(
                server.keysOrEmpty(prefix: "checkpoints/").first { $0.hasSuffix("manifest.json") })
            return try #require(JournalKey.time(of: manifest, prefix: "checkpoints/"))
        }
    }

    var bucketKeys: Set<String> { Set(server.keysOrEmpty(prefix: "")) }
}

/// A checkpoint line (19 fields) for an asset of `key` and `size`.
private func checkpointLine(_ key: String, size: String) -> String {
    [key, size, "etag-\(key.count)", "", "image/jpeg", "1700000000000", "1700000000000", "image", "10", "10", "1"]
        .joined(separator: "\t") + String(repeating: "\t", count: 8)
}

@Suite("Library: what a library trusts in the bucket", .heavy, .timeLimit(.minutes(2)))
struct BucketInputTests {
    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    @Test("put entries whose keys leave the originals are skipped and reported; the valid one applies")
    func putKeysOutsideTheOriginalsAreSkipped() async throws {
        try await withHarness { harness in
            let reader = try await harness.journalLibrary("b")
            try await reader.sync(fetchThumbnails: false)
            let bad = [
                "checkpoints/horizon.json", "/etc/passwd", "originals/../../x", "originals//x.jpg", "originals/",
            ]
            let changes = (bad + ["originals/ok.jpg"]).map {
                #"{"op":"put","key":"\#($0)","size":5,"etag":"e1"}"#
            }
            try harness.writeJournalEntry(
                time: Self.now, #"{"format":1,"device":"other","changes":["# + changes.joined(separator: ",") + "]}")
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.inserted == 1)
            #expect(summary.skipped.count == bad.count, "\(summary.skipped)")
            #expect(summary.skipped.allSatisfy { $0.key.hasPrefix("journal/") && $0.reason.hasPrefix("change ") })
            let keys = try reader.fetchAssets(FetchOptions(includeHiddenAssets: true)).map(\.key)
            #expect(keys == ["originals/ok.jpg"])
        }
    }

    @Test("an original's key: under the originals prefix, no empty, . or .. segment, no leading /, at most 1 KiB")
    func originalKeyRules() {
        let layout = BucketLayout()
        for key in ["originals/a.jpg", "originals/2024/05/IMG 1.JPG", "originals/.hidden", "originals/a..b/c"] {
            #expect(BucketInput.originalKeyProblem(key, layout: layout) == nil, "\(key)")
        }
        let refused = [
            "", "/etc/passwd", "originals/../../x", "originals/./a", "originals//a", "originals/", "originals/a/",
            "originals/..", "checkpoints/horizon.json", "originals/a\nb",
            "originals/" + String(repeating: "a", count: 1015),
        ]
        for key in refused { #expect(BucketInput.originalKeyProblem(key, layout: layout) != nil, "\(key)") }
        #expect(
            BucketInput.originalKeyProblem("originals/" + String(repeating: "a", count: 1014), layout: layout) == nil)
        // With no originals prefix, the layout's other folders are still not originals.
        let flat = BucketLayout(originalsPrefix: "")
        #expect(BucketInput.originalKeyProblem("photo.jpg", layout: flat) == nil)
        #expect(BucketInput.originalKeyProblem("journal/1-a-1.json", layout: flat) != nil)
    }

    @Test("a change this version cannot read is skipped alone: the other changes of its entry apply")
    func unreadableChangeIsSkippedAlone() async throws {
        try await withHarness { harness in
            let reader = try await harness.journalLibrary("b")
            try await reader.sync(fetchThumbnails: false)
            try harness.writeJournalEntry(
                time: Self.now,
                #"{"format":1,"device":"other","changes":[{"op":"explode","key":"originals/x.jpg"},{"op":"put","key":"originals/y.jpg","size":"big","etag":"e"},{"op":"put","key":"originals/ok.jpg","size":5,"etag":"e1"}]}"#
            )
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.inserted == 1)
            #expect(
                summary.skipped.map(\.reason) == (0..<2).map { "change \($0): not a change this version understands" })
            #expect(try reader.asset(forKey: "originals/ok.jpg") != nil)
        }
    }

    @Test("a put entry with a negative size is skipped and reported; every later sync passes")
    func negativeSizeInAnEntryIsSkipped() async throws {
        try await withHarness { harness in
            let reader = try await harness.journalLibrary("b")
            try await reader.sync(fetchThumbnails: false)
            try harness.writeJournalEntry(
                time: Self.now,
                #"{"format":1,"device":"other","changes":[{"op":"put","key":"originals/neg.jpg","size":-5,"etag":"e1"},{"op":"put","key":"originals/ok.jpg","size":5,"etag":"e2"}]}"#
            )
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.inserted == 1 && summary.skipped.count == 1)
            #expect(summary.skipped.first?.reason.contains("size -5") == true)
            // A new library reading the same journal passes too.
            let fresh = try await harness.journalLibrary("c")
            try await fresh.sync(mode: .incremental, fetchThumbnails: false)
            #expect(try fresh.asset(forKey: "originals/ok.jpg") != nil)
            #expect(try fresh.asset(forKey: "originals/neg.jpg") == nil)
        }
    }

    @Test("a checkpoint line with a negative size is skipped and reported; the new library starts from the rest")
    func negativeSizeInACheckpointLineIsSkipped() async throws {
        try await withHarness { harness in
            _ = try await harness.checkpointedLibrary()
            try harness.writeCheckpoint(
                slot: try harness.writtenSlot + 1000,
                lines: [
                    checkpointLine("originals/neg.jpg", size: "-5"), checkpointLine("originals/one.jpg", size: "50"),
                    checkpointLine("checkpoints/horizon.json", size: "5"),
                ])
            let reader = try await harness.journalLibrary("b")
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.checkpointAssets == 1 && summary.mode == .incremental)
            #expect(summary.skipped.count == 2, "\(summary.skipped)")
            #expect(summary.skipped.allSatisfy { $0.reason.hasPrefix("line ") })
            #expect(try reader.asset(forKey: "originals/one.jpg") != nil)
            #expect(try reader.asset(forKey: "originals/neg.jpg") == nil)
        }
    }

    @Test("a checkpoint manifest claiming 10^15 assets is passed over for the one before it, without a crash")
    func hugeClaimedCountIsRefused() async throws {
        try await withHarness { harness in
            _ = try await harness.checkpointedLibrary()
            try harness.writeCheckpoint(slot: try harness.writtenSlot + 1000, lines: ["x"]) { part, body in
                """
                {"format":1,"device":"other","time":1,"lastFullSync":1,"assets":1000000000000000,\
                "parts":[{"key":"\(part)","assets":1000000000000000,"bytes":\(body.count)}]}
                """
            }
            let reader = try await harness.journalLibrary("b")
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.checkpointAssets == 1 && summary.mode == .incremental)
            #expect(summary.skipped.count == 1 && summary.skipped[0].key.hasSuffix("manifest.json"))
            #expect(try reader.asset(forKey: "originals/one.jpg") != nil)
        }
    }

    @Test("a corrupt line in the newest checkpoint: the one before it is used, and with none a listing; reported")
    func corruptCheckpointFallsBack() async throws {
        try await withHarness { harness in
            let writer = try await harness.checkpointedLibrary()
            let slot = try harness.writtenSlot
            try harness.writeCheckpoint(
                slot: slot + 1000, lines: [checkpointLine("originals/one.jpg", size: "50"), "not\tan asset"])
            let reader = try await harness.journalLibrary("b")
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.checkpointAssets == 1 && summary.mode == .incremental)
            #expect(summary.skipped.count == 1 && summary.skipped[0].reason.contains("corrupt checkpoint"))
            #expect(try LibraryHarness.catalog(reader) == (try LibraryHarness.catalog(writer)))

            // With the good checkpoint gone too, a new library lists the bucket.
            try harness.server.deleteObject(
                bucket: LibraryHarness.bucket, key: CheckpointKey.manifest(prefix: "checkpoints/", slot: slot))
            let third = try await harness.journalLibrary("c")
            let listed = try await third.sync(fetchThumbnails: false)
            #expect(listed.mode == .full && listed.inserted == 1)
            #expect(listed.skipped.count == 1 && listed.skipped[0].reason.contains("corrupt checkpoint"))
        }
    }

    @Test("an object under journal/ larger than the cap is skipped by its listed size, never read; reported")
    func oversizedJournalObjectIsNotRead() async throws {
        try await withHarness { harness in
            let reader = try await harness.journalLibrary("b")
            try await reader.sync(fetchThumbnails: false)
            let key = JournalKey.make(prefix: "journal/", time: Self.now, device: "other", sequence: 1)
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: key,
                data: Data(count: BucketInput.maxJournalEntryBytes + 1))
            try harness.writeJournalEntry(
                time: Self.now, sequence: 2,
                #"{"format":1,"device":"other","changes":[{"op":"put","key":"originals/ok.jpg","size":5,"etag":"e1"}]}"#
            )
            let before = harness.log.count
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(!harness.log.dropFirst(before).contains { $0.method == "GET" && $0.key == key })
            #expect(summary.inserted == 1)
            #expect(summary.skipped.map(\.key) == [key] && summary.skipped[0].reason.contains("larger than"))
        }
    }

    @Test("a bounded read of an object larger than its cap asks for one byte more than the cap, and answers nil")
    func boundedReadNeverReadsMoreThanItsCap() async throws {
        try await withHarness { harness in
            let library = try await harness.journalLibrary("b")
            let remote = try library.syncEngine.remote.checked()
            let big = testBytes(count: 5000, seed: 3)
            try harness.server.putObject(bucket: LibraryHarness.bucket, key: "journal/big", data: big)
            try harness.server.putObject(bucket: LibraryHarness.bucket, key: "journal/empty", data: Data())
            let bucket = LibraryHarness.bucket
            #expect(try await remote.client.getObject(bucket: bucket, key: "journal/big", maxBytes: 100) == nil)
            #expect(harness.log.last?.rangeHeader == "bytes=0-100")
            #expect(try await remote.client.getObject(bucket: bucket, key: "journal/big", maxBytes: 5000)?.0 == big)
            #expect(try await remote.client.getObject(bucket: bucket, key: "journal/empty", maxBytes: 10)?.0 == Data())
        }
    }

    @Test("a crafted edit naming another asset's original is skipped; a revert then deletes nothing outside edits/")
    func craftedEditCannotDeleteAnotherOriginal() async throws {
        try await withHarness { harness in
            let victim = try await harness.victimLibrary()
            let y = try #require(try harness.server.objectData(bucket: LibraryHarness.bucket, key: "originals/y.jpg"))
            let manifest = """
                {"format":1,"original":"originals/x.jpg","revision":"1764160000000-evil","reverted":false,\
                "adjustment":{"formatIdentifier":"evil","formatVersion":"1","data":"AA=="},\
                "rendered":{"key":"originals/y.jpg","size":70,"sha256":"00","pixelWidth":1,"pixelHeight":1},\
                "thumbnailKey":"edits/x.jpg/1764160000000-evil.thumb.jpg"}
                """
            try harness.writeJournalEntry(
                time: Self.now,
                #"{"format":1,"device":"other","changes":[{"op":"edit","key":"originals/x.jpg","edit":"#
                    + manifest + "}]}")
            // The same manifest in the edits folder, for a full sync to find.
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: "edits/x.jpg/1764160000000-evil.json", data: Data(manifest.utf8))
            let summary = try await victim.sync(fetchThumbnails: false)
            #expect(summary.skipped.count == 1 && summary.skipped[0].reason.contains("edits folder"))
            try await victim.sync(mode: .full, fetchThumbnails: false)
            let x = try #require(try victim.asset(forKey: "originals/x.jpg"))
            #expect(!x.hasAdjustments)
            try await victim.performChanges { $0.revertAssetContentToOriginal(x) }
            try await victim.sync(fetchThumbnails: false)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: "originals/y.jpg") == y)
        }
    }

    @Test("a revert deletes only in the asset's own edits folder, whatever the catalog's manifest names")
    func revertDeletesOnlyInTheOwnEditsFolder() {
        #expect(EditEngine.isDirectlyIn("edits/x.jpg/", "edits/x.jpg/1764160000000-a.jpg"))
        #expect(!EditEngine.isDirectlyIn("edits/x.jpg/", "originals/y.jpg"))
        #expect(!EditEngine.isDirectlyIn("edits/x.jpg/", "edits/x.jpg/../../originals/y.jpg"))
        #expect(!EditEngine.isDirectlyIn("edits/x.jpg/", "edits/x.jpg/sub/a.jpg"))
        #expect(!EditEngine.isDirectlyIn("edits/x.jpg/", "edits/x.jpg/"))
    }

    @Test("a crafted sidecar with a trash stamp from 1970: the asset is trashed, a plain sync purges nothing")
    func trashStampFrom1970DoesNotPurge() async throws {
        try await withHarness { harness in
            let victim = try await harness.victimLibrary()
            let learned = Date()
            // A journal entry alone changes nothing: the sidecar it names is read, and there is none yet.
            try harness.writeJournalEntry(
                time: Self.now - 1,
                #"{"format":1,"device":"other","changes":[{"op":"metadata","key":"originals/x.jpg","sidecar":{"format":1,"original":"originals/x.jpg","properties":{"trashed":{"value":true,"time":1000,"device":"evil"}}}}]}"#
            )
            try await victim.sync(fetchThumbnails: false)
            #expect(try #require(try victim.asset(forKey: "originals/x.jpg")).isTrashed == false)
            try harness.server.putObject(
                bucket: LibraryHarness.bucket, key: "metadata/x.jpg.json",
                data: Data(
                    #"{"format":1,"original":"originals/x.jpg","properties":{"trashed":{"value":true,"time":1000,"device":"evil"}}}"#
                        .utf8))
            try harness.writeJournalEntry(
                time: Self.now,
                #"{"format":1,"device":"other","changes":[{"op":"metadata","key":"originals/x.jpg","sidecar":{"format":1,"original":"originals/x.jpg","properties":{"trashed":{"value":true,"time":1000,"device":"evil"}}}}]}"#
            )
            let summary = try await victim.sync(fetchThumbnails: false)
            #expect(summary.purged == 0)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: "originals/x.jpg") != nil)
            let x = try #require(try victim.asset(forKey: "originals/x.jpg"))
            #expect(x.isTrashed)
            #expect(try #require(x.trashedDate) >= learned.addingTimeInterval(-1))
            #expect(try await victim.sync(fetchThumbnails: false).purged == 0)
        }
    }

    @Test("a stamp from the future is clamped to the service's clock; a trash is dated when it was learned")
    func sidecarStampsAreClampedAndTrashDatedWhenLearned() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let learned = now.addingTimeInterval(5)
        let json = #"""
            {"format":1,"original":"originals/x.jpg","properties":{"favorite":{"value":true,"time":99999999999999,"device":"evil"},"trashed":{"value":true,"time":1000,"device":"evil"}}}
            """#
        let state = try BucketInput.sidecar(
            Data(json.utf8), originalKey: "originals/x.jpg", now: now, learnedAt: learned
        ).get()
        let limit = Int64((now.timeIntervalSince1970 + BucketInput.maxStampLead) * 1000)
        #expect(state.stamps[.favorite]?.time == limit && state.isFavorite)
        #expect(state.stamps[.trashed]?.time == 1000 && state.trashedDate == learned)
        // A sidecar of another original is refused.
        #expect(throws: BucketInput.Rejection.self) {
            try BucketInput.sidecar(Data(json.utf8), originalKey: "originals/y.jpg", now: now, learnedAt: learned)
                .get()
        }
    }

    @Test("a horizon from the future is clamped to the service's clock; one that is not a horizon counts as none")
    func horizonIsClamped() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(BucketInput.horizon(Data(#"{"format":1,"time":99999999999999}"#.utf8), now: now) == 1_800_000_000_000)
        #expect(BucketInput.horizon(Data(#"{"format":1,"time":1000}"#.utf8), now: now) == 1000)
        #expect(BucketInput.horizon(Data("garbage".utf8), now: now) == 0)
    }

    @Test("a library started from a checkpoint is bound: a copy opened on an empty bucket refuses to sync")
    func checkpointBootstrapRecordsTheBinding() async throws {
        try await withHarness { harness in
            _ = try await harness.checkpointedLibrary()
            let reader = try await harness.journalLibrary("b")
            let summary = try await reader.sync(fetchThumbnails: false)
            #expect(summary.checkpointAssets == 1)
            let one = try #require(try reader.asset(forKey: "originals/one.jpg"))
            let bytes = try await reader.data(for: one, options: AssetLibrary.networkOptions())
            reader.close()
            let copy = harness.folder.appendingPathComponent("copy")
            try FileManager.default.copyItem(at: harness.folder.appendingPathComponent("b"), to: copy)

            try harness.server.createBucket("photos2")
            var wrong = harness.quietConfiguration(storeURL: copy)
            wrong.fullSyncInterval = 24 * 3600
            wrong.checkpointInterval = 24 * 3600
            wrong.bucket = "photos2"
            let library = try await harness.open(wrong)
            let before = harness.log.count
            await expectError(.boundToAnotherBucket) { try await library.sync(mode: .full) }
            await expectError(.boundToAnotherBucket) { try await library.sync() }
            #expect(!harness.log.dropFirst(before).contains { $0.bucket == "photos2" })
            let kept = try #require(try library.asset(forKey: "originals/one.jpg"))
            #expect(try library.fetchAssets().count == 1)
            var local = AssetRequestOptions()
            local.isNetworkAccessAllowed = false
            #expect(try await library.data(for: kept, options: local) == bytes)
        }
    }

    @Test("two edits before a sync: the superseded one is settled, nothing is left waiting for the bucket")
    func supersededEditRevisionIsSettled() async throws {
        try await withHarness { harness in
            // A quiet library: nothing goes up until the sync (as after `edit --no-wait` twice).
            let (library, asset, _) = try await harness.libraryWithPhoto("a")
            try await harness.edit(asset, in: library, format: "com.test.a", color: (255, 0, 0))
            let edited = try #require(try library.asset(withLocalIdentifier: asset.localIdentifier))
            try await harness.edit(edited, in: library, format: "com.test.a", color: (0, 255, 0), settings: "v2")
            #expect(try library.uploads.unsharedContentEdits == 2)
            try await library.sync(fetchThumbnails: false)
            await library.waitForUploads()
            #expect(try library.uploads.unsharedContentEdits == 0)
            #expect(try library.uploads.isEmpty)
            // The current revision reached the bucket, and another library sees it.
            #expect(harness.editObjects().filter { $0.hasSuffix(".json") }.count == 1)
            let (other, seen, _) = try await harness.libraryWithPhoto("b")
            try await other.sync(mode: .incremental, fetchThumbnails: false)
            #expect(try #require(try other.asset(withLocalIdentifier: seen.localIdentifier)).hasAdjustments)
        }
    }

    @Test("an automatic sync lists fully once the last listing is older than 100 times its cost (at least 60 s)")
    func automaticFullListingScalesWithItsCost() async throws {
        try await withHarness { harness in
            let reader = try await harness.journalLibrary("b")
            let first = try await reader.sync(fetchThumbnails: false)
            #expect(first.mode == .full)
            let listedAt = try #require(first.lastFullListing)
            try harness.put("outside.jpg", data: testBytes(count: 100, seed: 3))
            // Within the floor: the journal only.
            let early = try await reader.sync(fetchThumbnails: false)
            #expect(early.mode == .incremental && early.inserted == 0)
            #expect(early.lastFullListing == listedAt)
            // The interval follows the measured cost: 100 times it, at least a minute, at most fullSyncInterval.
            let cost = try #require(
                Int64(try reader.catalog.store.setting(SyncEngine.JournalSetting.lastFullSyncCost) ?? ""))
            let interval = try reader.syncEngine.automaticFullListingInterval()
            #expect(abs(interval - min(max(Double(cost) / 10, 60), 24 * 3600)) < 0.001)
            // The last listing as if it ran that long ago (and a second more).
            let past = Int64((Date().timeIntervalSince1970 - interval - 1) * 1000)
            try reader.catalog.store.setSetting(SyncEngine.JournalSetting.lastFullSync, to: String(past))
            let late = try await reader.sync(fetchThumbnails: false)
            #expect(late.mode == .full && late.inserted == 1)
            #expect(try #require(late.lastFullListing) > listedAt)
            // A listing that took an hour is run again after a day, not after 100 hours.
            try reader.catalog.store.setSetting(SyncEngine.JournalSetting.lastFullSyncCost, to: String(3_600_000))
            #expect(try reader.syncEngine.automaticFullListingInterval() == 24 * 3600)
        }
    }
}
