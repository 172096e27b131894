import AWSSigV4
import FakeS3
import Foundation
import TestSupport
import Testing

/// Exit codes of refused credentials and clocks, and what the README, docs/cli.md and the help say about albums,
/// prefixes and the gallery, each checked against the built tool (issue #53, items 12 and 14).
@Suite("cloudassets: credential and clock exit codes; docs and help agree with the tool", .heavy)
struct ExitCodesAndDocsOfAlbumsTests {
    @Test("temporary credentials the service says expired (ExpiredToken) exit with the credentials code, 3")
    func anExpiredTokenExitsThree() async throws {
        try await withFixture(assets: 1) { fixture in
            let temporary = AWSCredentials(
                accessKeyID: "ASIAEXPIREDTEMPKEY", secretAccessKey: "temporary-secret", sessionToken: "session-token")
            fixture.server.acceptTemporaryCredentials(temporary, until: Date(timeIntervalSinceNow: -3600))
            let result = try await fixture.run(
                "sync",
                environment: [
                    "AWS_ACCESS_KEY_ID": temporary.accessKeyID, "AWS_SECRET_ACCESS_KEY": temporary.secretAccessKey,
                    "AWS_SESSION_TOKEN": "session-token",
                ])
            expectUserError(result, status: 3, mentioning: "ExpiredToken")
        }
    }

    @Test("a service that finds the clock too far off (RequestTimeTooSkewed) exits with the credentials code, 3")
    func aSkewedClockExitsThree() async throws {
        let body = Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>RequestTimeTooSkewed</Code><Message>The difference between the request time and the \
            current time is too large.</Message></Error>
            """.utf8)
        let server = try ScriptedHTTPServer { _ in
            ScriptedHTTPServer.Response(status: 403, headers: [("Content-Type", "application/xml")], body: body)
        }
        defer { server.stop() }
        try await withFixture(assets: 0) { fixture in
            let globals = [
                "--store", fixture.store.path, "--endpoint", server.endpoint.absoluteString, "--bucket",
                CLIFixture.bucket,
            ]
            let result = try await fixture.run("sync", globals: globals)
            expectUserError(result, status: 3, mentioning: "clock")
        }
    }

    @Test("`album --help` and docs/cli.md name every smart album `album ls` lists; docs/cli.md says albums are shared")
    func theAlbumHelpAndDocsNameEverySmartAlbum() async throws {
        try await withFixture(assets: 0) { fixture in
            let listed = try await fixture.run("album ls", ["--json"])
            expectSuccess(listed)
            struct Row: Decodable {
                var kind: String
                var title: String
            }
            let smart = try JSONDecoder().decode([Row].self, from: listed.stdoutData).filter { $0.kind == "smartAlbum" }
                .map(\.title)
            #expect(smart.count >= 6 && smart.contains("Recently Added"), "\(smart)")
            let help = try await fixture.run("album", ["--help"], globals: [])
            expectSuccess(help)
            // The help wraps its lines: read it as one line of words.
            let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            let albums = try #require(
                MarkdownText(text: try Repository.text("docs/cli.md")).section("### Albums"), "docs/cli.md has Albums")
            let albumWords = albums.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for title in smart {
                #expect(words.contains(title), "`album --help` names the smart album \(title)")
                #expect(albumWords.contains("`\(title)`"), "docs/cli.md's Albums section names \(title)")
            }
            #expect(!albumWords.contains("not written to the bucket"), "albums are written to the bucket")
            #expect(albumWords.contains("`collections/`"), "docs/cli.md says where albums are in the bucket")
        }
    }

    /// The README's `cloudassets edit` line of the CLI at a glance, as words (its comment left out).
    static func readmeEditLine() throws -> [String] {
        let glance = try #require(
            MarkdownText(text: try Repository.text("README.md")).section("## The command-line tool at a glance"))
        let line = try #require(glance.split(separator: "\n").first { $0.hasPrefix("cloudassets edit ") })
        let command = line.split(separator: "#", maxSplits: 1)[0]
        return command.split(separator: " ").map(String.init)
    }

    @Test("the README's `cloudassets edit` line works on an asset only in the cloud")
    func theReadmesEditLineWorksOnACloudOnlyAsset() async throws {
        let words = try Self.readmeEditLine()
        #expect(words.count > 3 && words[0] == "cloudassets" && words[1] == "edit" && words[2] == "42", "\(words)")
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let target = try #require(try await fixture.list().first { $0.key.hasSuffix(".jpg") })
            #expect(target.state == "cloudOnly")
            let result = try await fixture.run("edit", [target.id] + words.dropFirst(3), timeout: .seconds(120))
            expectSuccess(result)
            #expect(result.stdout.contains("\(target.id)\tedited"), "\(result)")
        }
    }

    @Test("`ls --prefix` takes a prefix without the originals prefix, as `favorite`, `get` and `album add` do")
    func lsPrefixLeavesOutTheOriginalsPrefix() async throws {
        try await withFixture(assets: 6) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let all = try await fixture.list()
            let key = try #require(all.first?.key)
            #expect(key.hasPrefix("originals/"))
            // The first asset's year folder: "2016/" for "originals/2016/10/IMG_1.jpg".
            let year = String(key.dropFirst("originals/".count).prefix { $0 != "/" }) + "/"
            let full = try await fixture.list(["--prefix", "originals/" + year])
            let short = try await fixture.list(["--prefix", year])
            #expect(!full.isEmpty && full.allSatisfy { $0.key.hasPrefix("originals/" + year) })
            #expect(short == full)
            // `favorite --prefix` selects the same assets.
            expectSuccess(try await fixture.run("favorite", ["--prefix", year]))
            #expect(try await fixture.list(["--favorite"]).map(\.id) == full.map(\.id))
        }
    }

    @Test("the gallery answers a traversal path with the right token 404, as docs/gallery.md says; no token: 403")
    func aTraversalPathWithTheTokenIsNotFound() async throws {
        try await withFixture(assets: 1) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let serve = try fixture.start("serve", ["--port", "0"], timeout: .seconds(60))
            #expect(await serve.stdout.wait { $0.contains("token=") }, "\(serve.stderr.text)")
            let address = try #require(URL(string: serve.stdout.text.trimmingCharacters(in: .whitespacesAndNewlines)))
            let port = try #require(address.port)
            let token = try #require(address.query?.split(separator: "=").last.map(String.init))
            #expect(try Repository.text("docs/gallery.md").contains("links out of the library answer 404"))
            for path in ["/../library.sqlite", "/%2e%2e/library.sqlite", "/api/thumbnails/..%2F..%2Flibrary.sqlite"] {
                let answer = await ServeCommandTests.countingGET(port: port, "\(path)?token=\(token)")
                #expect(answer.status.hasPrefix("HTTP/1.1 404"), "\(path): \(answer.status)")
                let refused = await ServeCommandTests.countingGET(port: port, "\(path)?token=wrong")
                #expect(refused.status.hasPrefix("HTTP/1.1 403"), "\(path) without the token: \(refused.status)")
            }
            #expect(
                await ServeCommandTests.countingGET(port: port, "/api/info?token=\(token)").status.hasPrefix(
                    "HTTP/1.1 200"))
            serve.interrupt()
            _ = await serve.finish()
        }
    }
}
