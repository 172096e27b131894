import FakeS3
import Foundation
import Testing

@Suite("cloudassets watch")
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
}
