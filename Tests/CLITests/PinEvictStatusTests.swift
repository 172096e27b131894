import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("cloudassets pin, unpin, evict, status", .heavy)
struct PinEvictStatusTests {
    @Test func pinDownloadsAndMarksPinnedThenUnpinKeepsTheBytes() async throws {
        try await withFixture(assets: 5) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)

            expectSuccess(try await fixture.run("pin", [target.id]))
            let pinned = try #require(try await fixture.rowsByID()[target.id])
            #expect(pinned.pinned && pinned.state == "full")
            #expect(try await fixture.list(["--pinned"]).map(\.id) == [target.id])

            expectSuccess(try await fixture.run("unpin", [target.id]))
            let unpinned = try #require(try await fixture.rowsByID()[target.id])
            #expect(!unpinned.pinned && unpinned.state == "full")
        }
    }

    @Test func evictTakesAFullAssetBackToItsThumbnailState() async throws {
        try await withFixture(assets: 8) { fixture in
            try await fixture.sync()
            let rows = try await fixture.list()
            // One asset with a thumbnail and, when the sample has one, one without.
            let targets = [rows.first { $0.state == "thumbnail" }, rows.first { $0.state == "cloudOnly" }]
                .compactMap { $0 }
            #expect(!targets.isEmpty)
            for target in targets {
                expectSuccess(try await fixture.run("get", [target.id, "--network"]))
                #expect(try await fixture.rowsByID()[target.id]?.state == "full")

                expectSuccess(try await fixture.run("evict", [target.id]))
                #expect(try await fixture.rowsByID()[target.id]?.state == target.state, "back to \(target.state)")
            }
        }
    }

    @Test func evictingAPinnedAssetIsRefusedAndKeepsIt() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            expectSuccess(try await fixture.run("pin", [target.id]))

            let result = try await fixture.run("evict", [target.id])
            #expect(result.status != 0)
            #expect(result.stderrLines.count == 1 && result.stderr.contains("pinned"), "\(result)")
            let row = try #require(try await fixture.rowsByID()[target.id])
            #expect(row.pinned && row.state == "full")
        }
    }

    @Test func statusJSONCountsStatesPinsCacheAndLastSync() async throws {
        try await withFixture(assets: 10) { fixture in
            struct Status: Decodable {
                var assets: Int
                var states: [String: Int]
                var pinned: Int
                var cacheBytes: Int64
                var lastSync: String?
            }
            let before = try await fixture.run("status", ["--json"])
            expectSuccess(before)
            let empty = try JSONDecoder().decode(Status.self, from: Data(before.stdout.utf8))
            #expect(empty.assets == 0 && empty.cacheBytes == 0)
            #expect(empty.lastSync == nil)

            try await fixture.sync()
            let rows = try await fixture.list()
            expectSuccess(try await fixture.run("pin", [rows[0].id]))
            expectSuccess(try await fixture.run("get", [rows[1].id, "--network"]))

            let result = try await fixture.run("status", ["--json"])
            expectSuccess(result)
            let status = try JSONDecoder().decode(Status.self, from: Data(result.stdout.utf8))
            let after = try await fixture.list()
            #expect(status.assets == after.count)
            #expect(
                status.states.filter { $0.value > 0 } == Dictionary(grouping: after, by: \.state).mapValues(\.count))
            #expect(status.pinned == 1)
            #expect(status.cacheBytes == rows[0].size + rows[1].size)
            let lastSync = try #require(status.lastSync)
            #expect(ISO8601DateFormatter().date(from: lastSync) != nil, "\(lastSync)")
        }
    }
}
