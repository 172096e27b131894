import Foundation
import TestSupport
import Testing

/// One row of `album ls --json`.
private struct CollectionRow: Decodable, Equatable {
    var id: String
    var kind: String
    var title: String
    var path: String
    var count: Int
}

/// One asset of `ls --json` (its id and key).
private struct AlbumAssetRow: Decodable, Equatable {
    var id: String
    var key: String
}

@Suite("cloudassets album, ls --album, add --album", .heavy)
struct AlbumCommandTests {
    private func collections(_ fixture: CLIFixture) async throws -> [CollectionRow] {
        let result = try await fixture.run("album ls", ["--json"])
        expectSuccess(result)
        return try JSONDecoder().decode([CollectionRow].self, from: result.stdoutData)
    }

    private func members(_ fixture: CLIFixture, _ album: String, _ extra: [String] = []) async throws -> [String] {
        let result = try await fixture.run("ls", ["--json", "--album", album] + extra)
        expectSuccess(result)
        return try JSONDecoder().decode([AlbumAssetRow].self, from: result.stdoutData).map(\.id)
    }

    @Test("albums in folders: create, add in order, insert, move, list, rename, delete — and their errors")
    func albumsEndToEnd() async throws {
        try await withFixture(assets: 5) { fixture in
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"]))
            let ids = try JSONDecoder().decode(
                [AlbumAssetRow].self, from: try await fixture.run("ls", ["--json"]).stdoutData
            ).map(\.id)
            #expect(ids.count == 5)
            let folder = try await fixture.run("album create", ["Trips", "--folder"])
            expectSuccess(folder)
            let rome = try await fixture.run("album create", ["Rome", "--in", "Trips"])
            expectSuccess(rome)
            let romeID = rome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            expectSuccess(try await fixture.run("album add", ["Trips/Rome", ids[3], ids[1], ids[4]]))
            expectSuccess(try await fixture.run("album add", ["Rome", ids[0], "--at", "1"]))
            #expect(try await members(fixture, "Rome") == [ids[3], ids[0], ids[1], ids[4]])
            expectSuccess(try await fixture.run("album move", [romeID, ids[4], "--to", "0"]))
            #expect(try await members(fixture, "Rome") == [ids[4], ids[3], ids[0], ids[1]])
            // --sort replaces the album's order; --limit keeps its first ones.
            #expect(try await members(fixture, "Rome", ["--limit", "2"]) == [ids[4], ids[3]])
            #expect(try await members(fixture, "Rome", ["--sort", "key"]).count == 4)
            expectSuccess(try await fixture.run("album remove", ["Rome", ids[3]]))
            #expect(try await members(fixture, "Rome") == [ids[4], ids[0], ids[1]])

            let rows = try await collections(fixture)
            #expect(rows.filter { $0.kind != "smartAlbum" }.map(\.path) == ["Trips", "Trips/Rome"])
            #expect(rows.first { $0.id == romeID }?.count == 3)
            #expect(rows.contains { $0.kind == "smartAlbum" && $0.title == "Favorites" })

            // Errors: a smart album cannot be changed, an unknown album is named, a bad position is refused.
            let smart = try await fixture.run("album add", ["Favorites", ids[0]])
            #expect(smart.status == 1 && smart.stderr.contains("smart album"))
            let unknown = try await fixture.run("album add", ["Paris", ids[0]])
            #expect(unknown.status != 0 && unknown.stderr.contains("no album Paris"))
            let badMove = try await fixture.run("album move", ["Rome", ids[0], "--to", "7"])
            #expect(badMove.status != 0 && badMove.stderr.contains("past the end"))
            let usage = try await fixture.run("album move", ["Rome", "--to", "1", "--top"])
            #expect(usage.status == 2)
            #expect(try await members(fixture, "Rome") == [ids[4], ids[0], ids[1]])

            expectSuccess(try await fixture.run("album rename", ["Rome", "Roma"]))
            expectSuccess(try await fixture.run("album move", ["Roma", "--top"]))
            expectSuccess(try await fixture.run("album rm", ["Trips"]))
            let after = try await collections(fixture).filter { $0.kind != "smartAlbum" }
            #expect(after.map(\.path) == ["Roma"] && after.first?.id == romeID)
            // Deleting the album leaves its assets in the library.
            expectSuccess(try await fixture.run("album rm", ["Roma"]))
            #expect(try await collections(fixture).allSatisfy { $0.kind == "smartAlbum" })
            #expect(
                try JSONDecoder().decode([AlbumAssetRow].self, from: try await fixture.run("ls", ["--json"]).stdoutData)
                    .count == 5)
        }
    }

    @Test("add --album imports files into an album in the order given")
    func addIntoAnAlbum() async throws {
        try await withFixture(assets: 1) { fixture in
            expectSuccess(try await fixture.run("album create", ["Imports"]))
            let files = try (0..<3).map { index in
                let file = fixture.folder.appendingPathComponent("z\(2 - index).jpg")
                try Data("picture \(index)".utf8).write(to: file)
                return file.path
            }
            let added = try await fixture.run("add", ["--album", "Imports"] + files)
            expectSuccess(added)
            let created = added.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
            #expect(created.count == 3)
            #expect(try await members(fixture, "Imports") == created)
            let missing = try await fixture.run("add", ["--album", "Nowhere", files[0]])
            #expect(missing.status != 0 && missing.stderr.contains("no album Nowhere"))
        }
    }

    @Test("CLOUDASSETS_KEY_FOLDERS=1: the bucket's folders of keys are listed and fetched, and cannot be changed")
    func foldersOfKeysFromTheCommandLine() async throws {
        try await withFixture(assets: 1) { fixture in
            for name in ["Rome/r2.jpg", "Rome/r1.jpg", "t0.jpg"] {
                try fixture.server.putObject(
                    bucket: CLIFixture.bucket, key: "originals/Trips/" + name, data: Data(name.utf8))
            }
            let shown = ["CLOUDASSETS_KEY_FOLDERS": "1"]
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"], environment: shown))
            let listed = try await fixture.run("album ls", ["--json"], environment: shown)
            expectSuccess(listed)
            let rows = try JSONDecoder().decode([CollectionRow].self, from: listed.stdoutData)
                .filter { $0.kind != "smartAlbum" && $0.path.hasPrefix("Trips") }  // the sample's own: 2016/10
            #expect(
                rows == [
                    CollectionRow(
                        id: "keyfolder:originals/Trips/", kind: "keyFolder", title: "Trips", path: "Trips", count: 2),
                    CollectionRow(
                        id: "keys:originals/Trips/Rome/", kind: "keyAlbum", title: "Rome", path: "Trips/Rome", count: 2),
                    CollectionRow(
                        id: "keys:originals/Trips/", kind: "keyAlbum", title: "Trips", path: "Trips/Trips", count: 1),
                ], "\(rows)")
            let members = try await fixture.run("ls", ["--json", "--album", "Trips/Rome"], environment: shown)
            expectSuccess(members)
            #expect(
                try JSONDecoder().decode([AlbumAssetRow].self, from: members.stdoutData).map(\.key) == [
                    "originals/Trips/Rome/r1.jpg", "originals/Trips/Rome/r2.jpg",
                ])
            let refused = try await fixture.run("album rename", ["Trips/Rome", "Roma"], environment: shown)
            #expect(refused.status != 0 && refused.stderr.contains("follows the bucket's keys"), "\(refused)")
            #expect(refused.stderr.split(separator: "\n").count == 1)
            // Without the setting: none of them.
            let plain = try await collections(fixture)
            #expect(plain.allSatisfy { $0.kind == "smartAlbum" }, "\(plain)")
        }
    }
}
