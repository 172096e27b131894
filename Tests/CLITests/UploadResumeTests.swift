import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("cloudassets add: an upload killed with -9 resumes without sending an acknowledged part again", .heavy)
struct UploadResumeTests {
    @Test func killedUploadResumesFromItsAcknowledgedParts() async throws {
        try await withFixture(assets: 1) { fixture in
            // 100 MiB: 13 parts of 8 MiB, 4 in flight.
            let file = fixture.folder.appendingPathComponent("big.mov")
            var bytes = Data(count: 100 << 20)
            bytes.withUnsafeMutableBytes { raw in
                let words = raw.bindMemory(to: UInt64.self)
                var state: UInt64 = 42
                for i in words.indices {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    words[i] = state
                }
            }
            try bytes.write(to: file)
            // After the first four parts, every part is refused with SlowDown and "retry after 30 s": the process
            // is waiting when it is killed.
            let rule = fixture.server.faults.add(
                .slowDown(retryAfterSeconds: 30), keyPattern: "originals/*", method: "PUT", afterRequests: 4)
            let child = try fixture.start("add", [file.path], timeout: .seconds(120))
            let deadline = ContinuousClock.now + .seconds(60)
            while fixture.server.requestLog.entries().filter({ $0.isUploadPart && $0.status == 503 }).count < 4 {
                #expect(ContinuousClock.now < deadline, "the upload never reached the refused parts")
                if ContinuousClock.now >= deadline { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            child.send(SIGKILL)
            let killed = await child.finish()
            #expect(killed.killedBySignal)
            fixture.server.faults.remove(rule)
            let before = fixture.server.requestLog.entries()
            let acknowledged = Set(before.filter { $0.isUploadPart && $0.status == 200 }.compactMap(\.partNumber))
            #expect(acknowledged.count >= 4)
            let uploadIDs = Set(before.compactMap(\.uploadId))
            #expect(uploadIDs.count == 1)

            // The next command that uploads (a sync) resumes the same multipart upload.
            try await fixture.sync(["--no-thumbnails"])
            let after = fixture.server.requestLog.entries().dropFirst(before.count)
            let resent = after.filter { $0.isUploadPart && acknowledged.contains($0.partNumber ?? 0) }
            #expect(resent.isEmpty, "acknowledged parts sent again: \(resent.compactMap(\.partNumber))")
            #expect(after.contains { $0.method == "GET" && $0.uploadId != nil }, "the resume lists the parts")
            #expect(Set(after.compactMap(\.uploadId)).isSubset(of: uploadIDs), "the same upload continues")
            let rows = try await fixture.list(["--uploaded", "--prefix", "originals/"])
            let key = try #require(rows.first { $0.size == Int64(bytes.count) }?.key)
            #expect(try fixture.objectData(key) == bytes)
            #expect(
                try fixture.server.multipartUploads(bucket: CLIFixture.bucket).isEmpty, "nothing left to accumulate")
        }
    }
}
