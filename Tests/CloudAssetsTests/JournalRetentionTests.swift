import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

@Suite("Library: journal retention and expired history", .heavy, .timeLimit(.minutes(1)))
struct JournalRetentionTests {
    static let day: Int64 = 24 * 3600 * 1000
    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// A journal entry that puts `key` (the object is put too), written `age` milliseconds ago.
    static func putEntry(_ harness: LibraryHarness, key: String, age: Int64, sequence: Int64) throws {
        let etag = try harness.server.putObject(
            bucket: LibraryHarness.bucket, key: key, data: testBytes(count: 32, seed: UInt64(sequence)))
        try harness.writeJournalEntry(
            time: now - age, sequence: sequence,
            #"{"format":1,"device":"other","changes":[{"op":"put","key":"\#(key)","size":32,"etag":\#(etag)}]}"#)
    }

    /// A library whose retention is the least allowed (1 day); `checkpoints` whether its syncs write them (and
    /// prune after).
    static func pruningLibrary(_ harness: LibraryHarness, checkpoints: Bool) async throws -> AssetLibrary {
        var configuration = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("pruner"))
        configuration.fullSyncInterval = 24 * 3600
        configuration.checkpointInterval = checkpoints ? 24 * 3600 : 0
        configuration.journalRetention = 60  // below the minimum: a day it is
        return try await harness.open(configuration)
    }

    @Test("a library offline for longer than the retention finds its history gone and lists the whole bucket")
    func libraryBehindTheHorizonListsTheWholeBucket() async throws {
        try await withHarness { harness in
            let away = try await harness.journalLibrary("away")
            let recent = try await harness.journalLibrary("recent")
            try await away.sync(fetchThumbnails: false)
            // `away` last read the journal three days ago; since then another library wrote two entries, one two
            // days ago and one an hour ago.
            try away.catalog.store.setSetting(SyncEngine.JournalSetting.cursor, to: String(Self.now - 3 * Self.day))
            try Self.putEntry(harness, key: "originals/old.jpg", age: 2 * Self.day, sequence: 1)
            try Self.putEntry(harness, key: "originals/new.jpg", age: 3600 * 1000, sequence: 2)
            try await recent.sync(mode: .full, fetchThumbnails: false)

            // A library that wrote a checkpoint covering now prunes what is older than a day.
            let pruner = try await Self.pruningLibrary(harness, checkpoints: false)
            try await pruner.sync(mode: .full, fetchThumbnails: false)
            let pruned = try await pruner.syncEngine.pruneJournal(
                remote: pruner.syncEngine.remote.checked(), covered: Self.now)
            #expect(pruned == 1)
            #expect(harness.journalKeys.count == 1 && harness.journalKeys[0].contains("-other-2.json"))
            let horizon = try await pruner.syncEngine.journalHorizon(remote: pruner.syncEngine.remote.checked()).time
            #expect(abs(horizon - (Self.now - Self.day)) < 60_000)

            // `away`: its position is below the horizon, so the journal may miss what it has not read.
            let summary = try await away.sync(fetchThumbnails: false)
            #expect(summary.historyExpired && summary.mode == .full)
            #expect(try away.asset(forKey: "originals/old.jpg") != nil)
            #expect(try away.asset(forKey: "originals/new.jpg") != nil)
            // And then it is on the journal again.
            let next = try await away.sync(fetchThumbnails: false)
            #expect(!next.historyExpired && next.mode == .incremental)

            // A library that synced within the day reads the journal without asking for the horizon.
            let before = harness.log.count
            let quiet = try await recent.sync(fetchThumbnails: false)
            #expect(quiet.mode == .incremental && !quiet.historyExpired)
            #expect(!harness.log.dropFirst(before).contains { $0.key?.hasSuffix("horizon.json") == true })
        }
    }

    @Test("the sync that writes a checkpoint prunes behind it; younger entries stay; the horizon never drops")
    func pruningKeepsTheNewestCheckpointAndYoungEntries() async throws {
        try await withHarness { harness in
            let bucket = LibraryHarness.bucket
            let old = Self.now - 3 * Self.day
            let older = Self.now - 4 * Self.day
            for (slot, name) in [(older, "manifest.json"), (older, "d/part-00000.z"), (old, "manifest.json")] {
                try harness.server.putObject(
                    bucket: bucket, key: CheckpointKey.slotFolder(prefix: "checkpoints/", slot: slot) + name,
                    data: Data("{}".utf8))
            }
            try Self.putEntry(harness, key: "originals/a.jpg", age: 5 * Self.day, sequence: 1)
            try Self.putEntry(harness, key: "originals/b.jpg", age: 60_000, sequence: 2)
            // The sync that writes today's checkpoint prunes behind it: the two older slots (the newest no more)
            // and the five-day-old entry.
            let pruner = try await Self.pruningLibrary(harness, checkpoints: true)
            let summary = try await pruner.sync(mode: .full, fetchThumbnails: false)
            #expect(summary.wroteCheckpoint && summary.journalObjectsPruned == 4)
            let left = harness.server.keysOrEmpty(prefix: "checkpoints/")
            #expect(left.contains("checkpoints/horizon.json"))
            #expect(left.contains { $0.hasSuffix("/manifest.json") })
            for slot in [old, older] {
                #expect(!left.contains { $0.hasPrefix(CheckpointKey.slotFolder(prefix: "checkpoints/", slot: slot)) })
            }
            let remote = try pruner.syncEngine.remote.checked()
            #expect(harness.journalKeys.count == 1)
            let raised = try await pruner.syncEngine.journalHorizon(remote: remote).time
            #expect(abs(raised - (Self.now - Self.day)) < 60_000)
            // A checkpoint covering less does not lower the horizon, and deletes nothing more.
            #expect(try await pruner.syncEngine.pruneJournal(remote: remote, covered: Self.now - 2 * Self.day) == 0)
            #expect(try await pruner.syncEngine.journalHorizon(remote: remote).time == raised)
        }
    }
}
