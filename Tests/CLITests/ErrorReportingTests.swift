import FakeS3
import Foundation
import TestSupport
import Testing

/// Every user error: one line on stderr starting with `error:`, a documented exit status, no stack trace.
@Suite("cloudassets user errors", .heavy)
struct ErrorReportingTests {
    @Test func wrongSecretExitsThreeAndKeepsTheCatalog() async throws {
        try await withFixture(assets: 5) { fixture in
            try await fixture.sync()
            let result = try await fixture.run("sync", environment: ["AWS_SECRET_ACCESS_KEY": "not-the-secret"])
            expectUserError(result, status: 3, mentioning: "credentials")
            #expect(result.stderr.contains("AWS_SECRET_ACCESS_KEY"), "the message names what to check")
            #expect(try await fixture.list().count == 5, "a failed sync loses nothing")
        }
    }

    @Test func unknownAccessKeyExitsThree() async throws {
        try await withFixture(assets: 2) { fixture in
            let result = try await fixture.run("sync", environment: ["AWS_ACCESS_KEY_ID": "nobody"])
            expectUserError(result, status: 3, mentioning: "credentials")
            #expect(result.stderr.contains("AWS_ACCESS_KEY_ID"))
        }
    }

    @Test func missingCredentialsExitThree() async throws {
        try await withFixture(assets: 2) { fixture in
            let result = try await fixture.run(
                "sync", removingEnvironment: ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])
            expectUserError(result, status: 3, mentioning: "AWS_ACCESS_KEY_ID")
        }
    }

    @Test func unreachableEndpointExitsFour() async throws {
        try await withFixture(assets: 2) { fixture in
            // Port 1 (tcpmux) is privileged and served by nothing here: connections are refused. (A port another
            // server just left may be taken again at once by a server of a test running beside this one.)
            let endpoint = "http://127.0.0.1:1"

            let result = try await fixture.run(
                "sync", globals: ["--store", fixture.store.path, "--endpoint", endpoint, "--bucket", CLIFixture.bucket])
            expectUserError(result, status: 4, mentioning: "cannot reach the endpoint")
        }
    }

    @Test func noSuchBucketExitsFive() async throws {
        try await withFixture(assets: 2) { fixture in
            let result = try await fixture.run(
                "sync",
                globals: [
                    "--store", fixture.store.path, "--endpoint", fixture.server.endpoint.absoluteString, "--bucket",
                    "no-such-bucket",
                ])
            expectUserError(result, status: 5, mentioning: "no such bucket")
        }
    }

    @Test(arguments: [["get", "--network"], ["pin"], ["unpin"], ["evict"]])
    func unknownAssetIdExitsTwo(command: [String]) async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let result = try await fixture.run(command[0], ["987654"] + command.dropFirst())
            expectUserError(result, status: 2, mentioning: "unknown asset 987654")
            #expect(try await fixture.list().allSatisfy { !$0.pinned && $0.state != "full" }, "nothing was touched")
        }
    }

    @Test func offlinePolicyRefusesSyncWithExitSix() async throws {
        try await withFixture(assets: 3) { fixture in
            fixture.server.requestLog.clear()
            let result = try await fixture.run("sync", environment: ["CLOUDASSETS_NETWORK": "offline"])
            expectUserError(result, status: 6, mentioning: "offline")
            #expect(fixture.server.requestLog.entries().isEmpty, "offline means no request at all")
        }
    }

    @Test func offlinePolicyRefusesADownloadEvenWithNetworkFlag() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            fixture.server.requestLog.clear()
            let result = try await fixture.run(
                "get", [target.id, "--network", "--network-policy", "offline"])
            #expect(result.status == 6, "\(result)")
            #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("error: "), "\(result)")
            #expect(fixture.server.requestLog.entries().isEmpty)
            #expect(try await fixture.rowsByID()[target.id]?.state == target.state)
        }
    }

    @Test func missingStoreAndBadOptionValuesAreUsageErrors() async throws {
        try await withFixture(assets: 1) { fixture in
            let endpoint = fixture.server.endpoint.absoluteString
            expectUserError(
                try await fixture.run("sync", globals: ["--endpoint", endpoint, "--bucket", CLIFixture.bucket]),
                status: 2, mentioning: "--store")
            expectUserError(
                try await fixture.run(
                    "sync", globals: ["--store", fixture.store.path, "--endpoint", "ftp://x", "--bucket", "b"]),
                status: 2, mentioning: "endpoint")
            expectUserError(
                try await fixture.run("sync", environment: ["CLOUDASSETS_NETWORK": "sometimes"]), status: 2,
                mentioning: "network policy")
            expectUserError(
                try await fixture.run("ls", globals: ["--store", fixture.store.path, "--config", "/nonexistent.json"]),
                status: 2, mentioning: "config file")
        }
    }

    @Test func configFileSuppliesEndpointBucketStoreAndCredentials() async throws {
        try await withFixture(assets: 4) { fixture in
            let config: [String: String] = [
                "store": fixture.store.path, "endpoint": fixture.server.endpoint.absoluteString,
                "bucket": CLIFixture.bucket, "accessKeyID": CLIFixture.accessKey,
                "secretAccessKey": CLIFixture.secretKey,
            ]
            let file = fixture.folder.appendingPathComponent("config.json")
            try JSONSerialization.data(withJSONObject: config).write(to: file)
            let noEnvironment: Set<String> = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]

            expectSuccess(
                try await fixture.run("sync", globals: ["--config", file.path], removingEnvironment: noEnvironment))
            let listed = try await fixture.run(
                "ls", ["--json"], globals: ["--config", file.path], removingEnvironment: noEnvironment)
            expectSuccess(listed)
            #expect(try JSONDecoder().decode([AssetRow].self, from: Data(listed.stdout.utf8)).count == 4)
        }
    }
}
