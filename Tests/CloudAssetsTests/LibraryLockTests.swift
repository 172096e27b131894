import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// Several libraries on one folder (here in one process; `cloudassets` processes share it the same way).
@Suite("Library: a folder shared by several libraries", .heavy, .timeLimit(.minutes(1)))
struct LibraryLockTests {
    @Test("a second library opens a folder in use; each delivers the other's commits to its observers")
    func librariesShareAFolder() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 100, seed: 170))
            let first = try await harness.open()
            try await first.sync()
            let second = try await harness.open()
            #expect(second.recovery == AssetLibrary.RecoveryReport(), "only the first open repairs the folder")
            #expect(try second.fetchAssets().count == 1)
            let all = try second.fetchAssets()
            var reader = ChangeReader(observing: second)

            // The first library's sync is delivered to the second's observers, with details for its results.
            try harness.put("b.png", data: testBytes(count: 100, seed: 171))
            try await first.sync()
            let change = try await reader.next()
            #expect(change.insertedIdentifiers.count == 1)
            #expect(change.details(for: all)?.fetchResultAfterChanges.count == 2)
            // Then its second commit: the new object's metadata, read after the listing.
            let filled = try await reader.next()
            #expect(filled.updatedIdentifiers.count == 1 && filled.insertedIdentifiers.isEmpty)
            #expect(second.currentChangeToken == first.currentChangeToken)

            // And the second's own commits still come in order after it.
            let a = try second.asset(path: "a.png")
            _ = try await second.read(a, range: 0..<10)
            let own = try await reader.next()
            #expect(own.updatedIdentifiers == [a.id])
        }
    }

    @Test("one library downloads an original while another waits for it, then uses its file")
    func oneDownloadPerOriginal() async throws {
        try await withHarness { harness in
            let data = testBytes(count: 2_000_000, seed: 174)
            try harness.put("big.png", data: data)
            let first = try await harness.open()
            try await first.sync()
            let second = try await harness.open()
            let asset = try first.asset(path: "big.png")
            harness.server.faults.add(
                .bandwidthLimit(bytesPerSecond: 4_000_000), keyPattern: "originals/big.png", method: "GET")
            async let one = first.data(for: asset, options: AssetLibrary.networkOptions())
            async let two = second.data(for: asset, options: AssetLibrary.networkOptions())
            let (a, b) = try await (one, two)
            #expect(a == data && b == data)
            #expect(harness.gets(of: "big.png").count == 1, "the second library used the first one's download")
        }
    }

    @Test("after close the folder opens again, with its catalog")
    func closeReleasesTheLock() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 100, seed: 171))
            let first = try await harness.open()
            try await first.sync()
            let token = first.currentChangeToken
            first.close()
            expectError(.libraryClosed) { try first.fetchAssets() }
            let second = try await harness.open()
            #expect(try second.fetchAssets().count == 1)
            #expect(second.currentChangeToken == token)
        }
    }

    @Test("a folder held exclusively (another library repairing it) is refused as locked, untouched")
    func heldFolderIsRefusedUntouched() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 100, seed: 172))
            let synced = try await harness.open()
            try await synced.sync()
            synced.close()
            let before = try FileManager.default.contentsOfDirectory(atPath: harness.storeURL.path).sorted()
            let fd = open(harness.storeURL.appendingPathComponent("library.lock").path, O_RDWR)
            defer { close(fd) }
            #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
            let busy = await expectError(.libraryBusy) {
                _ = try await AssetLibrary(configuration: harness.configuration())
            }
            #expect(busy?.path == harness.storeURL.path)
            #expect(try FileManager.default.contentsOfDirectory(atPath: harness.storeURL.path).sorted() == before)
            flock(fd, LOCK_UN)
            #expect(try await harness.open().fetchAssets().count == 1)
        }
    }
}
