import FakeS3
import Foundation
import TestSupport

/// One `ls --json` row.
struct AssetRow: Decodable, Sendable, Equatable {
    var id: String
    var key: String
    var size: Int64
    var state: String
    var pinned: Bool
    /// When the original was added to the bucket (ISO 8601), `nil` until listed.
    var addedDate: String?
}

/// An in-process fake S3 server seeded with a small sample library, a fresh library folder, and a way to run
/// the built `cloudassets` against both. Use through ``withFixture(assets:large:largeSize:_:)``, which tears
/// everything down afterwards.
struct CLIFixture: Sendable {
    static let accessKey = "cli-test-key"
    static let secretKey = "cli-test-secret"
    static let bucket = "photos"

    let server: FakeS3Server
    let executable: URL
    /// A folder for this test only; the library lives in `store`, inside it.
    let folder: URL
    var store: URL { folder.appendingPathComponent("library", isDirectory: true) }

    /// The environment every run gets: credentials, a private HOME (so no user config file is read), PATH, a
    /// full listing on every sync (these tests write the bucket as other tools do, behind the journal's back), and
    /// no instance metadata (the credential chain must not look for 169.254.169.254 from a test).
    var environment: [String: String] {
        [
            "AWS_ACCESS_KEY_ID": Self.accessKey, "AWS_SECRET_ACCESS_KEY": Self.secretKey,
            "HOME": folder.path, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "CLOUDASSETS_FULL_SYNC_INTERVAL": "0",
            "AWS_EC2_METADATA_DISABLED": "true",
        ]
    }

    /// `--store`, `--endpoint` and `--bucket` for this fixture.
    var globalArguments: [String] {
        ["--store", store.path, "--endpoint", server.endpoint.absoluteString, "--bucket", Self.bucket]
    }

    /// Starts `cloudassets <command> <global options> <arguments>` and returns at once. A command of several words
    /// (`album create`) is a subcommand path: the global options follow its last word.
    func start(
        _ command: String, _ arguments: [String] = [], globals: [String]? = nil,
        environment extra: [String: String] = [:],
        removingEnvironment removed: Set<String> = [], timeout: Duration = .seconds(30)
    ) throws -> ChildProcess {
        var env = environment.merging(extra) { _, new in new }
        for name in removed { env[name] = nil }
        return try ChildProcess(
            executable: executable,
            arguments: command.split(separator: " ").map(String.init) + (globals ?? globalArguments) + arguments,
            environment: env, timeout: timeout)
    }

    /// Runs `cloudassets <command> <global options> <arguments>` to the end.
    func run(
        _ command: String, _ arguments: [String] = [], globals: [String]? = nil,
        environment extra: [String: String] = [:],
        removingEnvironment removed: Set<String> = [], timeout: Duration = .seconds(30)
    ) async throws -> CLIResult {
        try await start(
            command, arguments, globals: globals, environment: extra, removingEnvironment: removed, timeout: timeout
        ).finish()
    }

    /// `ls --json` with extra arguments, decoded; throws when the command fails or prints anything but JSON.
    func list(_ arguments: [String] = []) async throws -> [AssetRow] {
        let result = try await run("ls", ["--json"] + arguments)
        guard result.status == 0 else { throw CLIFailure(command: "ls --json", result: result) }
        return try JSONDecoder().decode([AssetRow].self, from: Data(result.stdout.utf8))
    }

    /// `ls --json` as a dictionary by id.
    func rowsByID() async throws -> [String: AssetRow] {
        Dictionary(uniqueKeysWithValues: try await list().map { ($0.id, $0) })
    }

    /// `sync`, which must succeed.
    func sync(_ arguments: [String] = []) async throws {
        let result = try await run("sync", arguments)
        guard result.status == 0 else { throw CLIFailure(command: "sync", result: result) }
    }

    /// The object's bytes on the server.
    func objectData(_ key: String) throws -> Data {
        guard let data = try server.objectData(bucket: Self.bucket, key: key) else {
            throw CLIFailure(command: "objectData \(key)", result: nil)
        }
        return data
    }
}

struct CLIFailure: Error, CustomStringConvertible {
    var command: String
    var result: CLIResult?
    var description: String { "\(command) failed: \(result.map(String.init(describing:)) ?? "no such object")" }
}

/// Runs `body` with a started server seeded with `assets` sample assets (plus `large` large originals), and
/// a fresh folder; stops the server and removes the folder afterwards, whatever happens.
func withFixture<T>(
    assets: Int = 20, large: Int = 0, largeSize: Int64 = 32 << 20, _ body: (CLIFixture) async throws -> T
) async throws -> T {
    let executable = try CLIBinary.locate()
    let server = try FakeS3Server(
        configuration: FakeS3Configuration(accessKeyID: CLIFixture.accessKey, secretAccessKey: CLIFixture.secretKey))
    try SampleLibrary.seed(into: server, bucket: CLIFixture.bucket, assets: assets, large: large, largeSize: largeSize)
    try await server.start()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "cloudassets-cli-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let fixture = CLIFixture(server: server, executable: executable, folder: folder)
    do {
        let value = try await body(fixture)
        try await server.stop()
        try? FileManager.default.removeItem(at: folder)
        return value
    } catch {
        try? await server.stop()
        try? FileManager.default.removeItem(at: folder)
        throw error
    }
}
