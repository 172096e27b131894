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
