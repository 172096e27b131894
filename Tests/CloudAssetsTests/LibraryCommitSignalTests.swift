import CloudAssets
import Foundation
import Testing

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
