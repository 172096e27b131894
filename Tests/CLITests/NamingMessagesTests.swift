import Foundation
import TestSupport
import Testing

/// The messages of a name that does not name what a command can act on: an asset in the trash, a position out of
/// an album's range, a user album under a smart album's title. Each says what is the matter and what to type.
@Suite("cloudassets naming messages", .heavy)
struct NamingMessagesTests {
    private struct Row: Decodable {
        var id: String
        var key: String
    }

    private func ids(_ fixture: CLIFixture) async throws -> [String] {
        let result = try await fixture.run("ls", ["--json"])
        expectSuccess(result)
        return try JSONDecoder().decode([Row].self, from: result.stdoutData).map(\.id)
    }

    @Test func aTrashedAssetIsSaidToBeInTheTrashWithHowToRestoreIt() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let id = try #require(try await ids(fixture).first)
            let key = try #require(try await fixture.rowsByID()[id]?.key)
            expectSuccess(try await fixture.run("rm", [id]))
            let album = try await fixture.run("album create", ["Trip"])
            expectSuccess(album)
            for (command, arguments) in [
                ("get", [id]), ("edit", [id, "--rotate", "90"]), ("album add", ["Trip", id]), ("get", [key]),
            ] {
                let result = try await fixture.run(command, arguments)
                expectUserError(result, status: 2, mentioning: "is in the trash")
                #expect(result.stderr.contains("cloudassets restore \(id)"), "\(command): \(result.stderr)")
                #expect(!result.stderr.contains("sync` first"), "\(command): \(result.stderr)")
            }
            // An id nobody has is still unknown.
            expectUserError(try await fixture.run("get", ["9999"]), status: 2, mentioning: "unknown asset 9999")
        }
    }

    @Test(arguments: [["--at", "-1"], ["--at=-1"]])
    func aNegativePositionIsARangeErrorNotAMissingValue(arguments: [String]) async throws {
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            expectSuccess(try await fixture.run("album create", ["Trip"]))
            let id = try #require(try await ids(fixture).first)
            let result = try await fixture.run("album add", ["Trip", id] + arguments)
            expectUserError(result, status: 2, mentioning: "--at must be 0 or more, not -1")
            let move = try await fixture.run("album move", ["Trip", id, "--to", "-1"])
            expectUserError(move, status: 2, mentioning: "--to must be 0 or more, not -1")
        }
    }

    @Test func aPositionPastTheEndIsRefusedByAddAndMoveAlike() async throws {
        try await withFixture(assets: 4) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            expectSuccess(try await fixture.run("album create", ["Trip"]))
            let all = try await ids(fixture)
            expectSuccess(try await fixture.run("album add", ["Trip", all[0], all[1]]))
            let add = try await fixture.run("album add", ["Trip", all[2], "--at", "100"])
            expectUserError(add, status: 2, mentioning: "--at 100 is past the end of Trip: it takes 0…2")
            let move = try await fixture.run("album move", ["Trip", all[0], "--to", "1000"])
            expectUserError(move, status: 2, mentioning: "--to 1000 is past the end of Trip: it takes 0…1")
            // The end itself is a position.
            expectSuccess(try await fixture.run("album add", ["Trip", all[2], "--at", "2"]))
            expectSuccess(try await fixture.run("album move", ["Trip", all[0], "--to", "2"]))
            let members = try await fixture.run("ls", ["--json", "--album", "Trip"])
            expectSuccess(members)
            #expect(
                try JSONDecoder().decode([Row].self, from: members.stdoutData).map(\.id) == [all[1], all[2], all[0]])
        }
    }

    @Test func aUserAlbumUnderASmartAlbumsTitleIsNamedByItsID() async throws {
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let created = try await fixture.run("album create", ["Favorites"])
            expectSuccess(created)
            let albumID = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let id = try #require(try await ids(fixture).first)
            let byTitle = try await fixture.run("album add", ["Favorites", id])
            expectUserError(byTitle, status: 2, mentioning: "smart album smart:favorites")
            #expect(byTitle.stderr.contains("the user album Favorites is \(albumID)"), "\(byTitle.stderr)")
            expectSuccess(try await fixture.run("album add", [albumID, id]))
            let members = try await fixture.run("ls", ["--json", "--album", albumID])
            #expect(try JSONDecoder().decode([Row].self, from: members.stdoutData).map(\.id) == [id])
        }
    }
}
