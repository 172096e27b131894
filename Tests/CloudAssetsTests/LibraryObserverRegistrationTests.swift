import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

/// When an observer starts hearing about changes.
@Suite("Library: observer registration", .heavy, .timeLimit(.minutes(1)))
struct LibraryObserverRegistrationTests {
    /// Holds the library's delivery queue inside `libraryDidChange` until released.
    final class BlockingObserver: LibraryChangeObserver {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        func libraryDidChange(_ change: LibraryChange) {
            entered.signal()
            release.wait()
        }

        func waitUntilEntered() async {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    self.entered.wait()
                    continuation.resume()
                }
            }
        }
    }

    @Test("an observer registered after a commit is not told about that commit")
    func observerRegisteredAfterCommitMissesIt() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 100, seed: 230))
            try harness.put("b.png", data: testBytes(count: 100, seed: 231))
            let library = try await harness.open()
            try await library.sync(fetchThumbnails: false)
            library.networkPolicy = .offline  // pinning then only marks the assets
            let blocker = BlockingObserver()
            library.register(blocker)
            try library.pin([try library.asset(path: "a.png")])
            await blocker.waitUntilEntered()  // the delivery queue is now held
            try library.pin([try library.asset(path: "b.png")])  // committed, its delivery queued

            let late = ChangeRecorder()
            library.register(late)
            var changes = late.stream.makeAsyncIterator()
            library.unregister(blocker)
            blocker.release.signal()
            blocker.release.signal()
            try library.unpin([try library.asset(path: "a.png")])
            let expected = library.currentChangeToken
            let first = try #require(await changes.next())
            #expect(first.token == expected)
        }
    }

    @Test("an observer registered before a commit is told about it, once, in commit order")
    func observerRegisteredBeforeCommitsSeesThemInOrder() async throws {
        try await withHarness { harness in
            try harness.put("a.png", data: testBytes(count: 100, seed: 232))
            let library = try await harness.open()
            let recorder = ChangeRecorder()
            library.register(recorder)
            var changes = recorder.stream.makeAsyncIterator()
            try await library.sync(fetchThumbnails: false)
            let afterSync = library.currentChangeToken
            library.networkPolicy = .offline
            let asset = try library.asset(path: "a.png")
            try library.pin([asset])
            let afterPin = library.currentChangeToken
            try library.unpin([asset])
            let afterUnpin = library.currentChangeToken
            // The sync commits twice (the listing, then the object's metadata read after it): every change up to
            // the unpin arrives once, in commit order.
            var tokens: [ChangeToken] = []
            while tokens.last != afterUnpin { tokens.append(try #require(await changes.next()).token) }
            #expect(tokens.count == 4 && tokens.suffix(3) == [afterSync, afterPin, afterUnpin])
            #expect(zip(tokens, tokens.dropFirst()).allSatisfy { $0 < $1 })
        }
    }
}
