import Foundation
import TestSupport
import Testing

@Suite("cloudassets demo", .heavy)
struct DemoCommandTests {
    @Test func quietDemoRunsToTheEndAndLeavesNothingBehind() async throws {
        let executable = try CLIBinary.locate()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cloudassets-demo-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // TMPDIR points the demo's temporary library into our folder, so we can see it is cleaned up.
        let process = try ChildProcess(
            executable: executable, arguments: ["demo", "--assets", "40", "--quiet"],
            environment: ["HOME": folder.path, "PATH": "/usr/bin:/bin", "TMPDIR": folder.path],
            timeout: .seconds(60))
        let result = await process.finish()
        expectSuccess(result)
        #expect(!result.stderr.contains("error:"), "\(result)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "temporary library removed")
    }
}
