import FakeS3
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

/// Objects the uploader wrote (one request and multipart), read back byte for byte by other S3 tools: the aws CLI
/// and rclone. Skipped when the tool is not installed.
@Suite(.heavy) struct UploaderInteropTests {
    /// The path of an executable found on `PATH` (and pyenv's shims), or nil.
    static func tool(_ name: String) -> String? {
        let path =
            (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") + ":/root/.pyenv/shims:/usr/local/bin"
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs a tool to its end with the fixture's credentials in its environment; its exit status and standard error.
    static func run(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) async throws
        -> (status: Int32, errors: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = FakeS3Fixture.credentials.accessKeyID
        environment["AWS_SECRET_ACCESS_KEY"] = FakeS3Fixture.credentials.secretAccessKey
        environment["AWS_DEFAULT_REGION"] = "us-east-1"
        environment["AWS_EC2_METADATA_DISABLED"] = "true"
        environment["AWS_CONFIG_FILE"] = "/dev/null"
        environment["AWS_SHARED_CREDENTIALS_FILE"] = "/dev/null"
        // A CA bundle from the machine's environment makes rclone refuse its plain-HTTP transport.
        environment["AWS_CA_BUNDLE"] = nil
        environment.merge(extra) { $1 }
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (status, text)
    }

    /// Uploads a single-part and a multipart file and returns the harness and both files' bytes by key.
    static func uploadBoth() async throws -> (UploaderTests.Harness, [String: Data]) {
        let h = try await UploaderTests.Harness.start()
        var files: [String: Data] = [:]
        for (key, size) in [("small.jpg", 300_000), ("large.mov", Int(3 * UploaderTests.partSize) + 4321)] {
            let (url, data) = try h.file(key, size: size, seed: UInt64(size))
            let outcome = try await h.uploader.upload(h.request(key, url), resumingFrom: nil, checkpoint: { _ in })
            guard case .created = outcome else { throw S3Error.preconditionFailed }
            files[key] = data
        }
        return (h, files)
    }

    @Test(.enabled(if: tool("aws") != nil, "the aws CLI is not installed"))
    func theAwsCLIReadsBackEveryByte() async throws {
        let (h, files) = try await Self.uploadBoth()
        TestEnd.run { await h.stop() }
        for (key, data) in files {
            let out = h.fixture.directory.appendingPathComponent("aws-\(key)")
            let run = try await Self.run(
                Self.tool("aws")!,
                [
                    "--endpoint-url", h.server.endpoint.absoluteString, "s3", "cp",
                    "s3://\(UploaderTests.bucket)/\(key)", out.path,
                ],
                environment: ["AWS_RESPONSE_CHECKSUM_VALIDATION": "when_supported"])
            #expect(run.status == 0, "aws s3 cp failed: \(run.errors)")
            #expect(try Data(contentsOf: out) == data, "\(key)")
        }
        // The bytes came from the server (the large object in ranges).
        let gets = h.server.requestLog.entries().filter { $0.method == "GET" && [200, 206].contains($0.status) }
        #expect(gets.count >= 2)
    }

    @Test(.enabled(if: tool("rclone") != nil, "rclone is not installed"))
    func rcloneReadsBackEveryByte() async throws {
        let (h, files) = try await Self.uploadBoth()
        TestEnd.run { await h.stop() }
        let remote =
            ":s3,provider=Other,endpoint='\(h.server.endpoint.absoluteString)',"
            + "access_key_id=\(FakeS3Fixture.credentials.accessKeyID),"
            + "secret_access_key=\(FakeS3Fixture.credentials.secretAccessKey),region=us-east-1:"
        for (key, data) in files {
            let out = h.fixture.directory.appendingPathComponent("rclone-\(key)")
            let run = try await Self.run(
                Self.tool("rclone")!,
                ["copyto", "--config", "/dev/null", "\(remote)\(UploaderTests.bucket)/\(key)", out.path])
            #expect(run.status == 0, "rclone copyto failed: \(run.errors)")
            #expect(try Data(contentsOf: out) == data, "\(key)")
        }
    }
}
