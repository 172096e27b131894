import Foundation

/// Finds the built `cloudassets` executable.
///
/// `swift build --build-tests` puts it in the same folder as the test bundle, so the first place looked is
/// the folder of the running test executable; then `.build/debug/cloudassets` under the package root. The
/// environment variable `CLOUDASSETS_CLI` overrides both.
public enum CLIBinary {
    public struct NotFound: Error, CustomStringConvertible {
        public var searched: [String]
        public var description: String {
            "the cloudassets executable was not found (run `swift build --build-tests` first, or set "
                + "CLOUDASSETS_CLI); looked at: " + searched.joined(separator: ", ")
        }
    }

    /// The executable's URL, or ``NotFound`` listing every path that was tried. `name` picks another product
    /// built beside it (`fake-s3`); `CLOUDASSETS_CLI` overrides only `cloudassets`.
    public static func locate(_ name: String = "cloudassets") throws -> URL {
        var candidates = candidatePaths()
        if name != "cloudassets" {
            candidates = candidates.map {
                URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent(name).path
            }
        }
        for path in candidates where FileManager.default.isExecutableFile(atPath: path) {
            return URL(fileURLWithPath: path)
        }
        throw NotFound(searched: candidates)
    }

    private static func candidatePaths() -> [String] {
        if let override = ProcessInfo.processInfo.environment["CLOUDASSETS_CLI"], !override.isEmpty {
            return [override]
        }
        var folders: [URL] = []
        // The test executable itself (on Linux `<build>/debug/<Package>PackageTests.xctest`).
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            folders.append(URL(fileURLWithPath: resolved).deletingLastPathComponent())
        }
        if let executable = Bundle.main.executableURL {
            folders.append(executable.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        if let first = CommandLine.arguments.first, first.contains("/") {
            folders.append(URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
        }
        // On macOS the tests run inside a `.xctest` bundle: Contents/MacOS/<name> → the build folder.
        for folder in folders where folder.path.contains(".xctest/") {
            var up = folder
            while up.pathComponents.count > 1 && !up.lastPathComponent.hasSuffix(".xctest") {
                up.deleteLastPathComponent()
            }
            folders.append(up.deletingLastPathComponent())
        }
        // The package root, three levels above this file (Tests/CLITests/Support/CLIBinary.swift).
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        folders.append(root.appendingPathComponent(".build/debug"))
        var seen = Set<String>()
        return folders.map { $0.appendingPathComponent("cloudassets").path }.filter { seen.insert($0).inserted }
    }
}
