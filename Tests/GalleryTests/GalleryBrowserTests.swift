import Foundation
import TestSupport
import Testing

/// Runs Tests/browser/test_gallery.py: the gallery in headless Chromium, driven by Playwright for Python, against
/// the built `cloudassets` and `fake-s3`. Skipped (with the reason) only when Chromium or Playwright is missing.
@Suite("Gallery in a browser", .heavy)
struct GalleryBrowserTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var chromium: String { ProcessInfo.processInfo.environment["CHROMIUM"] ?? "/usr/bin/chromium" }

    /// Why the browser tests cannot run here, or `nil` when they can.
    static let missing: String? = {
        guard FileManager.default.isExecutableFile(atPath: chromium) else {
            return "Chromium not found at \(chromium) (apt-get install chromium, or set CHROMIUM)"
        }
        guard run(["python3", "-c", "import playwright, boto3"]).status == 0 else {
            return "Playwright for Python not found (pip install playwright boto3)"
        }
        return nil
    }()

    /// The folder holding the built `cloudassets` and `fake-s3`: beside the test executable, else .build/debug.
    static var binaries: URL {
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let folder = URL(fileURLWithPath: exe).deletingLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("cloudassets").path) {
                return folder
            }
        }
        return packageRoot.appendingPathComponent(".build/debug")
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do {
            try process.run()
        } catch {
            return (-1, "\(error)")
        }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test(
        "grid, live sync in place, open with progress, offline, picker, token: in headless Chromium",
        .enabled(if: missing == nil, Comment(rawValue: missing ?? "")), .timeLimit(.minutes(2)))
    func browser() async throws {
        let screenshots = Self.packageRoot.appendingPathComponent(".build/gallery-screenshots")
        let environment = ["CLOUDASSETS_BIN": Self.binaries.path, "GALLERY_SCREENSHOTS": screenshots.path]
        // Waited for on a thread of its own: blocking one of the test pool's threads for the whole run would
        // starve the suites running beside it.
        let result = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: Self.run(
                        ["python3", "-m", "unittest", "-v", "Tests/browser/test_gallery.py"], environment: environment))
            }.start()
        }
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("OK"), "\(result.output)")
        print("gallery browser tests: screenshots in \(screenshots.path)")
    }
}
