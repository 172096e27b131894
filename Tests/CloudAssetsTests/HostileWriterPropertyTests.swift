import FakeS3
import Foundation
import Hashing
import TestSupport
import Testing

@testable import CloudAssets

/// Three honest libraries, another tool and a hostile writer on one bucket. The honest libraries import, edit,
/// favourite, trash, restore, revert, sync and empty their trash; the other tool puts and overwrites originals;
/// the hostile writer puts garbage and crafted entries into `journal/` and `checkpoints/` (keys outside the
/// layout, negative sizes, deletes of live objects, trash stamps from 1970, edits whose rendering is another
/// asset's original, manifests claiming 10^15 assets, corrupt parts).
///
/// After every step: no original disappeared unless an honest library purged it and an honest change had put it
/// in the trash, at the version that library held; no original changed unless the other tool wrote it; no sync
/// failed. At the end every honest library holds what a full listing of the bucket shows, and they all agree.
@Suite("Write safety: honest libraries, another tool and a hostile writer", .heavy)
struct HostileWriterPropertyTests {
    enum Step: Equatable {
        case other
        case outsidePut(String)
        case purge(library: Int)
    }

    @Test(
        "no original is deleted or changed but by an honest decision; honest libraries converge",
        arguments: [1, 2, 3] as [UInt64])
    func hostileWriterChangesNothingItDoesNotOwn(seed: UInt64) async throws {
        try await withHarness { harness in
            var random = SeededRandom(seed: seed)
            var libraries: [AssetLibrary] = []
            func openLibrary(_ name: String) async throws -> AssetLibrary {
                var configuration = harness.quietConfiguration(storeURL: harness.folder.appendingPathComponent(name))
                configuration.fullSyncInterval = 24 * 3600
                configuration.checkpointInterval = 24 * 3600
                return try await harness.open(configuration)
            }
            libraries.append(try await openLibrary("a"))
            libraries.append(try await openLibrary("b"))
            let sources = harness.folder.appendingPathComponent("sources", isDirectory: true)
            try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
            /// Keys the latest honest change put in the trash (and shared).
            var honestlyTrashed = Set<String>()
            var counter = 0
            let bucket = LibraryHarness.bucket

            func originals() throws -> [String: String] {
                var result: [String: String] = [:]
                for key in harness.server.keysOrEmpty(prefix: "originals/") {
                    let data = try harness.server.objectData(bucket: bucket, key: key) ?? Data()
                    result[key] = md5Hex(data)
                }
                return result
            }
            func sync(_ library: AssetLibrary) async {
                do {
                    try await library.sync(fetchThumbnails: false)
                } catch {
                    Issue.record("a sync failed on the bucket's contents: \(error)")
                }
            }
            func hostileWrite() throws {
                counter += 1
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                let live = harness.server.keysOrEmpty(prefix: "originals/")
                let victim = random.pick(live) ?? "originals/none.jpg"
                let other = random.pick(live) ?? "originals/none.jpg"
                func entry(_ change: String) -> Data {
                    Data(#"{"format":1,"device":"hostile","changes":[\#(change)]}"#.utf8)
                }
                let key: String
                let body: Data
                switch random.below(12) {
                case 0:
                    key = "journal/\(now)-hostile-\(counter).json"
                    body = testBytes(count: 1 + random.below(400), seed: UInt64(counter))
                case 1:
                    key = "journal/\(now)-hostile-\(counter).json"
                    let target = random.pick([
                        "checkpoints/horizon.json", "/etc/passwd", "originals/../../x", "metadata/a.json",
                    ])!
                    body = entry(#"{"op":"put","key":"\#(target)","size":10,"etag":"abc"}"#)
                case 2:
                    key = "journal/\(now)-hostile-\(counter).json"
                    body = entry(#"{"op":"put","key":"originals/neg-\#(counter).jpg","size":-5,"etag":"abc"}"#)
                case 3:
                    let etag =
                        (try? harness.server.objectData(bucket: bucket, key: victim)).flatMap { $0 }.map { md5Hex($0) }
                        ?? "x"
                    key = "journal/\(now)-hostile-\(counter).json"
                    body = entry(#"{"op":"delete","key":"\#(victim)","etag":"\#(etag)"}"#)
                case 4:
                    key = "journal/\(now)-hostile-\(counter).json"
                    body = entry(
                        #"{"op":"metadata","key":"\#(victim)","sidecarETag":"x","sidecar":{"format":1,"original":"\#(victim)","properties":{"trashed":{"value":true,"time":1000,"device":"hostile"}}}}"#
                    )
                case 5:
                    key = "journal/\(now)-hostile-\(counter).json"
                    body = entry(
                        #"{"op":"edit","key":"\#(victim)","edit":{"format":1,"original":"\#(victim)","#
                            + #""revision":"\#(now)-hostile","reverted":false,"adjustment":{"formatIdentifier":"#
                            + #""com.cloudassets.basic","formatVersion":"1","data":""},"rendered":{"key":"\#(other)","#
                            + #""size":10,"etag":"abc","sha256":"00","pixelWidth":10,"pixelHeight":10},"#
                            + #""thumbnailKey":"\#(other)"}}"#
                    )
                case 6:
                    key = "checkpoints/\(now)/manifest.json"
                    body = Data(
                        #"{"format":1,"device":"hostile","time":\#(now),"lastFullSync":\#(now),"assets":1000000000000000,"parts":[{"key":"checkpoints/\#(now)/hostile/part-00000.z","assets":1000000000000000,"bytes":1000000000000000}]}"#
                            .utf8)
                case 7:
                    key = "checkpoints/\(now)/hostile/part-00000.z"
                    body = testBytes(count: 64, seed: UInt64(counter))
                case 8:
                    key = "checkpoints/\(now + 1)/manifest.json"
                    body = testBytes(count: 30, seed: UInt64(counter))
                case 10:
                    // A slot newer than any library's, claiming 10^15 assets.
                    let slot = "checkpoints/9\(String(counter).padding(toLength: 12, withPad: "0", startingAt: 0))/"
                    key = slot + "manifest.json"
                    body = Data(
                        (#"{"format":1,"device":"hostile","time":1,"lastFullSync":1,"assets":1000000000000000,"#
                            + #""parts":[{"key":"\#(slot)hostile/part-00000.z","assets":1000000000000000,"#
                            + #""bytes":10}]}"#).utf8)
                case 11:
                    // A newer slot whose part is another object of the layout.
                    let slot = "checkpoints/8\(String(counter).padding(toLength: 12, withPad: "0", startingAt: 0))/"
                    key = slot + "manifest.json"
                    body = Data(
                        (#"{"format":1,"device":"hostile","time":1,"lastFullSync":1,"assets":1,"parts":[{"key":"#
                            + #""checkpoints/horizon.json","assets":1,"bytes":10}]}"#).utf8)
                default:
                    key = "journal/\(now)-hostile-\(counter).json"
                    body = Data(#"{"format":1,"device":"hostile","changes":"not a list"}"#.utf8)
                }
                try harness.server.putObject(bucket: bucket, key: key, data: body)
            }

            for stepIndex in 0..<50 {
                if stepIndex == 25 { libraries.append(try await openLibrary("c")) }
                let index = random.below(libraries.count)
                let library = libraries[index]
                let visible = try library.fetchAssets(FetchOptions(includeHiddenAssets: true)).map { $0 }
                let trashed = try library.fetchAssets(
                    FetchOptions(predicate: .isTrashed(true), includeHiddenAssets: true, includeTrashedAssets: true)
                ).map { $0 }
                let before = try originals()
                var catalogBefore: [String: String] = [:]
                var step = Step.other
                switch random.below(11) {
                case 0, 1:
                    counter += 1
                    let file = sources.appendingPathComponent("p\(counter).jpg")
                    try solidJPEG(width: 16 + random.below(32), height: 16, (UInt8(counter % 256), 9, 9)).write(
                        to: file)
                    try await library.performChanges { $0.createAsset(fromFileAt: file) }
                    await library.waitForUploads()
                case 2:
                    if let asset = random.pick(visible) {
                        try await library.performChanges { $0.setFavorite(!asset.isFavorite, for: [asset]) }
                        await library.waitForUploads()
                    }
                case 3:
                    if let asset = random.pick(visible.filter { $0.uploadState == .uploaded }) {
                        try await library.performChanges { $0.deleteAssets([asset]) }
                        await library.waitForUploads()
                        if try library.uploads.unsharedEdits == 0 { honestlyTrashed.insert(asset.key) }
                    }
                case 4:
                    if let asset = random.pick(trashed) {
                        try await library.performChanges { $0.restoreAssets([asset]) }
                        await library.waitForUploads()
                        honestlyTrashed.remove(asset.key)
                    }
                case 5:
                    var options = FetchOptions(includeHiddenAssets: true)
                    options.includeTrashedAssets = true
                    for asset in try library.fetchAssets(options) { catalogBefore[asset.key] = asset.etag }
                    step = .purge(library: index)
                    _ = try? await library.emptyTrash()
                case 6:
                    if let asset = random.pick(visible.filter { $0.uploadState == .uploaded && !$0.hasAdjustments }) {
                        _ = try? await library.applyBasicEdit(to: asset) { try $0.setRotation(degrees: 90) }
                        await library.waitForUploads()
                    }
                case 7:
                    if let asset = random.pick(visible.filter(\.hasAdjustments)) {
                        try await library.performChanges { $0.revertAssetContentToOriginal(asset) }
                        await library.waitForUploads()
                    }
                case 8:
                    // Another tool: a new original, or new bytes over one that exists.
                    counter += 1
                    let existing = harness.server.keysOrEmpty(prefix: "originals/")
                    let key =
                        random.below(2) == 0
                        ? (random.pick(existing) ?? "originals/o/\(counter).jpg")
                        : "originals/o/\(counter).jpg"
                    try harness.server.putObject(
                        bucket: bucket, key: key, data: try solidJPEG(width: 20, height: 20 + counter % 7, (1, 2, 3)))
                    step = .outsidePut(key)
                case 9:
                    try hostileWrite()
                default:
                    await sync(library)
                }
                let after = try originals()
                for (key, hash) in before {
                    if let now = after[key] {
                        if now != hash, step != .outsidePut(key) {
                            Issue.record("step \(stepIndex): \(key) changed, but no outside writer wrote it")
                        }
                        continue
                    }
                    guard case .purge = step else {
                        Issue.record("step \(stepIndex): \(key) was deleted, but no library emptied its trash")
                        continue
                    }
                    if !honestlyTrashed.contains(key) {
                        Issue.record("step \(stepIndex): \(key) was purged, but no honest change trashed it")
                    }
                    if catalogBefore[key] != hash {
                        Issue.record("step \(stepIndex): \(key) was purged at a version the library did not hold")
                    }
                    honestlyTrashed.remove(key)
                }
            }
            // The end: every library sends what it holds and lists the whole bucket twice.
            for _ in 0..<2 {
                for library in libraries {
                    await library.waitForUploads()
                    try await library.sync(mode: .full, fetchThumbnails: false)
                }
            }
            let bucketKeys = Set(harness.server.keysOrEmpty(prefix: "originals/"))
            var views: [[String: String]] = []
            for library in libraries {
                let view = try sharedFacts(of: library)
                #expect(Set(view.keys) == bucketKeys)
                views.append(view)
            }
            #expect(views.allSatisfy { $0 == views[0] })
        }
    }
}

/// Lower-case hex MD5 (a single-part object's ETag).
func md5Hex(_ data: Data) -> String {
    Insecure.MD5.hash(data: data).map { String(format: "%02x", $0) }.joined()
}
