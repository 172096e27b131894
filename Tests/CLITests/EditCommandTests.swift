import FakeS3
import Foundation
import TestSupport
import Testing

/// One asset of `ls --json` with the write path's fields.
private struct SharedRow: Decodable, Equatable {
    var id: String
    var key: String
    var favorite: Bool
    var hidden: Bool
    var trashed: Bool
    var uploadState: String
    var state: String
}

@Suite("cloudassets add, rm, restore, favorite, hide, empty-trash", .heavy)
struct EditCommandTests {
    private func rows(_ fixture: CLIFixture, _ arguments: [String] = [], store: URL? = nil) async throws
        -> [SharedRow]
    {
        var globals = fixture.globalArguments
        if let store { globals[1] = store.path }
        let result = try await fixture.run("ls", ["--json"] + arguments, globals: globals)
        expectSuccess(result)
        return try JSONDecoder().decode([SharedRow].self, from: result.stdoutData)
    }

    @Test func addUploadsTheFileAndASecondLibraryReceivesIt() async throws {
        try await withFixture(assets: 2) { fixture in
            let file = fixture.folder.appendingPathComponent("holiday.jpg")
            let bytes = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try bytes.write(to: file)
            let added = try await fixture.run("add", [file.path, file.path])
            expectSuccess(added)
            let lines = added.stdout.split(separator: "\n")
            #expect(lines.count == 2 && lines[0] == lines[1], "the same bytes twice are one asset: \(added.stdout)")
            let key = try #require(lines.first?.split(separator: "\t").last.map(String.init))
            #expect(try fixture.objectData(key) == bytes)
            #expect(FileManager.default.fileExists(atPath: file.path))
            let mine = try await rows(fixture).first { $0.key == key }
            #expect(mine?.uploadState == "uploaded" && mine?.state == "full")

            let other = fixture.folder.appendingPathComponent("other")
            var globals = fixture.globalArguments
            globals[1] = other.path
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"], globals: globals))
            let theirs = try await rows(fixture, store: other).first { $0.key == key }
            #expect(theirs?.state == "cloudOnly" && theirs?.uploadState == "uploaded")
        }
    }

    @Test func addingToABucketThatDoesNotExistIsOneErrorAndKeepsTheImports() async throws {
        try await withFixture(assets: 1) { fixture in
            // More files than uploads run at once (32).
            let files = try (0..<40).map { index in
                let file = fixture.folder.appendingPathComponent("n\(index).jpg")
                try Data(repeating: UInt8(index), count: 500 + index).write(to: file)
                return file.path
            }
            var globals = fixture.globalArguments
            globals[globals.count - 1] = "missing-bucket"
            let result = try await fixture.run("add", ["--quiet"] + files, globals: globals)
            // The imports are made: their result lines are printed (--quiet keeps results), then the one error.
            #expect(result.status == 14, "\(result)")
            #expect(result.stdout.split(separator: "\n").count == 40, "\(result)")
            #expect(result.stderrLines.count == 1, "\(result)")
            #expect(result.stderr.hasPrefix("error: 40 uploads failed: The bucket does not exist"), "\(result)")
            // Requests stopped at the first failure: at most those already in flight, not one per file.
            #expect(fixture.server.requestLog.entries().filter { $0.method == "PUT" }.count <= 32)
            let status = try await fixture.run("status", [], globals: globals)
            #expect(status.stdout.contains("40 failed"), "\(status)")
        }
    }

    @Test func addWithMoveTakesTheFileAndAMissingFileIsAUsageError() async throws {
        try await withFixture(assets: 1) { fixture in
            let file = fixture.folder.appendingPathComponent("moved.png")
            try Data(repeating: 7, count: 1000).write(to: file)
            expectSuccess(try await fixture.run("add", ["--move", file.path]))
            #expect(!FileManager.default.fileExists(atPath: file.path))
            let missing = try await fixture.run("add", [fixture.folder.appendingPathComponent("nope.jpg").path])
            expectUserError(missing, status: 2, mentioning: "nope.jpg")
        }
    }

