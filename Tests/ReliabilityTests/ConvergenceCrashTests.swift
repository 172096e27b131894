import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Convergence with `kill -9`: a library in this process, a `cloudassets` child process killed at random moments
/// during its imports, edits and syncs (seeded), and an outside writer (another tool) putting and deleting
/// objects, with the journal on (incremental syncs). Once the child may finish its syncs, both catalogs hold
/// exactly the bucket's originals, with the same shared properties.
@Suite(.heavy, .serialized, .timeLimit(.minutes(3))) struct ConvergenceCrashTests {
    /// What both libraries must agree on about one asset.
    struct View: Hashable, CustomStringConvertible {
        var key: String
        var favorite: Bool
        var trashed: Bool
        var description: String { "\(key)\(favorite ? " fav" : "")\(trashed ? " trash" : "")" }
    }

    static func views(_ library: AssetLibrary) throws -> Set<View> {
        var options = FetchOptions(includeHiddenAssets: true)
        options.includeTrashedAssets = true
        return Set(
            try library.fetchAssets(options).map { View(key: $0.key, favorite: $0.isFavorite, trashed: $0.isTrashed) })
    }

    @Test func killNineDuringChangesOfOneLibraryStillConverges() async throws {
        let scale = SoakScale.current
        print("convergence crash: seed \(scale.seed) (replay with CLOUDASSETS_SOAK_SEED=\(scale.seed))")
        var rng = SeededGenerator(seed: scale.seed)
        let cli = try ChildCLI.locate()
        let bucket = try await ReliabilityBucket.start()
        let scratch = try ScratchFolder("converge-crash")
        defer { scratch.remove() }
        let logs = scratch.url.appendingPathComponent("logs", isDirectory: true)
        let sources = scratch.url.appendingPathComponent("sources", isDirectory: true)
        for folder in [logs, sources] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let childStore = scratch.url.appendingPathComponent("child", isDirectory: true)
        var configuration = bucket.configuration(folder: scratch.url.appendingPathComponent("here", isDirectory: true))
        configuration.fullSyncInterval = 24 * 3600  // the journal carries the libraries' changes
        configuration.startsBackgroundTransfers = false
        let here = try await AssetLibrary(configuration: configuration)
        defer { here.close() }
        try await here.sync(fetchThumbnails: false)

        /// Runs the child; with probability one half kills it after 0–120 ms. Returns whether it was killed.
        func child(_ arguments: [String], _ rng: inout SeededGenerator) async throws -> Bool {
            let process = try cli.start(arguments, store: childStore, bucket: bucket, logFolder: logs)
            if rng.next() % 2 == 0 {
                try await Task.sleep(nanoseconds: (rng.next() % 120) * 1_000_000)  // the kill moment, not a wait
                let killed = process.isRunning
                killNine(process)
                return killed
            }
            process.waitUntilExit()
            return false
        }

        var outside: [String] = []
        var kills = 0
        for round in 0..<(scale.isFull ? 150 : 40) {
            let keys = try Self.views(here).map(\.key).sorted()
            switch rng.next() % 6 {
            case 0:  // the child imports a file of its own
                let file = sources.appendingPathComponent("IMG_\(round).JPG")
                try rng.bytes(2_000 + Int(rng.next() % 1_000_000)).write(to: file)
                if try await child(["add", file.path], &rng) { kills += 1 }
            case 1:  // the child favourites or trashes an asset it knows by key
                guard let key = keys.randomElement(using: &rng) else { continue }
                if try await child([rng.next() % 2 == 0 ? "favorite" : "rm", key], &rng) { kills += 1 }
            case 2:  // the child syncs (automatic: the journal, or a listing)
                if try await child(["sync", "--no-thumbnails"], &rng) { kills += 1 }
            case 3:  // this library imports, or favourites, then syncs
                if rng.next() % 2 == 0 {
                    let file = sources.appendingPathComponent("here_\(round).JPG")
                    try rng.bytes(1_000 + Int(rng.next() % 20_000)).write(to: file)
                    _ = try await here.performChanges { $0.createAsset(fromFileAt: file) }
                } else if let key = keys.randomElement(using: &rng), let asset = try here.asset(forKey: key) {
                    try await here.performChanges { $0.setFavorite(!asset.isFavorite, for: [asset]) }
                }
                try await here.sync(fetchThumbnails: false)
            case 4:  // another tool puts an object
                let key = "originals/outside-\(round).bin"
                _ = try bucket.put(key, rng.bytes(500 + Int(rng.next() % 5_000)))
                outside.append(key)
            default:  // another tool deletes one of its objects
                guard !outside.isEmpty else { continue }
                try bucket.delete(outside.remove(at: Int(rng.next() % UInt64(outside.count))))
            }
        }

        // The child finishes what it started (uploads of its imports, edits not yet shared), unkilled; then both
        // read each other's journal, and a full listing finds the outside writer's objects.
        for arguments in [["sync", "--no-thumbnails"], ["sync", "--no-thumbnails", "--full"]] {
            let process = try cli.start(arguments, store: childStore, bucket: bucket, logFolder: logs)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
        try await here.sync(mode: .full, fetchThumbnails: false)
        let process = try cli.start(["sync", "--no-thumbnails"], store: childStore, bucket: bucket, logFolder: logs)
        process.waitUntilExit()
        try await here.sync(fetchThumbnails: false)

        var childConfiguration = bucket.configuration(folder: childStore)
        childConfiguration.startsBackgroundTransfers = false
        let reopened = try await AssetLibrary(configuration: childConfiguration)
        defer { reopened.close() }
        let mine = try Self.views(here)
        let theirs = try Self.views(reopened)
        let originals = Set(
            try bucket.server.keys(bucket: ReliabilityBucket.bucket, prefix: "originals/"))
        print("convergence crash: \(kills) kills, \(mine.count) assets")
        #expect(mine == theirs, "here: \(mine.subtracting(theirs)); child: \(theirs.subtracting(mine))")
        #expect(Set(mine.map(\.key)) == originals)
        for uploads in [try here.uploads, try reopened.uploads] {
            #expect(uploads.pending + uploads.uploading + uploads.failed + uploads.unsharedEdits == 0, "\(uploads)")
        }
    }
}
