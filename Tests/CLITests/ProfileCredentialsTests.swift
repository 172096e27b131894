import FakeS3
import Foundation
import TestSupport
import Testing

/// The first try: a `~/.aws/credentials` with a `[photos]` profile, and `AWS_PROFILE=photos` or
/// `--profile photos`, as the aws CLI takes them.
@Suite("cloudassets credentials from AWS profiles", .heavy)
struct ProfileCredentialsTests {
    static let noKeys: Set<String> = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]

    /// Writes `~/.aws/credentials` in the fixture's private HOME.
    static func writeCredentials(_ text: String, in fixture: CLIFixture) throws {
        let folder = fixture.folder.appendingPathComponent(".aws")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: folder.appendingPathComponent("credentials"))
    }

    @Test func awsProfileAndTheProfileFlagTakeTheSharedCredentialsFile() async throws {
        try await withFixture(assets: 2) { fixture in
            try Self.writeCredentials(
                "[photos]\naws_access_key_id = \(CLIFixture.accessKey)\naws_secret_access_key = \(CLIFixture.secretKey)\n",
                in: fixture)
            expectSuccess(
                try await fixture.run("sync", environment: ["AWS_PROFILE": "photos"], removingEnvironment: Self.noKeys))
            expectSuccess(
                try await fixture.run(
                    "sync", globals: fixture.globalArguments + ["--profile", "photos"], removingEnvironment: Self.noKeys
                ))
            // --profile wins over keys in the environment, as with the aws CLI.
            expectSuccess(
                try await fixture.run(
                    "sync", globals: fixture.globalArguments + ["--profile", "photos"],
                    environment: ["AWS_ACCESS_KEY_ID": "wrong", "AWS_SECRET_ACCESS_KEY": "wrong"]))
        }
    }

    @Test func doctorSaysWhichProviderAndProfileAnsweredWithoutTheSecret() async throws {
        try await withFixture(assets: 1) { fixture in
            try Self.writeCredentials(
                "[photos]\naws_access_key_id = \(CLIFixture.accessKey)\naws_secret_access_key = \(CLIFixture.secretKey)\n",
                in: fixture)
            let result = try await fixture.run(
                "doctor", environment: ["AWS_PROFILE": "photos"], removingEnvironment: Self.noKeys)
            #expect(result.status == 0, "\(result)")
            let line = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
            #expect(line.hasPrefix("ok   credentials: AWS credential chain: shared-credentials-file (profile photos, "))
            #expect(line.contains("/.aws/credentials): key "), "\(line)")
            #expect(!result.stdout.contains(CLIFixture.secretKey))
        }
    }

    @Test func aMissingProfileOrMalformedFileIsOneLineWithExitThree() async throws {
        try await withFixture(assets: 1) { fixture in
            let missing = try await fixture.run(
                "sync", globals: fixture.globalArguments + ["--profile", "nobody"], removingEnvironment: Self.noKeys)
            expectUserError(missing, status: 3, mentioning: "The profile \"nobody\" is not in")
            try Self.writeCredentials("[photos]\naws_access_key_id\n", in: fixture)
            let malformed = try await fixture.run(
                "sync", environment: ["AWS_PROFILE": "photos"], removingEnvironment: Self.noKeys)
            expectUserError(malformed, status: 3, mentioning: ".aws/credentials line 2 cannot be read")
            expectUserError(
                try await fixture.run("sync", globals: fixture.globalArguments + ["--profile", ""]), status: 2,
                mentioning: "--profile is empty")
        }
    }
}
