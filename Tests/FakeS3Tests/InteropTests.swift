import FakeS3
import Foundation
import TestSupport
import Testing

/// Real S3 tools (the aws CLI and boto3, installed by `make test`) drive an in-process server.
@Suite("Interop with the aws CLI and boto3", .heavy)
struct InteropTests {
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    static let accessKey = "AKIDINTEROP"
    static let secret = "interop-secret"

    /// Runs a tool through `/usr/bin/env` with AWS settings pointing at nothing but the environment.
    static func run(_ arguments: [String], port: Int) async throws -> Run {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fakes3-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out")
        let err = directory.appendingPathComponent("err")
        try Data().write(to: out)
        try Data().write(to: err)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = accessKey
        environment["AWS_SECRET_ACCESS_KEY"] = secret
        environment["AWS_DEFAULT_REGION"] = "us-east-1"
        environment["AWS_EC2_METADATA_DISABLED"] = "true"
        environment["AWS_CONFIG_FILE"] = "/dev/null"
        environment["AWS_SHARED_CREDENTIALS_FILE"] = "/dev/null"
        environment["PATH"] = (environment["PATH"] ?? "/usr/bin:/bin") + ":/root/.pyenv/shims:/usr/local/bin"
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        return Run(
            status: status, output: try String(contentsOf: out, encoding: .utf8),
            errors: try String(contentsOf: err, encoding: .utf8))
    }

    static func withInteropServer(_ body: (FakeS3Server, URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fakes3-interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try FakeS3Server(
            configuration: FakeS3Configuration(accessKeyID: accessKey, secretAccessKey: secret))
        try await server.start()
        try server.createBucket("photos")
        do {
            try await body(server, directory)
        } catch {
            try await server.stop()
            throw error
        }
        try await server.stop()
    }

    static let interopFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("interop")

    @Test func awsCLIListsCopiesPresignsAndDoesMultipart() async throws {
        try await Self.withInteropServer { server, directory in
            let script = Self.interopFolder.appendingPathComponent("aws_cli_interop.py")
            let run = try await Self.run(
                ["python3", script.path, server.endpoint.absoluteString, "photos", directory.path], port: server.port)
            #expect(
                run.status == 0,
                "aws CLI interop failed (is awscli installed? run `make test`):\n\(run.output)\n\(run.errors)")
            #expect(run.output.contains("all checks passed"))
            // The CLI really went through the server: the log shows a multipart upload and a ranged GET.
            let log = server.requestLog.entries()
            #expect(log.contains { $0.method == "POST" && $0.query.contains("uploadId") && $0.status == 200 })
            #expect(log.contains { $0.rangeHeader == "bytes=10-19" && $0.status == 206 })
        }
    }

    @Test func boto3RoundTripsThroughTheSDK() async throws {
        let script = Self.interopFolder.appendingPathComponent("boto3_interop.py")
        try await Self.withInteropServer { server, _ in
            let run = try await Self.run(
                ["python3", script.path, server.endpoint.absoluteString, Self.accessKey, Self.secret, "photos"],
                port: server.port)
            #expect(
                run.status == 0,
                "boto3 interop failed (is boto3 installed? run `make test`):\n\(run.output)\n\(run.errors)")
            #expect(run.output.contains("all checks passed"))
        }
    }
}
