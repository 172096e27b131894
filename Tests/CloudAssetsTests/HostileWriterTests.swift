import CloudAssets
import FakeS3
import Foundation
import Testing

@Suite("Library: a hostile writer in the bucket changes nothing it did not write", .timeLimit(.minutes(3)))
struct HostileWriterTests {
    /// One crafted or garbage object the hostile writer puts, by kind.
    static func hostileObject(_ kind: Int, counter: Int, victims: [(key: String, etag: String)], now: Int64)
        -> (key: String, body: Data)
    {
        let journalKey =
            "journal/\(String(now).padding(toLength: 13, withPad: "0", startingAt: 0))-evil-\(counter).json"
        let victim = victims.isEmpty ? (key: "originals/none.jpg", etag: "0") : victims[counter % victims.count]
        let entry: (String) -> Data = { Data((#"{"format":1,"device":"evil","changes":["# + $0 + "]}").utf8) }
        switch kind {
        case 0:
            return (journalKey, testBytes(count: 50 + counter, seed: UInt64(counter)))
        case 1:
            let key = ["checkpoints/horizon.json", "/etc/passwd", "originals/../../x", "metadata/a.json"][counter % 4]
            return (journalKey, entry(#"{"op":"put","key":"\#(key)","size":5,"etag":"e"}"#))
        case 2:
            return (journalKey, entry(#"{"op":"put","key":"originals/neg\#(counter).jpg","size":-5,"etag":"e"}"#))
        case 3:
            return (
                journalKey,
                entry(
                    #"{"op":"metadata","key":"\#(victim.key)","sidecar":{"format":1,"original":"\#(victim.key)","properties":{"trashed":{"value":true,"time":1000,"device":"evil"}}}}"#
                )
            )
        case 4:
            let other = victims.count > 1 ? victims[(counter + 1) % victims.count].key : "originals/x.jpg"
            let revision = "1764160000000-evil\(counter)"
            return (
                journalKey,
                entry(
                    #"{"op":"edit","key":"\#(victim.key)","edit":{"format":1,"original":"\#(victim.key)","revision":"\#(revision)","rendered":{"key":"\#(other)","size":5,"sha256":"00","pixelWidth":1,"pixelHeight":1}}}"#
                )
            )
        case 5:
            // A delete with the right ETag: the catalogs drop the asset; nothing in the bucket goes.
            return (journalKey, entry(#"{"op":"delete","key":"\#(victim.key)","etag":"\#(victim.etag)"}"#))
        case 6:
            // A checkpoint in a newer slot whose manifest claims 10^15 assets.
            let slot = "checkpoints/9\(String(counter).padding(toLength: 12, withPad: "0", startingAt: 0))/"
            return (
                slot + "manifest.json",
                Data(
                    #"{"format":1,"device":"evil","time":1,"lastFullSync":1,"assets":1000000000000000,"parts":[{"key":"\#(slot)evil/part-00000.z","assets":1000000000000000,"bytes":10}]}"#
                        .utf8)
            )
        default:
            // A checkpoint manifest naming a part that is garbage.
            let slot = "checkpoints/8\(String(counter).padding(toLength: 12, withPad: "0", startingAt: 0))/"
            return (
                slot + "manifest.json",
                Data(
                    #"{"format":1,"device":"evil","time":1,"lastFullSync":1,"assets":1,"parts":[{"key":"checkpoints/horizon.json","assets":1,"bytes":10}]}"#
                        .utf8)
            )
        }
    }

    /// Two honest libraries (a third joins half way, from whatever checkpoint the bucket holds), another tool that
    /// puts objects, and a hostile writer that puts garbage and crafted journal entries and checkpoints. After
    /// every step every object an honest writer put under `originals/` is still there with its bytes; at the end
    /// the honest libraries agree, and none holds a key the hostile writer invented.
    @Test(
        "honest objects are never deleted or changed, and honest catalogs converge", arguments: [1, 2, 3] as [UInt64])
    func hostileWriterChangesNothing(seed: UInt64) async throws {
        try await withHarness { harness in
            var random = SeededRandom(seed: seed)
            var libraries: [AssetLibrary] = []
            for name in ["a", "b"] {
                var configuration = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent(name))
                configuration.fullSyncInterval = 24 * 3600
                configuration.checkpointInterval = 24 * 3600
                libraries.append(try await harness.open(configuration))
            }
            let sources = harness.folder.appendingPathComponent("sources", isDirectory: true)
            try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
            var honest: [String: Data] = [:]  // honest originals: key → bytes
            var hostileKeys: Set<String> = []
            func checkHonestObjects(_ step: Int) throws {
                for (key, bytes) in honest {
                    let stored = try harness.server.objectData(bucket: LibraryHarness.bucket, key: key)
                    #expect(stored == bytes, "step \(step): \(key) was deleted or changed")
                }
            }
            for step in 0..<50 {
                let library = libraries[random.below(libraries.count)]
                switch random.below(10) {
                case 0, 1:
                    let url = sources.appendingPathComponent("\(step).jpg")
                    try testBytes(count: 300 + random.below(2000), seed: seed << 32 + UInt64(step)).write(to: url)
                    try await library.performChanges {
                        $0.createAsset(fromFileAt: url, options: AssetCreationOptions(bucketPath: "honest\(step).jpg"))
                    }
                    await library.waitForUploads()
                    let key = "originals/honest\(step).jpg"
                    if let data = try harness.server.objectData(bucket: LibraryHarness.bucket, key: key) {
                        honest[key] = data
                    }
                case 2:
                    if let asset = random.pick(
                        try library.fetchAssets(FetchOptions(includeHiddenAssets: true)).map { $0 })
                    {
                        let flag = random.below(2) == 0
                        try await library.performChanges { $0.setFavorite(flag, for: [asset]) }
                    }
                case 3:
                    let key = "originals/outside/o\(step).jpg"
                    let data = testBytes(count: 200, seed: UInt64(step) + 7)
                    try harness.server.putObject(bucket: LibraryHarness.bucket, key: key, data: data)
                    honest[key] = data
                case 4, 5, 6:
                    let victims = try honest.keys.sorted().compactMap { key -> (key: String, etag: String)? in
                        guard let asset = try libraries[0].asset(forKey: key) else { return nil }
                        return (key, asset.etag)
                    }
                    let now = Int64(Date().timeIntervalSince1970 * 1000)
                    let (key, body) = Self.hostileObject(random.below(8), counter: step, victims: victims, now: now)
                    try harness.server.putObject(bucket: LibraryHarness.bucket, key: key, data: body)
                    hostileKeys.insert(key)
                default:
                    let modes: [SyncMode] = [.automatic, .incremental, .full]
                    try await library.sync(mode: modes[random.below(3)], fetchThumbnails: false)
                }
                if step == 25 {
                    // A new library starts from whatever the bucket offers.
                    var configuration = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent("c"))
                    configuration.fullSyncInterval = 24 * 3600
                    configuration.checkpointInterval = 24 * 3600
                    let joining = try await harness.open(configuration)
                    try await joining.sync(fetchThumbnails: false)
                    libraries.append(joining)
                }
                try checkHonestObjects(step)
            }
            for library in libraries { try await library.sync(mode: .full, fetchThumbnails: false) }
            for library in libraries { try await library.sync(mode: .incremental, fetchThumbnails: false) }
            try checkHonestObjects(50)
            var views: [[String]] = []
            for library in libraries {
                let all = try library.fetchAssets(
                    FetchOptions(sortBy: [.key()], includeHiddenAssets: true, includeTrashedAssets: true))
                // (The trash is left out: a crafted `metadata` entry carries no sidecar, so a library that lists
                // instead of reading that entry never hears of it — an entry's claims are not checked against the
                // bucket.)
                views.append(all.map { "\($0.key) fav=\($0.isFavorite)" })
                #expect(all.allSatisfy { $0.key.hasPrefix("originals/") && !$0.key.contains("..") && $0.size >= 0 })
                #expect(!all.contains { $0.hasAdjustments })
            }
            for view in views.dropFirst() { #expect(view == views[0]) }
            #expect(Set(views[0].map { String($0.prefix { $0 != " " }) }) == Set(honest.keys))
        }
    }
}
