import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("cloudassets get", .heavy)
struct GetCommandTests {
    @Test func getWithNetworkDownloadsTheOriginalAndMakesItFull() async throws {
        try await withFixture(assets: 6) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)

            let result = try await fixture.run("get", [target.id, "--network"])
            expectSuccess(result)
            // One line per asset: id, state, path of the local original.
            let fields = result.stdout.trimmingCharacters(in: .newlines).split(separator: "\t").map(String.init)
            #expect(fields.count == 3 && fields[0] == target.id && fields[1] == "full", "\(result)")
            let local = try Data(contentsOf: URL(fileURLWithPath: fields.last ?? ""))
            expectSameBytes(local, try fixture.objectData(target.key), "the local original")

            let after = try await fixture.rowsByID()
            #expect(after[target.id]?.state == "full")
            #expect(after.values.filter { $0.state == "full" }.count == 1, "only the requested asset is downloaded")
        }
    }

    @Test func getWithAPrefixDownloadsEveryAssetUnderItAndNoOther() async throws {
        try await withFixture(assets: 6) { fixture in
            try await fixture.sync()
            let all = try await fixture.list()
            // The sample's keys share their first characters after `originals/` in groups: take the first
            // asset's first two characters as the prefix (with and without the originals prefix: the same set).
            let first = try #require(all.first)
            let name = String(first.key.dropFirst("originals/".count))
            let prefix = String(name.prefix(2))
            let expected = Set(all.filter { $0.key.hasPrefix("originals/" + prefix) }.map(\.id))
            expectSuccess(try await fixture.run("get", ["--network", "--prefix", prefix]))
            let full = Set(try await fixture.rowsByID().filter { $0.value.state == "full" }.map(\.key))
            #expect(full == expected)
            // `--prefix ""`: every asset; `-o` refuses a prefix (one asset only).
            expectSuccess(try await fixture.run("get", ["--network", "--prefix", ""]))
            #expect(try await fixture.rowsByID().values.allSatisfy { $0.state == "full" })
            let refused = try await fixture.run("get", ["--prefix", "", "-o", "x.bin"])
            #expect(refused.status != 0 && refused.stderr.contains("-o takes exactly one asset"), "\(refused)")
        }
    }

    @Test func getNamesAnAssetByKeyAsWellAsById() async throws {
        try await withFixture(assets: 4) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().last)
            let output = fixture.folder.appendingPathComponent("by-key.bin")
            expectSuccess(try await fixture.run("get", [target.key, "--network", "-o", output.path]))
            expectSameBytes(try Data(contentsOf: output), try fixture.objectData(target.key), "the -o file")
            // The copy came straight from the bucket: the library keeps none unless asked (--keep).
            #expect(try await fixture.rowsByID()[target.id]?.state != "full")
            let kept = fixture.folder.appendingPathComponent("kept.bin")
            expectSuccess(try await fixture.run("get", [target.key, "--network", "--keep", "-o", kept.path]))
            expectSameBytes(try Data(contentsOf: kept), try fixture.objectData(target.key), "the --keep file")
            #expect(try await fixture.rowsByID()[target.id]?.state == "full")
        }
    }

    @Test func getOutputFileHoldsTheObjectsExactBytes() async throws {
        try await withFixture(assets: 8) { fixture in
            try await fixture.sync()
            // The largest asset, so the copy is more than a trivial buffer.
            let target = try #require(try await fixture.list(["--sort=-size", "--limit", "1"]).first)
            let output = fixture.folder.appendingPathComponent("copy.out")
            let result = try await fixture.run("get", [target.id, "--network", "-o", output.path])
            expectSuccess(result)
            let copied = try Data(contentsOf: output)
            #expect(copied.count == Int(target.size))
            expectSameBytes(copied, try fixture.objectData(target.key), "the -o file")

            // `-o -` writes the same bytes to standard output, and nothing else.
            let piped = try await fixture.run("get", [target.id, "--network", "-o", "-"])
            expectSuccess(piped)
            expectSameBytes(piped.stdoutData, copied, "standard output")
        }
    }

    @Test func getWithoutNetworkOnACloudAssetExitsSixSayingItIsInTheCloud() async throws {
        try await withFixture(assets: 4) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let target = try #require(try await fixture.list().first)
            #expect(target.state == "cloudOnly")
            fixture.server.requestLog.clear()

            let result = try await fixture.run("get", [target.id])
            expectUserError(result, status: 6, mentioning: "in the cloud")
            #expect(!fixture.server.requestLog.entries().contains { $0.method == "GET" && $0.key == target.key })
            #expect(try await fixture.rowsByID()[target.id]?.state == target.state, "nothing changed")
        }
    }

    @Test func getOfALocalOriginalWorksWithoutNetwork() async throws {
        try await withFixture(assets: 4) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            expectSuccess(try await fixture.run("get", [target.id, "--network"]))
            fixture.server.requestLog.clear()

            let output = fixture.folder.appendingPathComponent("local.out")
            expectSuccess(try await fixture.run("get", [target.id, "-o", output.path]))
            expectSameBytes(try Data(contentsOf: output), try fixture.objectData(target.key), "the -o file")
            #expect(!fixture.server.requestLog.entries().contains { $0.method == "GET" && $0.key == target.key })
        }
    }

    @Test func getRangeReadsExactlyThoseBytesAndLeavesTheAssetPartial() async throws {
        try await withFixture(assets: 6) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list(["--sort=-size", "--limit", "1"]).first)
            #expect(target.size > 5_000)
            let output = fixture.folder.appendingPathComponent("range.out")
            fixture.server.requestLog.clear()

            let result = try await fixture.run(
                "get", [target.id, "--network", "--range", "1000-4999", "-o", output.path])
            expectSuccess(result)
            let original = try fixture.objectData(target.key)
            expectSameBytes(try Data(contentsOf: output), original.subdata(in: 1000..<5000), "the range")
            #expect(try await fixture.rowsByID()[target.id]?.state == "partial")
            let gets = fixture.server.requestLog.entries().filter { $0.method == "GET" && $0.key == target.key }
            #expect(!gets.isEmpty && gets.allSatisfy { $0.rangeHeader != nil }, "ranged reads only: \(gets)")
        }
    }

    @Test func getRangeWithoutNetworkOnACloudAssetExitsSix() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            expectUserError(
                try await fixture.run("get", [target.id, "--range", "0-99"]), status: 6, mentioning: "in the cloud")
        }
    }

    @Test func getWithAMalformedRangeIsAUsageError() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            expectUserError(
                try await fixture.run("get", [target.id, "--range", "9-3"]), status: 2, mentioning: "range")
            #expect(try await fixture.rowsByID()[target.id]?.state == target.state)
        }
    }
}

