import AWSSigV4
import FakeS3
import Foundation
import TestSupport
import Testing

/// One row of `album ls --json`.
private struct AlbumRow: Decodable, Equatable {
    var id: String
    var kind: String
    var title: String
    var path: String
    var count: Int
}

/// What `album ls --json` lists (smart albums included).
private func albumRows(_ fixture: CLIFixture, globals: [String]? = nil) async throws -> [AlbumRow] {
    let result = try await fixture.run("album ls", ["--json"], globals: globals)
    expectSuccess(result)
    return try JSONDecoder().decode([AlbumRow].self, from: result.stdoutData)
}

/// The id an `album create` printed.
private func createdID(_ result: CLIResult) -> String {
    result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Whether `text` holds something shaped like a collection's identifier (a lower-case UUID).
private func namesAnIdentifier(_ text: String) -> Bool {
    text.range(of: "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", options: .regularExpression) != nil
}

/// Album changes from the command line follow the rule of every change it makes (issue #53, items 3, 10, 12 and
/// 15): sent to the bucket before the command exits, kept with a note offline or out of reach, refused for another
/// bucket; titles other libraries would refuse are refused where they are typed; a name of two collections is
/// refused.
@Suite("cloudassets album: changes sent at once, titles and names checked", .heavy)
struct AlbumChangeTests {
    /// The globals of a second library on the fixture's bucket.
    private func otherLibrary(_ fixture: CLIFixture, _ name: String = "other") -> [String] {
        [
            "--store", fixture.folder.appendingPathComponent(name).path, "--endpoint",
            fixture.server.endpoint.absoluteString, "--bucket", CLIFixture.bucket,
        ]
    }

    @Test("create, add, rename and rm reach the bucket before the command exits; another library's sync sees each")
    func albumChangesAreSentBeforeTheCommandExits() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let other = otherLibrary(fixture)
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"], globals: other))
            let created = try await fixture.run("album create", ["Trips"])
            expectSuccess(created)
            let id = createdID(created)
            // In the bucket as the command exits, with no sync of this library since.
            #expect(
                try fixture.server.keys(bucket: CLIFixture.bucket, prefix: "collections/").contains { $0.contains(id) })
            let seen = try await fixture.run("sync", ["--no-thumbnails"], globals: other)
            expectSuccess(seen)
            #expect(try await albumRows(fixture, globals: other).contains { $0.id == id && $0.title == "Trips" })
            // The sync's summary line says it merged album changes.
            #expect(
                seen.stdout.range(of: "[1-9][0-9]* album changes merged", options: .regularExpression) != nil,
                "\(seen)")

            let asset = try #require(try await fixture.list().first)
            expectSuccess(try await fixture.run("album add", [id, asset.id]))
            expectSuccess(try await fixture.run("album rename", [id, "Voyages"]))
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"], globals: other))
            #expect(
                try await albumRows(fixture, globals: other).contains {
                    $0.id == id && $0.title == "Voyages" && $0.count == 1
                })
            expectSuccess(try await fixture.run("album rm", [id]))
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"], globals: other))
            #expect(try await albumRows(fixture, globals: other).allSatisfy { $0.kind == "smartAlbum" })
        }
    }

    @Test("offline, an album change or a favourite is kept here with a note; --no-wait records it only")
    func offlineChangesAreKeptWithANote() async throws {
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let asset = try #require(try await fixture.list().first)
            for (command, arguments) in [("album create", ["Offline"]), ("favorite", [asset.id])] {
                let result = try await fixture.run(command, arguments + ["--network-policy", "offline"])
                expectSuccess(result)
                #expect(result.stderr.contains("note:") && result.stderr.contains("offline"), "\(command): \(result)")
            }
            let quiet = try await fixture.run("album create", ["Later", "--no-wait"])
            expectSuccess(quiet)
            #expect(quiet.stderr.isEmpty, "\(quiet)")
            #expect(try fixture.server.keys(bucket: CLIFixture.bucket, prefix: "collections/").isEmpty)
            // The next sync sends them.
            try await fixture.sync(["--no-thumbnails"])
            #expect(try fixture.server.keys(bucket: CLIFixture.bucket, prefix: "collections/").count == 2)
        }
    }

    @Test("a bucket out of reach keeps an album change here, says so, and succeeds, as for favourites")
    func anUnreachableBucketKeepsTheChangeWithANote() async throws {
        try await withFixture(assets: 0) { fixture in
            // A library never synced (bound to no bucket) and an endpoint where nothing listens.
            let (fd, port) = try #require(LoopbackSocket.listen())
            close(fd)
            let store = fixture.folder.appendingPathComponent("unreached").path
            let nowhere = ["--store", store, "--endpoint", "http://127.0.0.1:\(port)", "--bucket", CLIFixture.bucket]
            let created = try await fixture.run("album create", ["Kept"], globals: nowhere, timeout: .seconds(120))
            expectSuccess(created)
            #expect(created.stderr.contains("could not reach the bucket yet"), "\(created)")
            let reachable = [
                "--store", store, "--endpoint", fixture.server.endpoint.absoluteString, "--bucket", CLIFixture.bucket,
            ]
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"], globals: reachable))
            #expect(
                try fixture.server.keys(bucket: CLIFixture.bucket, prefix: "collections/").contains {
                    $0.contains(createdID(created))
                })
        }
    }

    @Test("another endpoint than the library's: favorite, add and album changes give sync's binding error (12)")
    func anotherBucketIsRefusedByEveryWritingCommand() async throws {
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let asset = try #require(try await fixture.list().first)
            let file = fixture.folder.appendingPathComponent("new.jpg")
            try Data("new picture".utf8).write(to: file)
            let elsewhere = [
                "--store", fixture.store.path, "--endpoint", "http://127.0.0.2:9", "--bucket", "elsewhere",
            ]
            let sync = try await fixture.run("sync", globals: elsewhere)
            expectUserError(sync, status: 12, mentioning: "belongs to")
            for (command, arguments) in [
                ("favorite", [asset.id]), ("album create", ["Elsewhere"]), ("add", [file.path]), ("hide", [asset.id]),
            ] {
                let result = try await fixture.run(command, arguments, globals: elsewhere)
                expectUserError(result, status: 12, mentioning: "belongs to")
                #expect(result.stderr == sync.stderr, "\(command) says what sync says")
            }
            // Nothing was changed.
            #expect(try await fixture.list(["--favorite"]).isEmpty)
            #expect(try await fixture.list().count == 2)
            #expect(try await albumRows(fixture).allSatisfy { $0.kind == "smartAlbum" })
        }
    }

    @Test("a title other libraries would refuse is refused where it is typed: exit 2, one line, no made-up id")
    func titlesTheBucketRefusesAreRefusedLocally() async throws {
        try await withFixture(assets: 0) { fixture in
            let created = try await fixture.run("album create", ["Paris"])
            expectSuccess(created)
            let id = createdID(created)
            let tab = try await fixture.run("album rename", [id, "Paris\tFR"])
            expectUserError(tab, status: 2, mentioning: "control characters")
            let newline = try await fixture.run("album create", ["Two\nLines"])
            expectUserError(newline, status: 2, mentioning: "control characters")
            #expect(!namesAnIdentifier(newline.stderr), "\(newline)")
            for (title, problem) in [("", "empty"), ("  ", "empty"), (String(repeating: "a", count: 10_000), "bytes")] {
                for folder in [false, true] {
                    let result = try await fixture.run("album create", [title] + (folder ? ["--folder"] : []))
                    expectUserError(result, status: 2, mentioning: problem)
                    #expect(!namesAnIdentifier(result.stderr), "names no collection: \(result)")
                }
            }
            let rows = try await albumRows(fixture).filter { $0.kind != "smartAlbum" }
            #expect(rows.map(\.title) == ["Paris"])
            // Padded titles are trimmed, as before; 4096 bytes is the longest.
            expectSuccess(try await fixture.run("album rename", [id, "  Paris FR  "]))
            expectSuccess(try await fixture.run("album create", [String(repeating: "é", count: 2048)]))
            #expect(try await albumRows(fixture).contains { $0.id == id && $0.title == "Paris FR" })
        }
    }

    @Test("a name of both an album and a folder is refused by album rm, rename and move, with both ids")
    func aNameOfAnAlbumAndAFolderIsRefused() async throws {
        try await withFixture(assets: 0) { fixture in
            let folder = try await fixture.run("album create", ["Trips", "--folder"])
            let album = try await fixture.run("album create", ["Trips"])
            expectSuccess(folder)
            expectSuccess(album)
            let ids = [createdID(folder), createdID(album)]
            for (command, arguments) in [
                ("album rm", ["Trips"]), ("album rename", ["Trips", "Voyages"]), ("album move", ["Trips", "--top"]),
            ] {
                let result = try await fixture.run(command, arguments)
                expectUserError(result, status: 2, mentioning: "name one by its id")
                #expect(ids.allSatisfy(result.stderr.contains), "\(command) suggests both ids: \(result)")
            }
            #expect(Set(try await albumRows(fixture).filter { $0.kind != "smartAlbum" }.map(\.id)) == Set(ids))
            // By id, each is named alone.
            expectSuccess(try await fixture.run("album rm", [ids[1]]))
            let left = try await albumRows(fixture).filter { $0.kind != "smartAlbum" }
            #expect(left.map(\.id) == [ids[0]] && left.first?.kind == "folder")
            // Now that the name is the folder's alone, it names the folder.
            expectSuccess(try await fixture.run("album rm", ["Trips"]))
            #expect(try await albumRows(fixture).allSatisfy { $0.kind == "smartAlbum" })
        }
    }
}
