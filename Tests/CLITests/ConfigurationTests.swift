import FakeS3
import Foundation
import TestSupport
import Testing

/// Where settings come from (flags, environment, config file) and the one-line errors for bad ones.
@Suite("cloudassets configuration and paths", .heavy)
struct ConfigurationTests {
    /// Writes `fields` as the config file at `url` (creating its folder).
    static func writeConfig(_ fields: [String: String], to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: fields).write(to: url)
    }

    @Test func anEmptyStoreFromAnySourceIsAUsageErrorAndCreatesNothing() async throws {
        try await withFixture(assets: 1) { fixture in
            let endpoint = fixture.server.endpoint.absoluteString
            let remote = ["--endpoint", endpoint, "--bucket", CLIFixture.bucket]
            let config = fixture.folder.appendingPathComponent("empty-store.json")
            try Self.writeConfig(["store": ""], to: config)
            let before = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath)
            expectUserError(
                try await fixture.run("sync", globals: ["--store", ""] + remote), status: 2,
                mentioning: "--store is empty")
            expectUserError(
                try await fixture.run("sync", globals: remote, environment: ["CLOUDASSETS_STORE": ""]), status: 2,
                mentioning: "CLOUDASSETS_STORE is empty")
            expectUserError(
                try await fixture.run("sync", globals: ["--config", config.path] + remote), status: 2,
                mentioning: "store is empty")
            let after = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath)
            #expect(Set(after) == Set(before), "nothing is created in the current folder")
        }
    }

    @Test func demoWithAnEmptyStoreIsAUsageError() async throws {
        try await withFixture(assets: 0) { fixture in
            let result = try await fixture.run("demo", ["--store", "", "--assets", "5"], globals: [])
            expectUserError(result, status: 2, mentioning: "--store is empty")
        }
    }

    @Test func anEmptyBucketIsAUsageErrorBeforeAnyRequest() async throws {
        try await withFixture(assets: 1) { fixture in
            fixture.server.requestLog.clear()
            let result = try await fixture.run(
                "sync",
                globals: [
                    "--store", fixture.store.path, "--endpoint", fixture.server.endpoint.absoluteString,
                    "--bucket", "",
                ])
            expectUserError(result, status: 2, mentioning: "--bucket is empty")
            #expect(fixture.server.requestLog.entries().isEmpty)
        }
    }

    @Test func theDefaultConfigFileAndTildeInItsStoreFollowHOME() async throws {
        try await withFixture(assets: 3) { fixture in
            // HOME is the fixture's folder: the default config file and `~` must both be found there.
            let config = fixture.folder.appendingPathComponent(".config/cloudassets/config.json")
            try Self.writeConfig(
                [
                    "store": "~/photos-library", "endpoint": fixture.server.endpoint.absoluteString,
                    "bucket": CLIFixture.bucket,
                ], to: config)
            expectSuccess(try await fixture.run("sync", globals: []))
            let library = fixture.folder.appendingPathComponent("photos-library/library.sqlite")
            #expect(FileManager.default.fileExists(atPath: library.path), "the store is $HOME/photos-library")
            let listed = try await fixture.run("ls", ["--json"], globals: [])
            expectSuccess(listed)
            #expect(try JSONDecoder().decode([AssetRow].self, from: Data(listed.stdout.utf8)).count == 3)
        }
    }

    @Test func anUnknownConfigKeyIsAnErrorNamingItAndTheKnownKeys() async throws {
        try await withFixture(assets: 1) { fixture in
            let config = fixture.folder.appendingPathComponent("typo.json")
            try Self.writeConfig(["store": fixture.store.path, "netwrk": "offline"], to: config)
            let result = try await fixture.run("ls", globals: ["--config", config.path])
            expectUserError(result, status: 2, mentioning: "unknown key \"netwrk\"")
            #expect(result.stderr.contains("store, endpoint, bucket, region, accessKeyID"), "\(result)")
        }
    }

    @Test(arguments: [
        (env: "AWS_ACCESS_KEY_ID", file: "secretAccessKey"), (env: "AWS_SECRET_ACCESS_KEY", file: "accessKeyID"),
    ])
    func credentialsSplitBetweenEnvironmentAndConfigFileAreMergedPerValue(env: String, file: String) async throws {
        try await withFixture(assets: 2) { fixture in
            let values = [
                "AWS_ACCESS_KEY_ID": CLIFixture.accessKey, "AWS_SECRET_ACCESS_KEY": CLIFixture.secretKey,
                "accessKeyID": CLIFixture.accessKey, "secretAccessKey": CLIFixture.secretKey,
            ]
            let config = fixture.folder.appendingPathComponent("half.json")
            try Self.writeConfig([file: values[file]!], to: config)
            let other = Set(["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]).subtracting([env])
            let result = try await fixture.run(
                "sync", globals: fixture.globalArguments + ["--config", config.path], removingEnvironment: other)
            expectSuccess(result)
        }
    }

    @Test func aStoreThatIsAFileIsOneReadableLine() async throws {
        try await withFixture(assets: 1) { fixture in
            let file = fixture.folder.appendingPathComponent("not-a-folder")
            try Data("x".utf8).write(to: file)
            let remote = ["--endpoint", fixture.server.endpoint.absoluteString, "--bucket", CLIFixture.bucket]
            let onFile = try await fixture.run("sync", globals: ["--store", file.path] + remote)
            expectUserError(onFile, status: 2, mentioning: "--store \(file.path) is a file, not a folder")
            let below = try await fixture.run("sync", globals: ["--store", file.path + "/library"] + remote)
            expectUserError(below, status: 2, mentioning: "\(file.path) is a file, not a folder")
            #expect(!onFile.stderr.contains("Error Domain") && !below.stderr.contains("Error Domain"))
        }
    }

    @Test func aConfigFileThatIsAFolderIsOneReadableLine() async throws {
        try await withFixture(assets: 1) { fixture in
            let result = try await fixture.run("ls", globals: ["--store", fixture.store.path, "--config", "/tmp"])
            expectUserError(result, status: 2, mentioning: "config file /tmp")
            #expect(!result.stderr.contains("Error Domain"), "\(result)")
        }
    }

    @Test func outputPathsThatCannotBeAFileAreRefusedBeforeAnyDownload() async throws {
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let target = try #require(try await fixture.list().first)
            fixture.server.requestLog.clear()
            let missing = fixture.folder.appendingPathComponent("no/such/dir")
            let cases: [(String, String)] = [
                (fixture.folder.path, "-o \(fixture.folder.path) is a folder: give a file path"),
                (missing.appendingPathComponent("x").path, "folder \(missing.path) does not exist"),
                ("", "-o is empty"),
            ]
            for (path, message) in cases {
                let result = try await fixture.run("get", [target.id, "--network", "-o", path])
                expectUserError(result, status: 2, mentioning: message)
                #expect(!result.stderr.contains("Error Domain"), "\(result)")
            }
            #expect(fixture.server.requestLog.entries().isEmpty, "nothing was downloaded")
            #expect(try await fixture.rowsByID()[target.id]?.state == target.state)
        }
    }
}
