import Foundation
import TestSupport
import Testing

/// The package's own files (the README, `docs/`, the sources), read by the tests that check the documentation
/// against the code.
enum Repository {
    /// The package root, three levels above this file (Tests/CLITests/Support/Repository.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A file's text, by its path from the package root.
    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The names of the folders directly inside `path` (from the package root), sorted.
    static func folders(in path: String) throws -> [String] {
        let url = root.appendingPathComponent(path, isDirectory: true)
        return try FileManager.default.contentsOfDirectory(atPath: url.path).filter { name in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isFolder)
                && isFolder.boolValue
        }.sorted()
    }

    /// The paths (from the package root) of the files under `path` whose names end in `suffix`, sorted.
    static func files(under path: String, suffix: String) -> [String] {
        let base = root.appendingPathComponent(path, isDirectory: true)
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        return walker.compactMap { $0 as? String }.filter { $0.hasSuffix(suffix) }.map { path + "/" + $0 }.sorted()
    }
}

/// A Markdown document's parts, as the documentation tests read them.
struct MarkdownText {
    let text: String

    /// The text under the heading that is exactly `heading` (`## Exit codes`), up to the next heading of the same
    /// level or higher; nil when there is no such heading.
    func section(_ heading: String) -> String? {
        let level = heading.prefix { $0 == "#" }.count
        var lines: [Substring] = []
        var inside = false
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            if !inCode, line.hasPrefix("#") {
                let hashes = line.prefix { $0 == "#" }.count
                if inside && hashes <= level { break }
                if line == heading {
                    inside = true
                    continue
                }
            }
            if inside { lines.append(line) }
        }
        return inside ? lines.joined(separator: "\n") : nil
    }

    /// The fenced code blocks, in order, without their fences.
    var codeBlocks: [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let block = current {
                    blocks.append(block.joined(separator: "\n"))
                    current = nil
                } else {
                    current = []
                }
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The rows of the first Markdown table in `text`, header and rule left out, each split into its cells (an
    /// escaped `\|` stays inside its cell, unescaped).
    static func tableRows(_ text: String) -> [[String]] {
        let lines = text.split(separator: "\n").drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
        return lines.dropFirst(2).map { line in
            let inner = line.dropFirst().dropLast(line.hasSuffix("|") ? 1 : 0)
            return inner.replacingOccurrences(of: "\\|", with: "\u{0}").split(
                separator: "|", omittingEmptySubsequences: false
            )
            .map { $0.replacingOccurrences(of: "\u{0}", with: "|").trimmingCharacters(in: .whitespaces) }
        }
    }

    /// The text of every `code span` in `text`, in order.
    static func codeSpans(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }
}

/// Runs one of the package's executables (`cloudassets`, `fake-s3`) with `arguments` and a bare environment, to
/// the end.
func runTool(_ name: String, _ arguments: [String]) async throws -> CLIResult {
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("cloudassets-doc-tests-\(UUID())")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: home) }
    let process = try ChildProcess(
        executable: try CLIBinary.locate(name), arguments: arguments,
        environment: ["PATH": "/usr/bin:/bin", "HOME": home.path, "LANG": "C.UTF-8"], timeout: .seconds(60))
    return await process.finish()
}
