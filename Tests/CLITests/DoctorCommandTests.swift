import FakeS3
import Foundation
import TestSupport
import Testing

/// `cloudassets doctor`: one line per aspect, the exit status of the first problem, no secret printed.
@Suite("cloudassets doctor", .heavy)
struct DoctorCommandTests {
    @Test("a working setup: six ok lines, exit 0, the binding once synced, no secret")
    func aWorkingSetupIsAllOK() async throws {
        try await withFixture(assets: 2) { fixture in
            let before = try await fixture.run("doctor")
            #expect(before.status == 0, "\(before)")
            let lines = before.stdout.split(separator: "\n").map(String.init)
            #expect(
                lines.map { $0.split(separator: " ", omittingEmptySubsequences: true)[1] } == [
                    "credentials:", "endpoint:", "tls:", "bucket:", "binding:", "clock:",
                ])
            #expect(lines.allSatisfy { $0.hasPrefix("ok ") })
            #expect(before.stdout.contains("not bound yet"))
            #expect(!before.stdout.contains(CLIFixture.secretKey))
            try await fixture.sync()
            let after = try await fixture.run("doctor")
            #expect(after.status == 0 && after.stdout.contains("bound to s3://photos/originals/"), "\(after)")
        }
    }

    @Test("each problem has its line and its exit status: no bucket, a wrong secret, nothing listening")
    func problemsExitWithTheirStatus() async throws {
        try await withFixture(assets: 1) { fixture in
            let noBucket = try await fixture.run(
                "doctor",
                globals: [
                    "--store", fixture.store.path, "--endpoint", fixture.server.endpoint.absoluteString,
                    "--bucket", "nosuch",
                ])
            #expect(noBucket.status == 5 && noBucket.stdout.contains("FAIL bucket:"), "\(noBucket)")

            let wrongSecret = try await fixture.run("doctor", environment: ["AWS_SECRET_ACCESS_KEY": "wrong"])
            #expect(wrongSecret.status == 3 && wrongSecret.stdout.contains("FAIL bucket:"), "\(wrongSecret)")
            #expect(!wrongSecret.stdout.contains("wrong"), "the secret is not printed")

            let closedPort = try await fixture.run(
                "doctor",
                globals: ["--store", fixture.store.path, "--endpoint", "http://127.0.0.1:9", "--bucket", "photos"],
                timeout: .seconds(60))
            #expect(closedPort.status == 4 && closedPort.stdout.contains("FAIL bucket:"), "\(closedPort)")

            let noKeys = try await fixture.run(
                "doctor", removingEnvironment: ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])
            #expect(noKeys.status == 3 && noKeys.stdout.contains("FAIL credentials:"), "\(noKeys)")
        }
    }

    @Test("the credentials line names where fixed keys came from; a refused key names its real source")
    func sourcesAreNamed() async throws {
        try await withFixture(assets: 1) { fixture in
            func line(_ result: CLIResult, _ aspect: String) -> String {
                result.stdout.split(separator: "\n").first { $0.contains(" \(aspect):") }.map(String.init) ?? ""
            }
            let fromEnvironment = try await fixture.run("doctor")
            #expect(fromEnvironment.status == 0, "\(fromEnvironment)")
            #expect(
                line(fromEnvironment, "credentials").contains(
                    "from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): key cli-"),
                "\(fromEnvironment.stdout)")
            #expect(!fromEnvironment.stdout.contains("given in the configuration"))

            let configFolder = fixture.folder.appendingPathComponent(".config/cloudassets")
            try FileManager.default.createDirectory(at: configFolder, withIntermediateDirectories: true)
            let config = configFolder.appendingPathComponent("config.json")
            try Data(#"{"accessKeyID": "\#(CLIFixture.accessKey)", "secretAccessKey": "wrong"}"#.utf8).write(to: config)
            let fromFile = try await fixture.run(
                "doctor", removingEnvironment: ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])
            #expect(fromFile.status == 3, "\(fromFile)")
            #expect(
                line(fromFile, "credentials").contains(
                    "from the config file \(config.path) (accessKeyID, secretAccessKey)"), "\(fromFile.stdout)")
            #expect(
                line(fromFile, "bucket").contains("(check secretAccessKey in the config file \(config.path))"),
                "\(fromFile.stdout)")
            try FileManager.default.removeItem(at: config)

            // A wrong secret in a profile: the profile and its file, not an environment variable.
            let aws = fixture.folder.appendingPathComponent(".aws")
            try FileManager.default.createDirectory(at: aws, withIntermediateDirectories: true)
            let credentials = aws.appendingPathComponent("credentials")
            try Data(
                "[photos]\naws_access_key_id = \(CLIFixture.accessKey)\naws_secret_access_key = wrong\n".utf8
            ).write(to: credentials)
            let profile = try await fixture.run(
                "doctor", ["--profile", "photos"], removingEnvironment: ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])
            #expect(profile.status == 3, "\(profile)")
            let bucket = line(profile, "bucket")
            #expect(
                bucket.contains("(check aws_secret_access_key of profile photos in \(credentials.path))"),
                "\(profile.stdout)")
            #expect(!profile.stdout.contains("AWS_SECRET_ACCESS_KEY"), "\(profile.stdout)")
            // The refusal carried the service's Date: the clock is measured from it, not "not measured".
            let clock = line(profile, "clock")
            #expect(clock.contains("measured from the service's error answer"), "\(profile.stdout)")
            #expect(!clock.contains("not measured"))

            // A wrong secret from the environment still names the variable.
            let wrongEnvironment = try await fixture.run("doctor", environment: ["AWS_SECRET_ACCESS_KEY": "wrong"])
            #expect(line(wrongEnvironment, "bucket").contains("(check AWS_SECRET_ACCESS_KEY)"))
        }
    }

    @Test("--json: one object per aspect with ok and the error's code")
    func jsonNamesEveryAspect() async throws {
        try await withFixture(assets: 1) { fixture in
            struct Line: Decodable {
                var aspect: String
                var ok: Bool
                var code: String?
            }
            let result = try await fixture.run(
                "doctor", ["--json"],
                globals: [
                    "--store", fixture.store.path, "--endpoint", fixture.server.endpoint.absoluteString,
                    "--bucket", "nosuch",
                ])
            let lines = try JSONDecoder().decode([Line].self, from: Data(result.stdout.utf8))
            #expect(lines.map(\.aspect) == ["credentials", "endpoint", "tls", "bucket", "binding", "clock"])
            #expect(lines.first { $0.aspect == "bucket" }?.code == "noSuchBucket")
            #expect(result.status == 5)
        }
    }
}
