import Foundation
import Testing

/// A README code sample kept in a test file between `// --- README <name>: begin ---` and `… end ---` markers:
/// the test compiles and runs it, and checks that README.md shows exactly those lines (less the test's
/// indentation) as a `swift` block.
enum ReadmeSample {
    /// The README's text.
    static func readme(_ file: String = #filePath) throws -> String {
        let root = URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    /// The lines between the `name` markers of `file`, with `indent` spaces taken off each.
    static func code(named name: String, in file: String, indent: Int = 4) throws -> String {
        let source = try String(contentsOf: URL(fileURLWithPath: file), encoding: .utf8)
        let pad = String(repeating: " ", count: indent)
        let begin = try #require(source.range(of: pad + "// --- README \(name): " + "begin ---\n"))
        let end = try #require(source.range(of: pad + "// --- README \(name): " + "end ---"))
        return source[begin.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(pad) ? $0.dropFirst(indent) : $0 }.joined(separator: "\n")
    }

    /// Records an issue unless README.md shows the `name` sample of `file` as a `swift` block, verbatim.
    static func expectVerbatim(
        _ name: String, in file: String = #filePath, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let code = try code(named: name, in: file)
        #expect(code.count > 100, sourceLocation: sourceLocation)
        #expect(
            try readme().contains("```swift\n" + code + "```\n"),
            "README.md's \(name) example differs from the code in \(file)", sourceLocation: sourceLocation)
    }
}
