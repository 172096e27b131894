import Foundation
import TestSupport
import Testing

/// The README's and `docs/`' lists, checked against the code they describe: the commands and their flags (against
/// the built tool's help), the Debian packages (against Package.swift and scripts/install-deps.sh), the source
/// layout (against the folders), the settings (against the sources), and the benchmark figures and chart (against
/// docs/benchmarks.md). A failure names what to add or remove. (The exit-code table is ExitStatusTests'.)
@Suite("The documentation agrees with the code", .heavy)
struct DocumentationTests {
    /// One command's help: the first paragraph of its overview, and its flags (long names; `--help` and the
    /// `--version` every help shows left out).
    struct CommandHelp {
        var abstract: String
        var flags: [String]
        var shortFlags: [String: String]
    }

    /// The lines of `help` under the header `name:` (`SUBCOMMANDS`, `OPTIONS`), up to the next header.
    static func helpSection(_ name: String, of help: String) -> [Substring] {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == name + ":" }) else { return [] }
        return Array(
            lines[(start + 1)...].prefix { $0.isEmpty || $0.hasPrefix(" ") })
    }

    /// The subcommands `cloudassets --help` lists, in its order.
    static func subcommands() async throws -> [String] {
        let result = try await runTool("cloudassets", ["--help"])
        expectSuccess(result)
        let names = helpSection("SUBCOMMANDS", of: result.stdout).compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
            let name = line.dropFirst(2).prefix { $0 != " " }
            return name.allSatisfy({ $0.isLowercase || $0 == "-" }) && !name.isEmpty ? String(name) : nil
        }
        #expect(names.count > 10, "cloudassets --help lists its subcommands: \(result.stdout)")
        return names
    }

    static func help(of command: String) async throws -> CommandHelp {
        let result = try await runTool("cloudassets", [command, "--help"])
        expectSuccess(result)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let overview = try #require(lines.first { $0.hasPrefix("OVERVIEW: ") }, "\(command) --help has an overview")
        var abstract = [String(overview.dropFirst("OVERVIEW: ".count))]
        for line in lines.drop(while: { $0 != overview }).dropFirst() {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { break }
            abstract.append(line.trimmingCharacters(in: .whitespaces))
        }
        var flags: [String] = []
        var shortFlags: [String: String] = [:]
        for line in helpSection("OPTIONS", of: result.stdout) where line.hasPrefix("  -") {
            // The names come first ("-o, --output <output>"), then the description after a gap.
            let names = line.split(separator: " ").prefix { $0.hasPrefix("-") || $0.hasPrefix("<") }
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
            guard let long = names.first(where: { $0.hasPrefix("--") }) else { continue }
            let takesValue = names.contains { $0.hasPrefix("<") }
            if long == "--help" || (long == "--version" && !takesValue) { continue }
            flags.append(long)
            if let short = names.first(where: { $0.count == 2 && $0.hasPrefix("-") }) { shortFlags[long] = short }
        }
        return CommandHelp(abstract: abstract.joined(separator: " "), flags: flags, shortFlags: shortFlags)
    }

    /// The `--flag` names in `text`'s code spans.
    static func flagNames(in text: String) -> [String] {
        MarkdownText.codeSpans(text).compactMap { span in
            guard span.hasPrefix("--") else { return nil }
            return String(span.prefix { !$0.isWhitespace && $0 != "=" })
        }
    }

    // MARK: - Commands and flags

    @Test func everySubcommandIsInTheReadmeAndInDocsCLI() async throws {
        let commands = try await Self.subcommands()
        let readme = MarkdownText(text: try Repository.text("README.md"))
        let glance = try #require(
            readme.section("## The command-line tool at a glance"), "the README has the CLI at a glance")
        let listed = glance.split(separator: "\n").filter { $0.hasPrefix("- ") }.flatMap {
            MarkdownText.codeSpans(String($0))
        }
        #expect(Set(listed) == Set(commands), "the README's command list names exactly `cloudassets --help`'s")
        #expect(listed.count == Set(listed).count, "the README names each command once")

        let cli = MarkdownText(text: try Repository.text("docs/cli.md"))
        let table = MarkdownText.tableRows(try #require(cli.section("## Commands"), "docs/cli.md has Commands"))
        let documented = table.compactMap { MarkdownText.codeSpans($0.first ?? "").first }
        #expect(documented == commands, "docs/cli.md's table lists the subcommands in `cloudassets --help`'s order")
    }

    @Test func docsCLIDescribesEachCommandAsItsHelpDoes() async throws {
        let cli = MarkdownText(text: try Repository.text("docs/cli.md"))
        let common = try #require(cli.section("## Options every command takes"), "docs/cli.md has the options")
        let firstParagraph = common.split(separator: "\n\n").first { !$0.trimmingCharacters(in: .newlines).isEmpty }
        let commonFlags = Self.flagNames(in: String(firstParagraph ?? ""))
        let sync = try await Self.help(of: "sync")
        #expect(!commonFlags.isEmpty && commonFlags.allSatisfy(sync.flags.contains), "common options: \(commonFlags)")

        let rows = MarkdownText.tableRows(try #require(cli.section("## Commands")))
        for row in rows where row.count == 3 {
            let command = try #require(MarkdownText.codeSpans(row[0]).first)
            let help = try await Self.help(of: command)
            let takesCommon = row[2].contains("the common options")
            let own = help.flags.filter { !(takesCommon && commonFlags.contains($0)) }
            let cell = own.map { flag in help.shortFlags[flag].map { "`\($0)`/`\(flag)`" } ?? "`\(flag)`" }
                .joined(separator: ", ")
            let expectedCell =
                takesCommon
                ? (["the common options"] + (cell.isEmpty ? [] : [cell])).joined(separator: ", ")
                : (cell.isEmpty ? "none" : cell + " only")
            if takesCommon {
                #expect(commonFlags.allSatisfy(help.flags.contains), "`\(command)` takes every common option")
            } else {
                #expect(
                    !commonFlags.allSatisfy(help.flags.contains),
                    "`\(command)` takes the common options: its row should say so")
            }
            let expectedRow =
                "| `\(command)` | \(help.abstract.replacingOccurrences(of: "|", with: "\\|")) | \(expectedCell) |"
            #expect(row[1] == help.abstract && row[2] == expectedCell, "docs/cli.md's row should read:\n\(expectedRow)")
        }
    }

    // MARK: - Settings

    @Test func everyPublicLibrarySettingIsInTheSettingsTable() throws {
        let source = try Repository.text("Sources/CloudAssets/Library/AssetLibrary+Configuration.swift")
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("    public struct Configuration") })
        let body = lines[(start + 1)...].prefix { $0 != "    }" }
        let settings = body.compactMap { line -> String? in
            guard line.hasPrefix("        public var ") else { return nil }
            return String(line.dropFirst("        public var ".count).prefix { $0.isLetter || $0.isNumber })
        }
        #expect(settings.count > 20 && settings.contains("storeURL"), "found the settings: \(settings)")
        let document = MarkdownText(text: try Repository.text("docs/configuration.md"))
        let table = try #require(document.section("## Library settings"), "docs/configuration.md has the settings")
        // `upload.partSize` names `upload`.
        let named = Set(
            MarkdownText.tableRows(table).flatMap { MarkdownText.codeSpans($0.first ?? "") }.map {
                String($0.prefix { $0 != "." })
            })
        for setting in settings {
            #expect(named.contains(setting), "docs/configuration.md's settings table names `\(setting)`")
        }
    }

    @Test func everyConfigFileKeyAndEnvironmentVariableOfTheToolIsInTheTable() async throws {
        let document = MarkdownText(text: try Repository.text("docs/configuration.md"))
        let section = try #require(document.section("## The command-line tool"), "the tool's settings are there")
        let spans = Set(
            MarkdownText.tableRows(section).flatMap { $0.flatMap { MarkdownText.codeSpans($0) } }.map {
                String($0.prefix { !$0.isWhitespace })
            })

        // The flags, as the commands' help names them.
        let helpFlags = Set(try await Self.help(of: "sync").flags + Self.help(of: "get").flags)
        let tableFlags = MarkdownText.tableRows(section).flatMap { row in
            MarkdownText.codeSpans(row.count > 1 ? row[1] : "").flatMap { span in
                span.split(separator: " ").filter { $0.hasPrefix("--") }.map(String.init)
            }
        }
        #expect(tableFlags.count >= 10, "\(tableFlags)")
        for flag in tableFlags { #expect(helpFlags.contains(flag), "`\(flag)` is a flag of the tool") }

        // The config file keys, as the tool names them when it refuses an unknown one.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cloudassets-doc-keys-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json")
        try Data(#"{"noSuchKey": "1"}"#.utf8).write(to: config)
        let result = try await runTool(
            "cloudassets", ["ls", "--store", folder.appendingPathComponent("library").path, "--config", config.path])
        let marker = "the known keys are "
        let message = try #require(result.stderr.range(of: marker), "an unknown key is refused: \(result)")
        let keys = result.stderr[message.upperBound...].prefix { $0 != "\n" }.split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        #expect(keys.count >= 10, "\(keys)")
        for key in keys { #expect(spans.contains(key), "docs/configuration.md's table names the config key `\(key)`") }

        // The environment variables the tool's sources read ("CLOUDASSETS_…" and "AWS_…" string literals).
        let testHooks: Set = ["CLOUDASSETS_REPORT_PEAK_RSS"]  // for the memory tests, not a setting
        var variables = Set<String>()
        let literal = try NSRegularExpression(pattern: #""((?:CLOUDASSETS|AWS)_[A-Z0-9_]+)""#)
        for file in Repository.files(under: "Sources/cloudassets", suffix: ".swift") {
            let source = try Repository.text(file)
            for match in literal.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
                variables.insert((source as NSString).substring(with: match.range(at: 1)))
            }
        }
        #expect(variables.count >= 10, "\(variables)")
        let configurationText = try Repository.text("docs/configuration.md")
        for variable in variables.subtracting(testHooks).sorted() {
            #expect(
                spans.contains(variable) || configurationText.contains("`\(variable)`"),
                "docs/configuration.md names the environment variable `\(variable)`")
        }
    }

    @Test func everyMakeTargetTheDocumentationNamesExists() throws {
        let makefile = try Repository.text("Makefile")
        let targets = Set(
            makefile.split(separator: "\n").compactMap { line -> String? in
                guard let colon = line.firstIndex(of: ":"), !line.hasPrefix("\t"), !line.hasPrefix("#") else {
                    return nil
                }
                let name = line[..<colon]
                return name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) ? String(name) : nil
            })
        let absent: Set = ["install"]  // docs/cli.md: "There is no `make install`"
        let documents = ["README.md"] + Repository.files(under: "docs", suffix: ".md")
        for document in documents {
            for span in MarkdownText.codeSpans(try Repository.text(document)) where span.hasPrefix("make ") {
                let words = span.split(separator: " ").dropFirst().filter { !$0.contains("=") && !$0.hasPrefix("|") }
                guard let target = words.first, !absent.contains(String(target)) else { continue }
                #expect(targets.contains(String(target)), "\(document) names `\(span)`: no such Makefile target")
            }
        }
    }

    // MARK: - Debian packages

    /// The Debian package an app builds with, for each library the `CloudAssets` product links (Package.swift's
    /// `linkedLibrary` settings; GRDB's system library `sqlite3`) or takes a header from (libheif's and FFmpeg's,
    /// whose libraries are loaded with dlopen).
    static let buildPackages: [String: String] = [
        "curl": "libcurl4-openssl-dev", "z": "zlib1g-dev", "jpeg": "libjpeg62-turbo-dev", "png16": "libpng-dev",
        "sqlite3": "libsqlite3-dev", "heif": "libheif-dev", "crypto": "libssl-dev", "avformat": "libavformat-dev",
        "avcodec": "libavcodec-dev", "swscale": "libswscale-dev", "avutil": "libavutil-dev",
    ]
    /// The libraries loaded with dlopen, whose headers an app builds with.
    static let loadedLibraries: Set<String> = ["heif", "avformat", "avcodec", "swscale", "avutil"]

    @Test func theReadmeNamesThePackagesAnAppBuildsWith() throws {
        let manifest = try Repository.text("Package.swift")
        var linked = Set<String>()
        var rest = manifest[...]
        while let found = rest.range(of: ".linkedLibrary(\"") {
            let name = rest[found.upperBound...].prefix { $0 != "\"" }
            linked.insert(String(name))
            rest = rest[found.upperBound...]
        }
        linked.remove("dl")  // in libc6
        let heifShim = try Repository.text("Sources/CHeif/CHeif.c")
        #expect(heifShim.contains("#include <libheif/heif.h>") && heifShim.contains("dlopen(\"libheif.so.1\""))
        let videoShim = try Repository.text("Sources/CVideo/CVideo.c")
        for library in ["avformat", "avcodec", "swscale", "avutil"] {
            #expect(
                videoShim.contains("#include <lib\(library)/") && videoShim.contains("CVIDEO_SONAME(\"\(library)\""))
        }
        #expect(
            linked.union(["sqlite3"]).union(Self.loadedLibraries) == Set(Self.buildPackages.keys),
            "Package.swift links \(linked.sorted()): give each its Debian package here and in the README")

        let readme = MarkdownText(text: try Repository.text("README.md"))
        let quickStart = try #require(readme.section("## Library quick start"))
        let start = try #require(quickStart.range(of: "builds with Debian's"), "the README names them")
        let end = try #require(quickStart.range(of: "At run time", range: start.upperBound..<quickStart.endIndex))
        let named = MarkdownText.codeSpans(String(quickStart[start.upperBound..<end.lowerBound]))
        #expect(Set(named) == Set(Self.buildPackages.values), "the README's quick start names \(named)")

        let installed = try Self.installedPackages()
        for package in Self.buildPackages.values {
            #expect(installed.contains(package), "scripts/install-deps.sh installs \(package)")
        }
    }

    /// `scripts/install-deps.sh`'s list of Debian packages (its `debs=(…)`).
    static func installedPackages() throws -> [String] {
        let script = try Repository.text("scripts/install-deps.sh")
        let start = try #require(script.range(of: "debs=("))
        let end = try #require(script.range(of: ")", range: start.upperBound..<script.endIndex))
        return script[start.upperBound..<end.lowerBound].split(whereSeparator: \.isWhitespace).map(String.init)
    }

    @Test func theReadmeNamesThePackagesTheTwoCommandsInstall() throws {
        let readme = MarkdownText(text: try Repository.text("README.md"))
        let section = try #require(readme.section("## Two commands"))
        let start = try #require(section.range(of: "Both commands need Debian's"))
        let end = try #require(section.range(of: "run as root", range: start.upperBound..<section.endIndex))
        let named = MarkdownText.codeSpans(String(section[start.upperBound..<end.lowerBound]))
        #expect(Set(named) == Set(try Self.installedPackages()), "the README names install-deps.sh's packages")
    }

    // MARK: - The source layout

    @Test func theLayoutBlockNamesEveryFolder() throws {
        let layout = MarkdownText(text: try Repository.text("docs/layout.md"))
        let blocks = layout.codeBlocks
        try #require(blocks.count >= 2, "docs/layout.md has the layout block and the engine map")
        let block = blocks[0]
        func names(_ path: String) -> Bool {
            block.range(
                of: NSRegularExpression.escapedPattern(for: path) + "(?![A-Za-z0-9_-])", options: .regularExpression)
                != nil
        }
        for top in ["Sources", "Tests", "TestServer", "Benchmarks", "Fuzz"] {
            for folder in try Repository.folders(in: top) {
                #expect(names("\(top)/\(folder)"), "docs/layout.md's block names \(top)/\(folder)")
            }
        }
        for folder in try Repository.folders(in: "Sources/CloudAssets") {
            #expect(names("\(folder)/"), "docs/layout.md's block names Sources/CloudAssets/\(folder)/")
        }
        // And names no folder that is gone.
        let pattern = try NSRegularExpression(
            pattern: #"\b(Sources|Tests|TestServer|Benchmarks|Fuzz)/([A-Za-z0-9_.-]+)"#)
        for match in pattern.matches(in: block, range: NSRange(block.startIndex..., in: block)) {
            let path = (block as NSString).substring(with: match.range)
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(
                atPath: Repository.root.appendingPathComponent(path).path, isDirectory: &isFolder)
            #expect(exists, "docs/layout.md names \(path), which does not exist")
        }
    }

    @Test func theEngineMapNamesEveryEngine() throws {
        let layout = MarkdownText(text: try Repository.text("docs/layout.md"))
        let map = try #require(layout.codeBlocks.dropFirst().first, "docs/layout.md has the engine map")
        // The engines: what the library holds (its stored properties) that is a class of the library's own.
        let facade = try Repository.text("Sources/CloudAssets/Library/AssetLibrary.swift")
        var classes = Set<String>()
        for file in Repository.files(under: "Sources/CloudAssets", suffix: ".swift") {
            for match in try Repository.text(file).matches(of: /\nfinal class (\w+)/) {
                classes.insert(String(match.1))
            }
        }
        let engines = facade.matches(of: /\n    let \w+: (\w+)\??\n/).map { String($0.1) }.filter(classes.contains)
        #expect(engines.count >= 7, "found the engines: \(engines)")
        for engine in engines {
            #expect(
                map.range(of: "\\b\(engine)\\b", options: .regularExpression) != nil,
                "docs/layout.md's engine map names \(engine)")
        }
    }

    // MARK: - Benchmarks

    @Test func theReadmesBenchmarkRowsAreRowsOfTheFullTable() throws {
        let full = try Repository.text("docs/benchmarks.md")
        var rows: [String: [String]] = [:]
        var inTable = false
        for line in full.split(separator: "\n") {
            let cells = line.components(separatedBy: " | ").map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.first == "benchmark" && cells.count == 8 {
                inTable = true
                continue
            }
            if inTable && line.contains("targets met") { break }
            if inTable && cells.count == 8 { rows[cells[0]] = cells }
        }
        #expect(rows.count > 40, "docs/benchmarks.md holds the full table")
        let readme = MarkdownText(text: try Repository.text("README.md"))
        let headline = MarkdownText.tableRows(try #require(readme.section("## Benchmarks")))
        #expect(headline.count >= 8)
        for row in headline {
            let cells = try #require(rows[row[0]], "docs/benchmarks.md has the README's row \(row[0])")
            #expect(row[1] == cells[1] + " " + cells[2], "\(row[0]): value")
            #expect(row[2] == cells[3], "\(row[0]): reference")
            #expect(row[3] == cells[5].replacingOccurrences(of: "x", with: "×"), "\(row[0]): ratio")
            #expect(row[4] == cells[6] && row[5] == cells[7], "\(row[0]): target and verdict")
        }
    }

    @Test func theBenchmarkChartIsDrawnFromTheCurrentTable() async throws {
        let process = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            arguments: [
                "python3", Repository.root.appendingPathComponent("scripts/bench-chart.py").path,
                Repository.root.appendingPathComponent("docs/benchmarks.md").path, "-o", "-",
            ],
            environment: ["PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"], timeout: .seconds(60))
        let result = await process.finish()
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stdout == (try Repository.text("docs/benchmarks.svg")),
            "docs/benchmarks.svg is not the chart of docs/benchmarks.md's table: run `make bench-chart`")
    }
}
