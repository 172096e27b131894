import FakeS3
import Foundation
import TestSupport
import Testing

/// The defects that lost data, tried as the user met them: a folder that is not a library, a library moved or
/// reached another way, another bucket, an output path inside the library; and what `get -o` and `pin --no-wait`
/// leave behind.
@Suite("cloudassets keeps what is not its own", .heavy)
struct DataSafetyCommandTests {
    @Test(arguments: ["status", "ls", "evict"])
    func aFolderThatIsNotALibraryIsRefusedAndKept(command: String) async throws {
        try await withFixture(assets: 2) { fixture in
            let folder = fixture.folder.appendingPathComponent("u")
            for name in ["originals/my.jpg", "thumbnails/t.jpg", "partial/p.bin"] {
                let url = folder.appendingPathComponent(name)
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data("mine".utf8).write(to: url)
            }
            let arguments = command == "evict" ? ["1"] : []
            let result = try await fixture.run(
                command, arguments,
                globals: ["--store", folder.path, "--endpoint", fixture.server.endpoint.absoluteString])
            expectUserError(result, status: 2, mentioning: "not a CloudAssets library")
            for name in ["originals/my.jpg", "thumbnails/t.jpg", "partial/p.bin"] {
                #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == Data("mine".utf8), "\(name)")
            }
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("library.lock").path))
        }
    }

    @Test func aLibraryMovedOrReachedByAnotherSpellingKeepsItsOriginals() async throws {
        try await withFixture(assets: 4) { fixture in
            try await fixture.sync()
            expectSuccess(try await fixture.run("get", ["1", "2", "--network"]))
            expectSuccess(try await fixture.run("pin", ["2"]))
            let moved = fixture.folder.appendingPathComponent("moved")
            try FileManager.default.moveItem(at: fixture.store, to: moved)
            let link = fixture.folder.appendingPathComponent("link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: moved)
            for spelling in [moved.path, moved.path + "/", fixture.folder.path + "/./moved/", link.path] {
                let result = try await fixture.run(
                    "ls", ["--json"], globals: ["--store", spelling, "--network-policy", "offline"])
                expectSuccess(result)
                let rows = try JSONDecoder().decode([AssetRow].self, from: result.stdoutData)
                let full = Set(rows.filter { $0.state == "full" }.map(\.id))
                #expect(full == ["1", "2"], "\(spelling)")
                #expect(rows.first { $0.id == "2" }?.pinned == true)
            }
        }
    }

    @Test func syncingALibraryAgainstAnotherBucketIsRefused() async throws {
        try await withFixture(assets: 5) { fixture in
            try await fixture.sync()
            expectSuccess(try await fixture.run("pin", ["1"]))
            try fixture.server.createBucket("empty")
            let globals = [
                "--store", fixture.store.path, "--endpoint", fixture.server.endpoint.absoluteString, "--bucket",
                "empty",
            ]
            let result = try await fixture.run("sync", globals: globals)
            expectUserError(result, status: 12, mentioning: "s3://photos/")
            #expect(result.stderr.contains("s3://empty/"), "the message names both buckets")
            #expect(result.stderr.contains("--rebind"), "the message names the CLI's flag, not the library's setting")
            let rows = try await fixture.list()
            #expect(rows.count == 5)
            #expect(rows.first { $0.id == "1" }?.state == "full")

            // Moved deliberately: the empty bucket's sync removes every asset, and from then on the library
            // belongs to it.
            expectSuccess(try await fixture.run("sync", ["--rebind"], globals: globals))
            #expect(try await fixture.list().isEmpty)
            expectUserError(try await fixture.run("sync"), status: 12, mentioning: "s3://empty/")
        }
    }

    @Test func getRefusesAnOutputInsideTheLibrary() async throws {
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync()
            let catalog = fixture.store.appendingPathComponent("library.sqlite")
            func inode() throws -> Int? {
                (try FileManager.default.attributesOfItem(atPath: catalog.path)[.systemFileNumber] as? NSNumber)?
                    .intValue
            }
            let before = try inode()
            let link = fixture.folder.appendingPathComponent("inside")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: fixture.store)
            let targets = [
                catalog.path, fixture.store.path + "/originals/1.jpg", fixture.store.path + "/./x.bin",
                link.path + "/library.sqlite",
            ]
            for target in targets {
                let result = try await fixture.run("get", ["1", "--network", "-o", target])
                expectUserError(result, status: 12, mentioning: "inside the library")
            }
            #expect(try inode() == before, "the catalog was not replaced")
            let names = try FileManager.default.contentsOfDirectory(atPath: fixture.store.path)
            #expect(!names.contains { $0.hasSuffix(".tmp") || $0 == "x.bin" }, "\(names)")
            #expect(try await fixture.list().count == 2)
        }
    }

    @Test func aRangePastTheEndIsNotSatisfiable() async throws {
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            let result = try await fixture.run(
                "get", [target.id, "--network", "--range", "\(target.size)-\(target.size + 7)"])
            expectUserError(result, status: 11, mentioning: "range not satisfiable")
            // A range that runs past the end is served up to the end, as HTTP does.
            let tail = try await fixture.run(
                "get", [target.id, "--network", "--range", "\(target.size - 3)-\(target.size + 7)", "-o", "-"])
            expectSuccess(tail)
            #expect(tail.stdoutData == (try fixture.objectData(target.key)).suffix(3))
        }
    }

    @Test func pinWithoutWaitingLeavesNothingHalfDone() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let result = try await fixture.run("pin", ["1", "--no-wait"])
            expectSuccess(result)
            #expect(result.stdout.contains("next pin"))
            for command in ["ls", "status", "sync"] { expectSuccess(try await fixture.run(command)) }
            let originals = try FileManager.default.contentsOfDirectory(
                atPath: fixture.store.appendingPathComponent("originals").path)
            #expect(originals.isEmpty, "no download was started and abandoned: \(originals)")
            #expect(try await fixture.rowsByID()["1"]?.pinned == true)
            // A pin that waits downloads every pinned original, the earlier one too.
            expectSuccess(try await fixture.run("pin", ["2"]))
            let rows = try await fixture.rowsByID()
            #expect(rows["1"]?.state == "full" && rows["2"]?.state == "full")
        }
    }

    @Test func getOutputStaysWithinBoundedMemoryAndStreamsStandardOutput() async throws {
        let size: Int64 = 160 << 20
        try await withFixture(assets: 1, large: 1, largeSize: size) { fixture in
            try await fixture.sync()
            let large = try #require(try await fixture.list(["--sort=-size", "--limit", "1"]).first)
            #expect(large.size == size)
            let expected = try fixture.objectData(large.key)
            // Slow enough that the download takes 20 s: bytes must reach standard output long before it ends, by a
            // margin that holds while the rest of the suite keeps both cores busy.
            fixture.server.faults.add(.bandwidthLimit(bytesPerSecond: 8 << 20), keyPattern: large.key, method: "GET")
            let streaming = try fixture.start(
                "get", [large.id, "--network", "-o", "-"], environment: ["CLOUDASSETS_REPORT_PEAK_RSS": "1"],
                timeout: .seconds(120))
            #expect(await streaming.stdout.wait(forBytes: 4 << 20))
            #expect(!streaming.hasExited, "the first bytes arrived while the download was still running")
            let streamed = await streaming.finish()
            expectSuccess(streamed)
            #expect(streamed.stdoutData == expected)
            fixture.server.faults.removeAll()

            let output = fixture.folder.appendingPathComponent("copy.bin")
            let copied = try await fixture.run(
                "get", [large.id, "-o", output.path], environment: ["CLOUDASSETS_REPORT_PEAK_RSS": "1"])
            expectSuccess(copied)
            #expect(try Data(contentsOf: output) == expected)
            let ranged = try await fixture.run(
                "get", [large.id, "--range", "0-\(size - 1)", "-o", output.path + ".range"],
                environment: ["CLOUDASSETS_REPORT_PEAK_RSS": "1"])
            expectSuccess(ranged)
            #expect(try Data(contentsOf: URL(fileURLWithPath: output.path + ".range")) == expected)
            for (name, run) in [("streamed", streamed), ("copied", copied), ("ranged", ranged)] {
                let line = try #require(run.stderrLines.first { $0.hasPrefix("peak RSS: ") })
                let kib = Int(line.dropFirst("peak RSS: ".count).split(separator: " ").first ?? "") ?? .max
                #expect(kib < 64 * 1024, "\(name): peak RSS \(kib) KiB for a \(size >> 20) MiB original")
            }
        }
    }
}
