import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Another library's commit reaches this library's observers promptly, every time: the catalog watcher wakes on
/// the commit signal the store writes after each commit, never on the write-ahead log (written before the commit
/// is visible, so a reader woken by it could see the previous state and miss the commit until the next one).
@Suite("Commit signal", .heavy)
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

/// The watcher itself: it wakes on the commit signal and on a catalog file closed after writing (a writer gone),
/// never on a write to the catalog's files (which SQLite makes before the commit is visible).
@Suite("Catalog watcher", .heavy)
struct CatalogWatcherSignalTests {
    @Test("writes to the write-ahead log do not wake the watcher; the signal, and the log's close, do")
    func wakesOnSignalOnly() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "CatalogWatcher-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let signal = folder.appendingPathComponent("library.commit-signal")
        // The catalog's log, open for writing the way a writer connection keeps it.
        let walURL = folder.appendingPathComponent("library.sqlite-wal")
        #expect(FileManager.default.createFile(atPath: walURL.path, contents: nil))
        let wal = try FileHandle(forWritingTo: walURL)
        // What each wake-up saw: the phase it came in (0: log writes only, 1: signal written, 2: log closed).
        let phase = Shared(0)
        let wakes = Shared<[Int]>([])
        let watcher = try #require(CatalogWatcher(folder: folder) { wakes.withLock { $0.append(phase.current) } })
        defer { watcher.stop() }
        func waitForWake(_ count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(5)
            while wakes.current.count < count && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        // Many writes to the log, as a large commit makes before it is visible: none may wake it.
        for frame in 0..<50 { try wal.write(contentsOf: Data("frame \(frame)".utf8)) }
        phase.withLock { $0 = 1 }
        try Data([1]).write(to: signal)
        try await waitForWake(1)
        #expect(wakes.current.first == 1, "the first wake-up came after the signal: \(wakes.current)")
        // The writer goes away (a process killed between its commit and its signal): its close wakes the watcher.
        let seen = wakes.current.count
        phase.withLock { $0 = 2 }
        try wal.close()
        try await waitForWake(seen + 1)
        #expect(wakes.current.last == 2, "the log's close woke the watcher: \(wakes.current)")
        #expect(!wakes.current.contains(0), "no wake-up before the signal: \(wakes.current)")
    }

    @Test("without inotify (its per-user limit reached) the watcher polls the signal and still wakes on it")
    func pollsWithoutInotify() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "CatalogWatcher-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let signal = folder.appendingPathComponent("library.commit-signal")
        let wakes = Shared(0)
        let watcher = try #require(CatalogWatcher(folder: folder, usesInotify: false) { wakes.withLock { $0 += 1 } })
        defer { watcher.stop() }
        // Each write of the signal wakes it (a write seen half-done may wake it twice: at least once each).
        var seen = 0
        for round in 1...3 {
            try Data([UInt8(round)]).write(to: signal)
            let deadline = ContinuousClock.now + .seconds(5)
            while wakes.current <= seen && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(wakes.current > seen, "signal \(round) woke the polling watcher")
            seen = wakes.current
        }
        // Nothing written: no more wake-ups.
        try await Task.sleep(for: .milliseconds(Int(CatalogWatcher.pollInterval) * 4))
        #expect(wakes.current == seen)
    }

    @Test("inotify records are split into masks and names; signal and closed catalog files wake it")
    func eventNames() {
        func record(_ mask: Int32, _ name: String, padded: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 4)
            withUnsafeBytes(of: UInt32(mask).littleEndian) { bytes += $0 }
            bytes += [UInt8](repeating: 0, count: 4)
            withUnsafeBytes(of: UInt32(padded).littleEndian) { bytes += $0 }
            return bytes + Array(name.utf8) + [UInt8](repeating: 0, count: padded - name.utf8.count)
        }
        let buffer =
            record(IN_MODIFY, "library.sqlite-wal", padded: 32) + record(IN_MODIFY, "library.commit-signal", padded: 32)
            + record(IN_CLOSE_WRITE, "library.sqlite-wal", padded: 32) + record(IN_CLOSE_WRITE, "other.txt", padded: 16)
        let events = CatalogWatcher.events(in: buffer[...])
        #expect(
            events.map { String(decoding: $0.name, as: UTF8.self) } == [
                "library.sqlite-wal", "library.commit-signal", "library.sqlite-wal", "other.txt",
            ])
        #expect(events.map(CatalogWatcher.wakes) == [false, true, true, false])
    }
}
