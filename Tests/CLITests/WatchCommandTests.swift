import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("cloudassets watch", .heavy)
struct WatchCommandTests {
    struct ChangeLine: Decodable {
        var token: Int64
        var inserted: [String]
        var changed: [String]
        var contentChanged: [String]
        var removed: [String]
    }

    @Test func watchPrintsAJSONLineForEachRemoteChangeUntilInterrupted() async throws {
        try await withFixture(assets: 6) { fixture in
            try await fixture.sync()
            let before = try await fixture.list()
            let removedRow = try #require(before.first)
            let template = try fixture.objectData(removedRow.key)

            let watch = try fixture.start("watch", ["--interval", "1"])
            let newKey = "originals/2031/01/IMG_WATCH.png"
            try fixture.server.putObject(
                bucket: CLIFixture.bucket, key: newKey, data: template, contentType: "image/png",
                metadata: ["creation-date": "2031-01-02T03:04:05Z", "media-type": "image"])
            try fixture.server.deleteObject(bucket: CLIFixture.bucket, key: removedRow.key)

            // Both changes are picked up by the next sync(s); wait for lines reporting them.
            let removedID = removedRow.id
            let reported = await watch.stdout.wait { text in
                let lines = text.split(separator: "\n").compactMap {
                    try? JSONDecoder().decode(ChangeLine.self, from: Data($0.utf8))
                }
                return lines.contains { $0.removed.contains(removedID) } && lines.contains { !$0.inserted.isEmpty }
            }
            #expect(reported, "watch output: \(watch.stdout.text) stderr: \(watch.stderr.text)")
            watch.interrupt()
            let result = await watch.finish()
            #expect(result.status == 130 && !result.killedBySignal, "\(result)")

            let lines = try result.stdout.split(separator: "\n").map {
                try JSONDecoder().decode(ChangeLine.self, from: Data($0.utf8))
            }
            #expect(lines.map(\.token) == lines.map(\.token).sorted(), "in commit order")
            let inserted = Set(lines.flatMap(\.inserted))
            let after = try await fixture.list()
            let newRow = try #require(after.first { $0.key == newKey })
            #expect(inserted == [newRow.id], "the inserted id is the new object's asset")
            #expect(Set(lines.flatMap(\.removed)) == [removedID])
            #expect(!after.contains { $0.id == removedID })
        }
    }

    @Test func watchReportsEachFailedSyncRetriesAndPrintsRecoveryThenKeepsWatching() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let template = try fixture.objectData(try #require(try await fixture.list().first).key)
            // Every listing answers 500 (the client's own retries included): each sync fails.
            let failing = fixture.server.faults.add(FaultRule(keyPattern: "", method: "GET", fault: .internalError))
            let watch = try fixture.start(
                "watch", ["--interval", "0.2", "--retry-base", "0.05"], timeout: .seconds(90))
            let failuresSeen = await watch.stderr.wait { text in
                text.split(separator: "\n").filter { $0.hasPrefix("error: sync failed") }.count >= 2
            }
            #expect(failuresSeen, "stderr: \(watch.stderr.text)")
            fixture.server.faults.remove(failing)
            let recovered = await watch.stderr.wait { $0.contains("sync recovered after ") }
            #expect(recovered, "stderr: \(watch.stderr.text)")

            // It keeps syncing: a new object becomes an insertion line.
            try fixture.server.putObject(
                bucket: CLIFixture.bucket, key: "originals/2032/01/IMG_AFTER.png", data: template,
                contentType: "image/png", metadata: ["media-type": "image"])
            let inserted = await watch.stdout.wait { text in
                text.split(separator: "\n").contains {
                    (try? JSONDecoder().decode(ChangeLine.self, from: Data($0.utf8)))?.inserted.isEmpty == false
                }
            }
            #expect(inserted, "stdout: \(watch.stdout.text) stderr: \(watch.stderr.text)")
            watch.interrupt()
            let result = await watch.finish()
            #expect(result.status == 130, "\(result)")
            let lines = result.stderrLines
            #expect(lines.first?.hasPrefix("watching ") == true, "\(lines)")
            #expect(
                lines.dropFirst().allSatisfy { $0.hasPrefix("error: ") || $0.hasPrefix("sync recovered after ") },
                "\(lines)")
            let failures = lines.filter { $0.hasPrefix("error: sync failed") }
            #expect(failures.allSatisfy { $0.contains("server error") && $0.contains("retrying in") }, "\(failures)")
            let recovery = try #require(lines.first { $0.hasPrefix("sync recovered after ") })
            let count = Int(recovery.dropFirst("sync recovered after ".count).prefix { $0.isNumber })
            #expect(count == failures.count, "the recovery line counts the failures: \(lines)")
        }
    }
}
