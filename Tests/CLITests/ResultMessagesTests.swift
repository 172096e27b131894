import FakeS3
import Foundation
import TestSupport
import Testing

/// What commands print and how they parse: the key `add` stored, `add -q`'s results, `evict` of an import not
/// yet uploaded, `ls` and hidden assets, `exit-codes` in the help, an edit that changes nothing, values that
/// start with `-`, and out-of-range edit values.
@Suite("cloudassets results, messages and values", .heavy)
struct ResultMessagesTests {
    private struct Row: Decodable {
        var id: String
        var key: String
        var hidden: Bool
    }

    private func rows(_ fixture: CLIFixture, _ arguments: [String] = []) async throws -> [Row] {
        let result = try await fixture.run("ls", ["--json"] + arguments)
        expectSuccess(result)
        return try JSONDecoder().decode([Row].self, from: result.stdoutData)
    }

    @Test func addPrintsTheKeyTheOriginalIsStoredUnderAfterANameConflict() async throws {
        try await withFixture(assets: 0) { fixture in
            // The photo was taken in September 2020: its planned key is originals/2020/09/race.jpg, where another
            // tool's object already is (not yet known to the library).
            let planned = "originals/2020/09/race.jpg"
            try fixture.server.putObject(bucket: CLIFixture.bucket, key: planned, data: Data("another tool's".utf8))
            let file = fixture.folder.appendingPathComponent("race.jpg")
            let bytes = try ImageCommandTests.cameraJPEG()
            try bytes.write(to: file)
            let added = try await fixture.run("add", [file.path])
            expectSuccess(added)
            let fields = added.stdout.trimmingCharacters(in: .newlines).split(separator: "\t").map(String.init)
            #expect(fields.count == 2, "\(added)")
            let printed = fields.last ?? ""
            #expect(printed.hasPrefix("originals/2020/09/race-") && printed.hasSuffix(".jpg"), "\(added)")
            #expect(try fixture.objectData(planned) == Data("another tool's".utf8), "the other object is kept")
            #expect(try fixture.objectData(printed) == bytes, "the key printed holds the file")
            #expect(try await rows(fixture).first { $0.id == fields.first }?.key == printed)
        }
    }

    @Test func addQuietPrintsItsResultLines() async throws {
        try await withFixture(assets: 0) { fixture in
            let file = fixture.folder.appendingPathComponent("quiet.jpg")
            try Data(repeating: 5, count: 3000).write(to: file)
            let added = try await fixture.run("add", ["-q", file.path])
            expectSuccess(added)
            let lines = added.stdout.split(separator: "\n")
            #expect(
                lines.count == 1 && lines[0].hasPrefix("1\toriginals/") && lines[0].hasSuffix("/quiet.jpg"), "\(added)")
            #expect(added.stderr.isEmpty, "\(added)")
        }
    }

    @Test func evictOfAnImportNotYetUploadedSaysItWasKept() async throws {
        try await withFixture(assets: 0) { fixture in
            let file = fixture.folder.appendingPathComponent("pending.jpg")
            try Data(repeating: 4, count: 3000).write(to: file)
            expectSuccess(try await fixture.run("add", [file.path, "--network-policy", "offline"]))
            let row = try #require(try await rows(fixture).first)
            let evicted = try await fixture.run("evict", [row.id])
            expectSuccess(evicted)
            #expect(evicted.stdout == "evicted 0 asset(s)\nkept 1 asset(s) not yet in the bucket\n", "\(evicted)")
            #expect(try await fixture.rowsByID()[row.id]?.state == "full", "the only copy is kept")
        }
    }

    @Test func lsLeavesHiddenAssetsOutUnlessAsked() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            expectSuccess(try await fixture.run("hide", ["2"]))
            #expect(try await rows(fixture).map(\.id) == ["1", "3"], "hidden assets leave ls, as help hide says")
            #expect(try await rows(fixture, ["--include-hidden"]).map(\.id) == ["1", "2", "3"])
            #expect(try await rows(fixture, ["--hidden"]).map(\.id) == ["2"])
            let help = try await fixture.run("help", ["hide"], globals: [])
            #expect(help.stdout.contains("left out of default listings"), "\(help)")
        }
    }

    @Test func theHelpListsExitCodes() async throws {
        let help = try await CommandLineParsingTests.run(["--help"])
        expectSuccess(help)
        #expect(help.stdout.contains("exit-codes"), "\(help)")
    }

    @Test func anEditByWholeTurnsChangesNothingAndSaysSo() async throws {
        try await withFixture(assets: 1) { fixture in
            let jpeg = try ImageCommandTests.cameraJPEG()
            try fixture.server.putObject(bucket: CLIFixture.bucket, key: ImageCommandTests.key, data: jpeg)
            try await fixture.sync(["--no-thumbnails"])
            let row = try #require(try await fixture.list().first { $0.key == ImageCommandTests.key })
            for turns in ["360", "-720", "0"] {
                let edit = try await fixture.run("edit", [row.id, "--network", "--rotate", turns])
                expectSuccess(edit)
                #expect(edit.stdout == "\(row.id)\tnothing to change\n", "\(edit)")
            }
            #expect(try fixture.server.keys(bucket: CLIFixture.bucket, prefix: "edits/").isEmpty, "no revision")
            let get = try await fixture.run("get", [row.id, "--network", "-o", "-"])
            expectSameBytes(get.stdoutData, jpeg, "the asset still shows its original")
        }
    }

    @Test(arguments: [
        (["edit", "1", "--network", "--exposure", "10"], "--exposure"),
        (["edit", "1", "--network", "--chroma-key", "00ff00:2"], "--chroma-key"),
        (["edit", "1", "--network", "--rotate", "45"], "--rotate"),
        (["edit", "1", "--network", "--crop", "-1,0,10,10"], "not -1,0,10,10"),
        (["ls", "--limit", "-1"], "not -1"),
    ])
    func valuesOutOfRangeAreUsageErrorsAndNegativeNumbersAreValues(arguments: [String], fragment: String)
        async throws
    {
        // The camera photo is the only asset: id 1.
        try await withFixture(assets: 0) { fixture in
            let jpeg = try ImageCommandTests.cameraJPEG()
            try fixture.server.putObject(bucket: CLIFixture.bucket, key: ImageCommandTests.key, data: jpeg)
            try await fixture.sync(["--no-thumbnails"])
            let result = try await fixture.run(arguments[0], Array(arguments.dropFirst()))
            expectUserError(result, status: 2, mentioning: fragment)
            #expect(try fixture.server.keys(bucket: CLIFixture.bucket, prefix: "edits/").isEmpty)
        }
    }
}