@Suite("cloudassets get: a stalled download", .heavy)
struct StalledGetTests {
    @Test func aDownloadThatStallsIsReportedWhileTheLibraryWaitsForTheServer() async throws {
        try await withFixture(assets: 1, large: 1, largeSize: 8 << 20) { fixture in
            try await fixture.sync()
            let large = try #require(try await fixture.list(["--sort=-size", "--limit", "1"]).first)
            fixture.server.faults.add(.stallAfter(bytes: 1 << 20), keyPattern: large.key, method: "GET", times: 1)
            let get = try fixture.start("get", [large.id, "--network"])
            let reported = await get.stderr.wait { $0.contains("\(large.key): no data for ") }
            #expect(reported, "stderr: \(get.stderr.text)")
            get.interrupt()
            let result = await get.finish()
            #expect(result.status == 130, "\(result)")
        }
    }
}

@Suite("cloudassets get --output-folder", .heavy)
struct GetOutputFolderTests {
    @Test func everyAssetIsWrittenBelowTheFolderByItsKeyAndNothingIsReplaced() async throws {
        try await withFixture(assets: 6) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let rows = try await fixture.list()
            let folder = fixture.folder.appendingPathComponent("export")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let got = try await fixture.run("get", ["--network", "--prefix", "", "--output-folder", folder.path])
            expectSuccess(got)
            for row in rows {
                let file = folder.appendingPathComponent(String(row.key.dropFirst("originals/".count)))
                expectSameBytes(try Data(contentsOf: file), try fixture.objectData(row.key), row.key)
            }
            // The copies came straight from the bucket: the library keeps none.
            #expect(try await fixture.rowsByID().values.allSatisfy { $0.state != "full" })

            // Again: every file is there already, so nothing is replaced and the command fails saying so.
            let first = try #require(rows.first)
            let kept = folder.appendingPathComponent(String(first.key.dropFirst("originals/".count)))
            try Data("mine".utf8).write(to: kept)
            let again = try await fixture.run("get", ["--network", first.id, "--output-folder", folder.path])
            #expect(again.status != 0 && again.stderr.contains("already there"), "\(again)")
            #expect(try String(contentsOf: kept, encoding: .utf8) == "mine")
        }
    }

    @Test func aKeyThatWouldLeaveTheFolderIsRefused() async throws {
        try await withFixture(assets: 1) { fixture in
            try fixture.server.putObject(
                bucket: CLIFixture.bucket, key: "originals/a/../../escape.jpg", data: Data("x".utf8))
            try await fixture.sync(["--no-thumbnails"])
            let hostile = try #require(try await fixture.list().first { $0.key.contains("..") })
            let folder = fixture.folder.appendingPathComponent("export")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let refused = try await fixture.run("get", ["--network", hostile.id, "--output-folder", folder.path])
            #expect(refused.status != 0 && refused.stderr.contains("no path below the output folder"), "\(refused)")
            #expect(!FileManager.default.fileExists(atPath: fixture.folder.appendingPathComponent("escape.jpg").path))
            let wrong = try await fixture.run("get", [hostile.id, "--output-folder", folder.path, "-o", "x"])
            #expect(wrong.status != 0 && wrong.stderr.contains("--output-folder goes without -o"), "\(wrong)")
        }
    }
}
