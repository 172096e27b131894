import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// The public throwing members of the `CloudAssets` module, read from its sources: every one goes through the
/// library's one door (``AssetLibrary``'s `entry`, or ``CloudAssetsError``'s boundary), and every one of
/// `AssetLibrary` is exercised by ``ClosedLibraryTests/throwingCalls(_:local:remote:source:)``.
enum PublicThrowingSurface {
    struct Member: Hashable, CustomStringConvertible {
        var file: String
        /// The full name, `name(label:label:)`; a property's name alone.
        var name: String
        var body: String
        var description: String { "\(name) in \(file)" }
    }

    static var sourceFolder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/CloudAssets")
    }

    /// Every `public` (or `public convenience`, `public nonisolated(nonsending)`) `func`, `init` or computed `var`
    /// whose signature throws, with the type it is declared in (`extension T` / `class T` / `struct T` nearest above
    /// it).
    static func members() throws -> [(type: String, member: Member)] {
        var result: [(String, Member)] = []
        let files = FileManager.default.enumerator(atPath: sourceFolder.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: sourceFolder.appendingPathComponent(file), encoding: .utf8)
            let chars = Array(text.utf8)
            for match in text.matches(
                of: /public (?:(?:convenience|nonisolated\(nonsending\)) )*(?:func (\w+)|init|var (\w+))/)
            {
                var index = text.utf8.distance(
                    from: text.utf8.startIndex, to: match.range.upperBound.samePosition(in: text.utf8)!)
                var labels: [String] = []
                if match.output.2 == nil {
                    // A parameter list: its labels, up to the balancing parenthesis.
                    while index < chars.count, chars[index] != UInt8(ascii: "(") { index += 1 }
                    let open = index
                    index = pastBalanced(chars, from: open, "(", ")")
                    labels = parameterLabels(String(decoding: chars[(open + 1)..<(index - 1)], as: UTF8.self))
                }
                guard let brace = chars[index...].firstIndex(of: UInt8(ascii: "{")) else { continue }
                let head = String(decoding: chars[index..<brace], as: UTF8.self)
                let bodyEnd = pastBalanced(chars, from: brace, "{", "}")
                let body = String(decoding: chars[brace..<bodyEnd], as: UTF8.self)
                let throwsInHead = head.contains("throws") && !head.contains("rethrows")
                let isGetThrows = match.output.2 != nil && body.prefix(40).contains("get throws")
                guard throwsInHead || isGetThrows else { continue }
                let base = match.output.1.map(String.init) ?? match.output.2.map(String.init) ?? "init"
                let name = match.output.2 != nil ? base : "\(base)(\(labels.map { $0 + ":" }.joined()))"
                let before = String(decoding: chars[..<index], as: UTF8.self)
                let type =
                    before.matches(of: /(?m)^(?:public )?(?:final )?(?:extension|class|struct|enum) (\w+(?:\.\w+)?)/)
                    .last.map { String($0.output.1) } ?? "?"
                result.append((type, Member(file: file, name: name, body: body)))
            }
        }
        return result
    }

    /// The index just past the `close` that balances the `open` at `start`.
    static func pastBalanced(_ chars: [UInt8], from start: Int, _ open: Unicode.Scalar, _ close: Unicode.Scalar)
        -> Int
    {
        var index = start
        var depth = 0
        repeat {
            if chars[index] == UInt8(ascii: open) { depth += 1 }
            if chars[index] == UInt8(ascii: close) { depth -= 1 }
            index += 1
        } while depth > 0
        return index
    }

    /// The argument labels of a parameter list (`_` for an unlabelled one), at its top level.
    static func parameterLabels(_ list: String) -> [String] {
        var parts: [String] = []
        var depth = 0
        var current = ""
        for character in list {
            if "([".contains(character) { depth += 1 }
            if ")]".contains(character) { depth -= 1 }
            if character == "," && depth == 0 {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { parts.append(current) }
        return parts.map { part in
            let declaration = part.split(separator: ":", maxSplits: 1).first ?? ""
            let words = declaration.split(whereSeparator: { $0 == " " || $0 == "\n" })
            return words.first.map(String.init) ?? "_"
        }
    }

    /// Whether a body passes the door: `entry { … }` (closed check and error mapping) or the error boundary.
    static func passesTheDoor(_ body: String) -> Bool {
        body.contains("entry {") || body.contains("CloudAssetsError.boundary")
            || body.contains("CloudAssetsError.mapping(")
    }
}

@Suite("Library: every public throwing method throws CloudAssetsError", .heavy)
struct PublicThrowingSurfaceTests {
    @Test("the sources' public throwing members all pass the door, and the closed-library table names them all")
    func everyMemberIsGuardedAndExercised() async throws {
        let members = try PublicThrowingSurface.members()
        #expect(members.count >= 28, "the scan found \(members.count) members: it no longer reads the sources")
        for (_, member) in members {
            #expect(PublicThrowingSurface.passesTheDoor(member.body), "\(member) does not go through entry/boundary")
        }
        let library = Set(members.filter { $0.type == "AssetLibrary" }.map(\.member.name))
        let placeholder = Asset(testRecord("placeholder", day: 0), revealsLocation: false)
        let exercised = Set(
            ClosedLibraryTests.throwingCalls(
                try await Self.closedLibrary(), local: placeholder, remote: placeholder,
                source: URL(fileURLWithPath: "/nonexistent")
            ).map(\.name))
        #expect(library.subtracting(exercised).isEmpty, "not exercised: \(library.subtracting(exercised).sorted())")
        #expect(
            exercised.subtracting(library).isEmpty,
            "no longer public throwing: \(exercised.subtracting(library).sorted())")
    }

    /// A library to name the calls with (the table is not run here).
    static func closedLibrary() async throws -> AssetLibrary {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("Surface-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let library = try await AssetLibrary(configuration: AssetLibrary.Configuration(storeURL: folder))
        library.close()
        return library
    }

    @Test("with the bucket gone, every public throwing method returns or throws a CloudAssetsError")
    func aFailingBucketOnlyEverThrowsCloudAssetsError() async throws {
        try await withHarness { harness in
            try harness.put("a.jpg", data: try solidJPEG(width: 32, height: 24, (1, 2, 3)))
            try harness.put("b.jpg", data: testBytes(count: 500, seed: 2))
            var configuration = harness.configuration()
            configuration.startsBackgroundTransfers = false
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            let local = try library.asset(path: "a.jpg")
            _ = try await library.data(for: local, options: AssetLibrary.networkOptions())
            let remote = try library.asset(path: "b.jpg")
            let source = try harness.sourceFile("new.jpg", testBytes(count: 64, seed: 9))
            try await harness.server.stop()
            for (name, call) in ClosedLibraryTests.throwingCalls(library, local: local, remote: remote, source: source)
            {
                do {
                    try await call()
                } catch let error as CloudAssetsError {
                    #expect(error.code != .libraryClosed, "\(name): \(error)")
                } catch {
                    Issue.record("\(name) threw \(type(of: error)) \(error), not a CloudAssetsError")
                }
            }
        }
    }
}
