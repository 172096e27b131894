import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// A restore on one library racing `emptyTrash` on another: each asset ends either purged (no original, no
/// sidecar, in no library) or restored (its original and a sidecar that says so, in every library) — never a
/// sidecar without its original, and never a restore that looks made when the asset is gone.
@Suite("Trash: restore racing a purge", .heavy)
struct TrashRaceTests {
    static let count = 50

    /// Libraries a and b on a bucket of ``count`` originals that a trashed (its sidecars in the bucket) and b
    /// has synced since, so both see every asset in the trash.
    static func trashedOnBoth(_ harness: LibraryHarness) async throws -> (AssetLibrary, AssetLibrary) {
        for index in 0..<count { try harness.put("t\(index).jpg", data: Data("trashed \(index)".utf8)) }
        let a = try await harness.journalLibrary("a")
        try await a.sync(fetchThumbnails: false)
        try await a.performChanges { $0.deleteAssets(Array(try! a.fetchAssets())) }
        _ = await a.waitForUploads()
        #expect(harness.server.keysOrEmpty(prefix: "metadata/").count == count, "a's trash is in the bucket")
        let b = try await harness.journalLibrary("b")
        try await b.sync(fetchThumbnails: false)
        let trashed = try b.fetchAssets(FetchOptions(includeTrashedAssets: true)).filter(\.isTrashed)
        #expect(trashed.count == count, "b sees the trash")
        return (a, b)
    }

    /// Every sidecar in the bucket names an original that is there.
    static func orphanSidecars(_ harness: LibraryHarness) -> [String] {
        let originals = Set(harness.server.keysOrEmpty(prefix: "originals/"))
        return harness.server.keysOrEmpty(prefix: "metadata/").filter { sidecar in
            let layout = BucketLayout()
            guard let original = layout.originalKey(forSidecarKey: sidecar) else { return true }
            return !originals.contains(original)
        }
    }

    @Test("a restore made after another library purged the asset writes no sidecar, and the asset leaves it")
    func restoreAfterAPurgeLeavesNoSidecar() async throws {
        try await withHarness { harness in
            let (a, b) = try await Self.trashedOnBoth(harness)
            let inB = try b.fetchAssets(FetchOptions(includeTrashedAssets: true))
            // b restores here; before it reaches the bucket, a purges the whole trash.
            try await b.performChanges { $0.restoreAssets(Array(inB)) }
            #expect(try await a.emptyTrash() == Self.count)
            _ = await b.waitForUploads()

            #expect(harness.server.keysOrEmpty(prefix: "metadata/").isEmpty, "no sidecar of a purged asset")
            #expect(harness.server.keysOrEmpty(prefix: "originals/").isEmpty)
            #expect(try b.fetchAssets(FetchOptions(includeTrashedAssets: true)).count == 0, "gone from b too")
            #expect(try b.uploads.unsharedEdits == 0)
        }
    }

    @Test("restore and empty-trash at once: each asset is purged everywhere or restored everywhere, no orphans")
    func restoreRacingEmptyTrash() async throws {
        try await withHarness { harness in
            let (a, b) = try await Self.trashedOnBoth(harness)
            let inB = try b.fetchAssets(FetchOptions(includeTrashedAssets: true))
            try await b.performChanges { $0.restoreAssets(Array(inB)) }
            // b's restore goes up while a purges: the two overlap in time.
            async let purging = a.emptyTrash()
            async let restoring = b.waitForUploads()
            let purged = try await purging
            _ = await restoring

            let originals = harness.server.keysOrEmpty(prefix: "originals/")
            #expect(purged + originals.count == Self.count, "purged \(purged), kept \(originals.count)")
            #expect(Self.orphanSidecars(harness).isEmpty, "sidecars without their original")
            #expect(
                harness.server.keysOrEmpty(prefix: "metadata/").count == originals.count, "each kept asset's sidecar")
            // b holds exactly what is left, out of the trash; so does a after a sync, and a third library.
            let inBAfter = try b.fetchAssets(FetchOptions(includeTrashedAssets: true))
            #expect(Set(inBAfter.map(\.key)) == Set(originals))
            #expect(inBAfter.allSatisfy { !$0.isTrashed })
            try await a.sync(fetchThumbnails: false)
            try await b.sync(fetchThumbnails: false)
            for library in [a, b, try await harness.journalLibrary("c")] {
                try await library.sync(fetchThumbnails: false)
                let assets = try library.fetchAssets(FetchOptions(includeTrashedAssets: true))
                #expect(Set(assets.map(\.key)) == Set(originals))
                #expect(assets.allSatisfy { !$0.isTrashed }, "restored everywhere")
            }
        }
    }
}
