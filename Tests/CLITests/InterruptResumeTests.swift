import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("cloudassets Ctrl-C and resume", .heavy)
struct InterruptResumeTests {
    static let largeKey = "originals/large/VID_L001.mov"

    @Test func interruptedDownloadExits130KeepsThePartFileAndTheNextGetResumesWithRangeAndIfMatch() async throws {
        try await withFixture(assets: 2, large: 1, largeSize: 32 << 20) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let large = try #require(try await fixture.list().first { $0.key == Self.largeKey })
            let object = try fixture.objectData(Self.largeKey)
            let partFile = fixture.store.appendingPathComponent("originals/\(large.id).mov.part")

            // Slow enough (32 s) that the download is surely still running when interrupted, even when this task
            // waits seconds for a thread on a loaded machine.
            let slow = fixture.server.faults.add(
                FaultRule(keyPattern: Self.largeKey, method: "GET", fault: .bandwidthLimit(bytesPerSecond: 1 << 20)))
            let first = try fixture.start("get", [large.id, "--network"])
            // Generous: on a loaded machine the process may take long to start; the poll ends as soon as it holds.
            let arrived = await poll(deadline: .seconds(60)) { Self.size(of: partFile) >= 1 << 20 }
            #expect(arrived, "the .part file never grew; stderr: \(first.stderr.text)")
            first.interrupt()
            let interrupted = await first.finish()

            #expect(interrupted.status == 130 && !interrupted.killedBySignal, "\(interrupted)")
            #expect(interrupted.stderr.contains("interrupted"), "\(interrupted)")
            #expect(!interrupted.stderr.contains("Fatal error"))
            let kept = Self.size(of: partFile)
            #expect(kept > 0, "the partial download is kept for resume")
            #expect(try await fixture.rowsByID()[large.id]?.state != "full")
            let sidecarKept = FileManager.default.fileExists(atPath: partFile.path + ".json")

            fixture.server.faults.remove(slow)
            fixture.server.requestLog.clear()
            let output = fixture.folder.appendingPathComponent("large.out")
            let second = try await fixture.run("get", [large.id, "--network", "--keep", "-o", output.path])
            expectSuccess(second)
            let gets = fixture.server.requestLog.entries().filter { $0.method == "GET" && $0.key == Self.largeKey }

            // The downloader records which version the .part holds as soon as the response names it, so the
            // interrupted download resumes: one ranged GET with If-Match for the missing bytes only.
            #expect(sidecarKept, "the resume sidecar is kept beside the .part file")
            let resumed = try #require(gets.first, "no GET of the large object on resume")
            let range = try #require(resumed.rangeHeader, "the resumed GET must carry Range: \(resumed)")
            #expect(range.hasPrefix("bytes=") && range.hasSuffix("-"), "open-ended range, got \(range)")
            let start = Int64(range.dropFirst("bytes=".count).dropLast()) ?? 0
            #expect(start > 0 && start <= kept, "resume starts after the bytes kept, got \(range)")
            #expect(resumed.ifMatch?.isEmpty == false, "the resumed GET must carry If-Match")
            #expect(resumed.bytesSent == Int64(object.count) - start, "only the missing bytes are sent")
            #expect(gets.count == 1, "one GET completes the object: \(gets)")

            expectSameBytes(try Data(contentsOf: output), object, "the resumed download")
            #expect(try await fixture.rowsByID()[large.id]?.state == "full")
            #expect(!FileManager.default.fileExists(atPath: partFile.path), "the .part file is gone once complete")
        }
    }

    static func size(of url: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? 0
    }
}
