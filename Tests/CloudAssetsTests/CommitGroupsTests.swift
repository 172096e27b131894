import AssetStore
import Dispatch
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

@Suite("Library: commits in groups", .heavy, .serialized, .timeLimit(.minutes(1)))
struct CommitGroupsTests {
    /// A library with `count` assets, and their row identifiers.
    static func library(_ harness: LibraryHarness, count: Int) async throws -> (AssetLibrary, [Int64]) {
        for index in 0..<count {
            try harness.put("p\(index).png", data: testBytes(count: 10, seed: UInt64(300 + index)))
        }
        let library = try await harness.open()
        try await library.sync()
        return (library, try library.fetchAssets().map(\.rowID))
    }

    /// Starts a commit that holds its transaction open until `release` is signalled, and returns once it is being
    /// written (nothing waits, a transaction is under way). It blocks one thread of the concurrency pool meanwhile:
    /// the suite is serialized, so that two such tests never block a two-core machine's whole pool.
    static func holdTransaction(
        _ groups: CommitGroups, _ library: AssetLibrary, id: Int64, release: DispatchSemaphore
    ) async -> Task<Void, any Error> {
        let task = Task {
            try await groups.commit(in: library.catalog) { tx in
                release.wait()
                _ = try tx.update(id) { $0.isFavorite = true }
            }
        }
        while groups.queue != (0, true) { await Task.yield() }
        return task
    }

    static func favorite(_ groups: CommitGroups, _ library: AssetLibrary, _ id: Int64) -> Task<Void, any Error> {
        Task { try await groups.commit(in: library.catalog) { tx in _ = try tx.update(id) { $0.isFavorite = true } } }
    }

    @Test("commits that arrive while a transaction is written go together into the next one: one change")
    func waitingCommitsShareOneTransaction() async throws {
        try await withHarness { harness in
            let (library, ids) = try await Self.library(harness, count: 6)
            let groups = CommitGroups()
            let before = library.currentChangeToken.rawValue
            let release = DispatchSemaphore(value: 0)
            let first = await Self.holdTransaction(groups, library, id: ids[0], release: release)
            let rest = ids.dropFirst().map { Self.favorite(groups, library, $0) }
            while groups.queue.waiting < rest.count { await Task.yield() }
            release.signal()
            try await first.value
            for task in rest { try await task.value }
            // Two transactions for six commits: the first, then the five that waited.
            #expect(library.currentChangeToken.rawValue - before == 2)
            #expect(try library.fetchAssets().allSatisfy(\.isFavorite))
            // The writer ends its pass after it answered the last group.
            await groups.idle()
            #expect(groups.queue == (0, false))
        }
    }

    @Test("a commit that fails in a group fails alone; the others are written")
    func oneFailingCommitDoesNotFailItsGroup() async throws {
        try await withHarness { harness in
            let (library, ids) = try await Self.library(harness, count: 4)
            let groups = CommitGroups()
            let release = DispatchSemaphore(value: 0)
            let first = await Self.holdTransaction(groups, library, id: ids[0], release: release)
            let good = ids.dropFirst().map { Self.favorite(groups, library, $0) }
            let bad = Task {
                try await groups.commit(in: library.catalog) { tx in
                    _ = try tx.update(ids[1]) { $0.isHidden = true }
                    throw AssetRequestError.objectChanged(key: "p1.png")
                }
            }
            while groups.queue.waiting < good.count + 1 { await Task.yield() }
            release.signal()
            try await first.value
            for task in good { try await task.value }
            await #expect(throws: AssetRequestError.self) { try await bad.value }
            var options = FetchOptions()
            options.includeHiddenAssets = true
            let assets = try library.fetchAssets(options)
            #expect(assets.allSatisfy { $0.isFavorite })
            #expect(!assets.contains { $0.isHidden })  // the failed commit wrote nothing
        }
    }
}
