import Foundation
import Testing

@testable import CloudAssets

/// Another library's commit reaches this library's observers promptly, every time: the catalog watcher wakes on
/// the commit signal the store writes after each commit, never on the write-ahead log (written before the commit
/// is visible, so a reader woken by it could see the previous state and miss the commit until the next one).
@Suite("Commit signal")
struct LibraryCommitSignalTests {
    @Test("every commit of another library is delivered without a later commit to wake the watcher")
    func everyCommitIsDelivered() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 100, seed: 901))
            let writer = try await harness.open()
            try await writer.sync(fetchThumbnails: false)
            let watcher = try await harness.open()
            let asset = try writer.asset(path: "a.png")
            let delivered = DeliveredTokens()
            watcher.register(delivered)
            // Each commit is the last one until the watcher has delivered it: a missed wake-up is never covered
            // by a later commit, so it shows as a timeout.
            for round in 0..<300 {
                try await writer.performChanges { $0.setFavorite(round % 2 == 0, for: [asset]) }
                let token = writer.currentChangeToken
                let deadline = ContinuousClock.now + .seconds(5)
                while delivered.last.withLock({ $0 }) < token && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(1))
                }
                #expect(delivered.last.withLock { $0 } >= token, "commit \(round) was not delivered within 5 s")
            }
            watcher.unregister(delivered)
            let signal = harness.storeURL.appendingPathComponent("library.commit-signal")
            #expect(try Data(contentsOf: signal).count == 1, "the signal file stays one byte long")
        }
    }
}

/// The token of the last change delivered to it.
private final class DeliveredTokens: LibraryChangeObserver {
    let last = Shared(ChangeToken(rawValue: 0))
    func libraryDidChange(_ change: LibraryChange) { last.withLock { $0 = max($0, change.token) } }
}

/// The watcher itself: it wakes on the commit signal only, never on a write to the catalog's files (which SQLite
/// makes before the commit is visible).
@Suite("Catalog watcher")
struct CatalogWatcherSignalTests {
    @Test("a write to the write-ahead log does not wake the watcher; the commit signal written after it does")
    func wakesOnSignalOnly() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "CatalogWatcher-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let signal = folder.appendingPathComponent("library.commit-signal")
        // What each wake-up saw: whether the signal had been written yet.
        let wakes = Shared<[Bool]>([])
        let watcher = try #require(
            CatalogWatcher(folder: folder) {
                wakes.withLock { $0.append(FileManager.default.fileExists(atPath: signal.path)) }
            })
        defer { watcher.stop() }
        // Many writes to the catalog's files, as a large commit makes before it is visible: none may wake it.
        for frame in 0..<50 {
            try Data("frame \(frame)".utf8).write(to: folder.appendingPathComponent("library.sqlite-wal"))
            try Data("index \(frame)".utf8).write(to: folder.appendingPathComponent("library.sqlite-shm"))
        }
        try Data([1]).write(to: signal)
        let deadline = ContinuousClock.now + .seconds(5)
        while wakes.current.isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(!wakes.current.isEmpty, "the signal woke the watcher")
        #expect(wakes.current.allSatisfy { $0 }, "every wake-up came after the signal: \(wakes.current)")
    }

    @Test("inotify records are split into their names")
    func eventNames() {
        func record(_ name: String, padded: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 12)
            withUnsafeBytes(of: UInt32(padded).littleEndian) { bytes += $0 }
            return bytes + Array(name.utf8) + [UInt8](repeating: 0, count: padded - name.utf8.count)
        }
        let buffer = record("library.sqlite-wal", padded: 32) + record("library.commit-signal", padded: 32)
        #expect(
            CatalogWatcher.names(in: buffer[...]).map { String(decoding: $0, as: UTF8.self) } == [
                "library.sqlite-wal", "library.commit-signal",
            ])
    }
}
