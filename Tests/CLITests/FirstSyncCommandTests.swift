import FakeS3
import Foundation
import TestSupport
import Testing

/// `cloudassets sync` of a bucket another tool wrote: the catalog is ready after the listing, the metadata is read
/// after it, and Ctrl-C in between keeps what was committed (issue 41).
@Suite("cloudassets sync: usable after the listing", .heavy)
struct FirstSyncCommandTests {
    @Test func ctrlCDuringTheMetadataReadKeepsTheCatalogAndTheNextSyncReadsTheRest() async throws {
        try await withFixture(assets: 0) { fixture in
            // Objects another tool wrote, without fields of ours; the HEADs of the last hundred do not answer before
            // the command is cut, so it is surely still reading metadata then.
            let count = 400
            for i in 0..<count {
                try fixture.server.putObject(
                    bucket: CLIFixture.bucket, key: String(format: "originals/other/%04d.dat", i),
                    data: Data("object \(i)".utf8))
            }
            let slow = fixture.server.faults.add(
                FaultRule(keyPattern: "originals/other/03*", method: "HEAD", fault: .latency(milliseconds: 60_000)))
            let first = try fixture.start("sync", ["--no-thumbnails"])
            let ready = await poll { first.stdout.text.contains("catalog ready: \(count) assets") }
            #expect(ready, "no \"catalog ready\" line; stdout: \(first.stdout.text) stderr: \(first.stderr.text)")
            // Cut at once: the slow heads would fail the sync after two 10 s waits, and a loaded machine can take
            // that long to start another process.
            first.interrupt()
            let interrupted = await first.finish()
            #expect(interrupted.status == 130, "\(interrupted)")
            #expect(interrupted.stderr.contains("the next sync goes on from there"), "\(interrupted)")
            // Every asset is listed, its metadata still to read.
            let listed = try await fixture.run("ls", [])
            expectSuccess(listed)
            #expect(listed.stdout.split(separator: "\n").count == count + 1, "\(listed.stdout)")

            let status = try await fixture.run("status", [])
            expectSuccess(status)
            #expect(status.stdout.contains("still to read (the next sync reads them)"), "\(status.stdout)")

            fixture.server.faults.remove(slow)
            let second = try await fixture.run("sync", ["--no-thumbnails"])
            expectSuccess(second)
            #expect(second.stdout.contains("read beyond the listing"), "\(second.stdout)")
            // The catalog was ready before its metadata: the CLI says when that is complete too.
            #expect(second.stdout.contains("metadata complete: \(count) of \(count) assets"), "\(second.stdout)")
            let after = try await fixture.run("status", ["--json"])
            #expect(after.stdout.contains("\"metadataPending\":0"), "\(after.stdout)")
        }
    }
}
