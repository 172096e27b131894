import CloudAssets
import FakeS3
import Foundation
import Testing

/// One open library per folder.
@Suite("Library: folder lock", .timeLimit(.minutes(1)))
struct LibraryLockTests {
    @Test("opening a folder that is already open is refused with locked, and the first library keeps working")
    func secondOpenIsRefused() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 100, seed: 170))
            let first = try await harness.open()
            try await first.sync()
            await #expect(throws: AssetLibraryError.locked(path: harness.storeURL.path)) {
                _ = try await AssetLibrary(configuration: harness.configuration())
            }
            #expect(try first.fetchAssets().count == 1)
            #expect(try await first.read(try first.asset(path: "a.png"), range: 0..<10).count == 10)
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
            #expect(throws: AssetLibraryError.closed) { try first.fetchAssets() }
            let second = try await harness.open()
            #expect(try second.fetchAssets().count == 1)
            #expect(second.currentChangeToken == token)
        }
    }

    @Test("a refused open leaves the folder's database untouched")
    func refusedOpenLeavesDatabaseUntouched() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 100, seed: 172))
            let first = try await harness.open()
            try await first.sync()
            let before = try FileManager.default.contentsOfDirectory(atPath: harness.storeURL.path).sorted()
            for _ in 0..<3 {
                await #expect(throws: AssetLibraryError.self) {
                    _ = try await AssetLibrary(configuration: harness.configuration())
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: harness.storeURL.path).sorted() == before)
            try harness.put("b.png", data: testBytes(count: 100, seed: 173))
            #expect(try await first.sync().inserted == 1)
        }
    }
}
