import Foundation
import Testing

/// The package version is written once (`PackageVersion.current`, in CommandLineSupport): both executables print
/// it, and CHANGELOG.md follows it — `X.Y.Z-dev` while `[Unreleased]` leads to the release `X.Y.Z`, which has no
/// section yet and comes after every released one; `X.Y.Z` once released, then the newest version section.
@Suite("The package version")
struct VersionTests {
    /// `0.MINOR.PATCH` and an optional `-dev`, as CHANGELOG.md's tag scheme says.
    static func parse(_ version: String) -> (numbers: [Int], isDevelopment: Bool)? {
        let isDevelopment = version.hasSuffix("-dev")
        let numbers = version.dropLast(isDevelopment ? 4 : 0).split(separator: ".", omittingEmptySubsequences: false)
            .map { Int($0) }
        guard numbers.count == 3, numbers.allSatisfy({ $0 != nil }), numbers[0] == 0 else { return nil }
        return (numbers.compactMap { $0 }, isDevelopment)
    }

    @Test func bothExecutablesPrintTheVersionTheChangelogFollows() async throws {
        let cli = try await runTool("cloudassets", ["--version"])
        let fake = try await runTool("fake-s3", ["--version"])
        expectSuccess(cli)
        expectSuccess(fake)
        let version = cli.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(fake.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == version, "fake-s3 prints the same")
        let parsed = try #require(Self.parse(version), "`\(version)` is 0.MINOR.PATCH, maybe with -dev")

        let changelog = try Repository.text("CHANGELOG.md")
        let headings = changelog.split(separator: "\n").filter { $0.hasPrefix("## [") }.map { heading in
            String(heading.dropFirst(4).prefix { $0 != "]" })
        }
        #expect(headings.first == "Unreleased", "CHANGELOG.md's first section is [Unreleased]")
        let released = headings.dropFirst()
        for heading in changelog.split(separator: "\n")
        where heading.hasPrefix("## [") && !heading.contains("Unreleased") {
            #expect(
                heading.range(of: #"^## \[0\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}$"#, options: .regularExpression) != nil,
                "a released section reads `## [0.MINOR.PATCH] - YYYY-MM-DD`: \(heading)")
        }
        let releasedNumbers = released.compactMap { Self.parse($0)?.numbers }
        if parsed.isDevelopment {
            let next = parsed.numbers.map(String.init).joined(separator: ".")
            #expect(!released.contains(next), "\(next) is released already: the version should be past it")
            for earlier in releasedNumbers {
                #expect(earlier.lexicographicallyPrecedes(parsed.numbers), "\(version) comes after \(earlier)")
            }
        } else {
            #expect(released.first == version, "the newest section of CHANGELOG.md is \(version)'s")
        }
    }

    /// Keep a Changelog's form: every version heading is a link, defined at the bottom (`[Unreleased]: <url>`), and
    /// the entries say what changed without pointing at an issue tracker the reader may not see.
    @Test func everyChangelogHeadingHasItsLinkAndNoEntryNamesAnIssue() throws {
        let changelog = try Repository.text("CHANGELOG.md")
        let lines = changelog.split(separator: "\n")
        let headings = lines.filter { $0.hasPrefix("## [") }.map { String($0.dropFirst(4).prefix { $0 != "]" }) }
        #expect(headings.contains("Unreleased"))
        let readme = try Repository.text("README.md")
        let packageURL = try #require(
            readme.range(of: #"\.package\(url: "https://[^"]+\.git""#, options: .regularExpression),
            "the README names the package's URL")
        let repository = String(readme[packageURL].dropFirst(#".package(url: ""#.count).dropLast(#".git""#.count))
        for heading in headings {
            let definition = lines.first { $0.hasPrefix("[\(heading)]: ") }
            #expect(definition != nil, "CHANGELOG.md defines the link of [\(heading)] at the bottom")
            #expect(
                definition?.dropFirst("[\(heading)]: ".count).hasPrefix(repository + "/") == true,
                "[\(heading)]'s link is on the README's repository, \(repository)")
        }
        for line in lines where line.range(of: #"\b[Ii]ssues? \d|#\d"#, options: .regularExpression) != nil {
            Issue.record("CHANGELOG.md names an issue by number: \(line)")
        }
    }
}
