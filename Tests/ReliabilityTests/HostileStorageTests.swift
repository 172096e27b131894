import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Hostile local conditions: a disk that fills up mid-download and a store that turned read-only. Each ends in a
/// typed error; nothing is written outside the library folder and the catalog loses nothing.
@Suite(.heavy, .serialized, .enabled(if: TmpfsMount.isPermitted, "needs the right to mount a tmpfs (root)"))
struct HostileStorageTests {
    @Test func aFullDiskEndsDownloadsAndReadsInATypedErrorAndLosesNothing() async throws {
        let bucket = try await ReliabilityBucket.start()
        let scratch = try ScratchFolder("fulldisk")
        defer { scratch.remove() }
        let disk = try TmpfsMount(at: scratch.url.appendingPathComponent("disk"), bytes: 3 << 20)
        defer { disk.unmount() }
        let store = disk.folder.appendingPathComponent("library", isDirectory: true)
        var rng = SeededGenerator(seed: 11)
        for i in 0..<5 { try bucket.put("originals/small-\(i).jpg", rng.bytes(20_000)) }
        let big = try bucket.put("originals/huge.mov", rng.bytes(6 << 20))
        _ = big
        let library = try await AssetLibrary(configuration: bucket.configuration(folder: store))
        defer { library.close() }
        try await library.sync()
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        let small = try #require(try library.asset(forKey: "originals/small-0.jpg"))
        _ = try await library.requestFile(for: small, options: options)
        let catalog = try CatalogSnapshot(library)
        let outside = ScratchFolder.snapshot(scratch.url, excluding: store)

        let huge = try #require(try library.asset(forKey: "originals/huge.mov"))
        await #expect("a 6 MiB download onto a 3 MiB disk") {
            _ = try await library.requestFile(for: huge, options: options)
        } throws: { error in
            print("full disk, download: \(error)")
            return ErrorKind.isTyped(error)
        }
        await #expect("a 5 MiB ranged read onto a 3 MiB disk") {
            _ = try await library.read(huge, range: 0..<(5 << 20))
        } throws: { error in
            print("full disk, ranged read: \(error)")
            return ErrorKind.isTyped(error)
        }
        #expect(try CatalogSnapshot(library) == catalog)
        #expect(ScratchFolder.snapshot(scratch.url, excluding: store) == outside)
        let report = try LibraryInvariants(library: library, reference: .server(bucket)).check()
        let leftovers = report.violations.filter { $0.hasSuffix(".part.json.tmp (asset \(huge.id) is cloudOnly)") }
        #expect(report.violations.count == leftovers.count, "\(report.violations)")
        #expect(leftovers.isEmpty, "\(leftovers)")

        // The failed download does not keep the disk full: a small original still fits afterwards.
        let other = try #require(try library.asset(forKey: "originals/small-1.jpg"))
        let url = try await library.requestFile(for: other, options: options)
        #expect(try Data(contentsOf: url) == bucket.current(other.key))
        await bucket.stop()
    }

    @Test func aReadOnlyStoreIsRefusedWithATypedErrorAndLosesNothing() async throws {
        let bucket = try await ReliabilityBucket.start()
        let scratch = try ScratchFolder("readonly")
        defer { scratch.remove() }
        let disk = try TmpfsMount(at: scratch.url.appendingPathComponent("disk"), bytes: 8 << 20)
        defer { disk.unmount() }
        let store = disk.folder.appendingPathComponent("library", isDirectory: true)
        var rng = SeededGenerator(seed: 12)
        for i in 0..<4 { try bucket.put("originals/p-\(i).jpg", rng.bytes(30_000)) }
        let configuration = bucket.configuration(folder: store)
        var library: AssetLibrary? = try await AssetLibrary(configuration: configuration)
        try await library!.sync()
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        _ = try await library!.requestFile(for: try #require(try library!.fetchAssets().firstObject), options: options)
        let catalog = try CatalogSnapshot(library!)
        library!.close()
        library = nil
        // The database closes when the library is released; only then can the file system be remounted (no
        // process may hold a file on it: the library opens every file close-on-exec, so no child holds one).
        #expect(await waitUntil { disk.holders().isEmpty }, "\(disk.holders())")
        let before = ScratchFolder.snapshot(scratch.url)
        try disk.setReadOnly(true)
        await #expect("opening a library on a read-only file system") {
            let library = try await AssetLibrary(configuration: configuration)
            library.close()
        } throws: { error in
            print("read-only store: \(error)")
            return ErrorKind.isTyped(error)
        }
        try disk.setReadOnly(false)
        #expect(ScratchFolder.snapshot(scratch.url) == before)
        let reopened = try await AssetLibrary(configuration: configuration)
        defer { reopened.close() }
        #expect(try CatalogSnapshot(reopened) == catalog)
        let report = try LibraryInvariants(library: reopened, reference: .server(bucket)).check()
        #expect(report.violations.isEmpty, "\(report.violations)")
        await bucket.stop()
    }
}
