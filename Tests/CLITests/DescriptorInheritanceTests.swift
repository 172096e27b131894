import FakeS3
import Foundation
import TestSupport
import Testing

/// A library runs inside someone else's process; a child that process starts (on any thread, at any moment) must
/// not inherit the library's files. Every file the library and the tool open — the catalog, originals, thumbnails,
/// sidecars, renders, copies out — is opened close-on-exec. Traced with `strace` through a tour of the commands
/// that write: a sync with thumbnails, an import into an album, downloads whole and by range, a copy out with and
/// without the location, a content edit, a sized image, eviction.
@Suite("descriptors: nothing the library opens reaches a child process", .heavy)
struct DescriptorInheritanceTests {
    static let strace = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs the command under `strace -f` and returns every successful open of a path inside `folder` that lacks
    /// `O_CLOEXEC` (`syscall(path, flags)`), with the number of opens inside it that were traced.
    static func opensWithoutCloseOnExec(
        _ fixture: CLIFixture, _ command: String, _ arguments: [String]
    ) async throws -> (leaks: [String], traced: Int) {
        let log = fixture.folder.appendingPathComponent("strace-\(UUID().uuidString).log").path
        let child = try ChildProcess(
            executable: URL(fileURLWithPath: try #require(strace)),
            arguments: ["-f", "-qq", "-e", "trace=open,openat,openat2,creat", "-o", log, fixture.executable.path]
                + command.split(separator: " ").map(String.init) + fixture.globalArguments + arguments,
            environment: fixture.environment, timeout: .seconds(120))
        let result = await child.finish()
        #expect(result.status == 0, "\(command) \(arguments): \(result)")
        let text = try String(contentsOfFile: log, encoding: .utf8)
        try? FileManager.default.removeItem(atPath: log)
        var leaks: [String] = []
        var traced = 0
        for line in text.split(separator: "\n") {
            // `PID openat(AT_FDCWD, "/path", O_RDONLY|O_CLOEXEC) = 5`, or `= -1 ENOENT (…)` when it failed.
            guard let open = line.firstRange(of: "open"), line.contains("\"\(fixture.folder.path)") else { continue }
            guard let result = line.range(of: ") = ", options: .backwards),
                let fd = Int(line[result.upperBound...].prefix { $0 != " " }), fd >= 0
            else { continue }
            traced += 1
            let call = String(line[open.lowerBound..<result.lowerBound]) + ")"
            if call.hasPrefix("creat(") || !call.contains("O_CLOEXEC") { leaks.append(call) }
        }
        return (leaks, traced)
    }

    @Test(.enabled(if: strace != nil, "needs strace (make test installs it)"))
    func everyFileTheToolOpensIsClosedOnExec() async throws {
        try await withFixture(assets: 3) { fixture in
            let jpeg = try ImageCommandTests.cameraJPEG()
            try fixture.server.putObject(bucket: CLIFixture.bucket, key: ImageCommandTests.key, data: jpeg)
            let photo = fixture.folder.appendingPathComponent("new.png")
            try SampleLibrary.samplePNG(width: 64, height: 48, seed: 3).write(to: photo)
            var leaks: [String] = []
            var traced = 0
            func trace(_ command: String, _ arguments: [String] = []) async throws {
                let found = try await Self.opensWithoutCloseOnExec(fixture, command, arguments)
                leaks += found.leaks.map { "\(command): \($0)" }
                traced += found.traced
            }
            try await trace("sync")
            try await trace("album create", ["Trip"])
            try await trace("add", ["--album", "Trip", photo.path])
            let row = try #require(try await fixture.list().first { $0.key == ImageCommandTests.key })
            try await trace("get", [row.id, "--range", "0-99", "--network"])
            try await trace("get", [row.id, "--network"])
            try await trace("get", [row.id, "-o", fixture.folder.appendingPathComponent("out.jpg").path])
            try await trace(
                "get", [row.id, "--strip-location", "-o", fixture.folder.appendingPathComponent("stripped.jpg").path])
            try await trace("edit", [row.id, "--rotate", "90"])
            try await trace(
                "image", [row.id, "--size", "64", "-o", fixture.folder.appendingPathComponent("small.png").path])
            try await trace("evict", [row.id])
            try await trace("thumbnail", [row.id, "--network"])
            try await trace("sync")
            #expect(traced > 50, "the trace saw the library's opens (\(traced))")
            #expect(leaks.isEmpty, "opened without O_CLOEXEC:\n\(leaks.joined(separator: "\n"))")
        }
    }
}