    @Test func editsAndTrashReachAnotherLibrary() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let other = fixture.folder.appendingPathComponent("other")
            var otherGlobals = fixture.globalArguments
            otherGlobals[1] = other.path
            fixture.server.requestLog.clear()
            expectSuccess(try await fixture.run("favorite", ["1"]))
            // One pass: the sidecar read, merged and written once, one journal entry (the HEAD asks whether the
            // original is still there before a first sidecar is written), nothing sent twice.
            let sent = fixture.server.requestLog.entries().filter { $0.key != nil }.map { entry in
                entry.method + " " + (entry.key!.hasPrefix("journal/") ? "journal/" : entry.key!)
            }
            let favoriteKey = try #require(try await rows(fixture).first { $0.id == "1" }?.key)
            let sidecar = "metadata/" + favoriteKey.dropFirst("originals/".count) + ".json"
            #expect(sent == ["GET \(sidecar)", "HEAD \(favoriteKey)", "PUT \(sidecar)", "PUT journal/"], "\(sent)")
            expectSuccess(try await fixture.run("hide", ["2"]))
            expectSuccess(try await fixture.run("rm", ["3"]))
            #expect(try await rows(fixture).map(\.id) == ["1"], "hidden and trashed assets leave ls")
            #expect(try await rows(fixture, ["--include-hidden"]).map(\.id) == ["1", "2"])
            #expect(try await rows(fixture, ["--trashed"]).map(\.id) == ["3"])
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"], globals: otherGlobals))
            let theirs = try await rows(fixture, ["--include-hidden"], store: other)
            #expect(theirs.count == 2)
            #expect(theirs.first { $0.favorite }?.key == (try await rows(fixture)).first { $0.id == "1" }?.key)
            #expect(theirs.filter(\.hidden).count == 1)
            let trashedKey = try #require(try await rows(fixture, ["--trashed"]).first?.key)
            expectSuccess(try await fixture.run("restore", [trashedKey], globals: otherGlobals))
            try await fixture.sync(["--no-thumbnails"])
            #expect(try await rows(fixture, ["--include-hidden"]).count == 3)
            expectSuccess(try await fixture.run("rm", ["3"]))
            let purged = try await fixture.run("empty-trash")
            expectSuccess(purged)
            #expect(purged.stdout.contains("purged 1"))
            #expect(try fixture.server.objectData(bucket: CLIFixture.bucket, key: trashedKey) == nil)
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"], globals: otherGlobals))
            #expect(try await rows(fixture, ["--trashed"], store: other).isEmpty)
            #expect(try await rows(fixture, ["--include-hidden"], store: other).count == 2)
        }
    }

    @Test func aRestoreOfWhatAnotherLibraryPurgedFailsAndLeavesNoSidecar() async throws {
        try await withFixture(assets: 4) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let other = fixture.folder.appendingPathComponent("other")
            var otherGlobals = fixture.globalArguments
            otherGlobals[1] = other.path
            expectSuccess(try await fixture.run("rm", ["1", "2", "3"]))
            let trashedKeys = try await rows(fixture, ["--trashed"]).map(\.key)
            #expect(trashedKeys.count == 3)
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"], globals: otherGlobals))
            #expect(try await rows(fixture, ["--trashed"], store: other).count == 3, "the other library sees the trash")
            // This library empties the trash; the other, not synced since, restores the three.
            let purged = try await fixture.run("empty-trash")
            expectSuccess(purged)
            #expect(purged.stdout.contains("purged 3"))
            let restore = try await fixture.run("restore", trashedKeys, globals: otherGlobals)
            expectUserError(restore, status: 8, mentioning: "could not restore 3 of 3")
            #expect(restore.stderr.contains("emptied the trash"), "\(restore.stderr)")
            #expect(
                try fixture.server.keys(bucket: CLIFixture.bucket, prefix: "metadata/").isEmpty, "no orphan sidecar")
            #expect(try await rows(fixture, ["--include-hidden", "--trashed"], store: other).isEmpty)
        }
    }

    @Test func anImportMadeOfflineIsListedAsNotUploadedAndStatusCountsIt() async throws {
        try await withFixture(assets: 1) { fixture in
            let file = fixture.folder.appendingPathComponent("offline.jpg")
            try Data(repeating: 3, count: 5000).write(to: file)
            expectSuccess(try await fixture.run("add", [file.path, "--network-policy", "offline"]))
            let pending = try await rows(fixture, ["--not-uploaded"])
            #expect(pending.map(\.uploadState) == ["pending"])
            let status = try await fixture.run("status", ["--json"])
            expectSuccess(status)
            #expect(status.stdout.contains("\"pending\":1"))
            try await fixture.sync(["--no-thumbnails"])
            #expect(try await rows(fixture, ["--not-uploaded"]).isEmpty)
            #expect(try await rows(fixture, ["--uploaded"]).count == 2)
        }
    }
}
