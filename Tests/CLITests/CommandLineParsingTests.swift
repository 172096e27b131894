import Foundation
import TestSupport
import Testing

/// A command line that does not parse or validate, in any subcommand, exits 2 (`usage` in docs/cli.md's table of
/// exit codes, not ArgumentParser's own 64) with one `error:` line that names the help to read; help exits 0.
/// Each kind is run against the built `cloudassets`: an unknown flag, an unknown subcommand, a missing argument
/// or value, a bad value.
@Suite("cloudassets command lines that do not parse", .heavy)
struct CommandLineParsingTests {
    /// Every subcommand, `exit-codes` included.
    static let subcommands = [
        "demo", "sync", "ls", "get", "add", "rm", "restore", "empty-trash", "favorite", "unfavorite", "hide", "unhide",
        "pin", "unpin", "evict", "watch", "serve", "status", "exit-codes",
    ]

    /// The subcommands with a required positional argument (assets, or files for `add`).
    static let subcommandsWithArguments = [
        "get", "add", "rm", "restore", "favorite", "unfavorite", "hide", "unhide", "pin", "unpin", "evict",
    ]

    /// Runs `cloudassets` with `arguments` to the end, with no configuration to read (an empty HOME).
    static func run(_ arguments: [String]) async throws -> CLIResult {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cloudassets-parse-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        return try await ChildProcess(
            executable: try CLIBinary.locate(), arguments: arguments,
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home.path], timeout: .seconds(30)
        ).finish()
    }

    @Test(arguments: subcommands)
    func anUnknownFlagExitsTwo(subcommand: String) async throws {
        // After the required argument, if any: a missing argument is reported first.
        let argument = Self.subcommandsWithArguments.contains(subcommand) ? ["1"] : []
        let result = try await Self.run([subcommand] + argument + ["--no-such-flag"])
        expectUserError(
            result, status: 2, mentioning: "unknown option '--no-such-flag' (see 'cloudassets \(subcommand) --help')")
    }

    @Test(arguments: [
        (["no-such-command"], "unexpected argument 'no-such-command'"),
        (["lst"], "unexpected argument 'lst'"),
        // The root command knows no flag but help: the first one is reported.
        (["no-such-command", "--store", "x"], "unknown option '--store'"),
    ])
    func anUnknownSubcommandExitsTwo(arguments: [String], message: String) async throws {
        let result = try await Self.run(arguments)
        expectUserError(result, status: 2, mentioning: message + " (see 'cloudassets --help')")
    }

    @Test(arguments: subcommandsWithArguments)
    func aMissingArgumentExitsTwo(subcommand: String) async throws {
        let result = try await Self.run([subcommand])
        // The commands that act on assets take them by name or by --prefix: their message names both.
        let selects = ["get", "pin", "unpin", "evict", "favorite", "unfavorite", "restore", "hide", "rm", "unhide"]
        let message =
            selects.contains(subcommand)
            ? "name the assets by id or key, or select them with --prefix" : "missing expected argument"
        expectUserError(result, status: 2, mentioning: message)
        #expect(result.stderr.contains("(see 'cloudassets \(subcommand) --help')"), "\(result)")
    }

    @Test(arguments: [
        (["sync", "--store"], "missing value for '--store <store>'"),
        (["ls", "--state"], "missing value for '--state <state>'"),
        (["get", "1", "--range"], "missing value for '--range <range>'"),
        (["watch", "--interval", "-1"], "missing value for '--interval <interval>'"),
    ])
    func aMissingValueExitsTwo(arguments: [String], message: String) async throws {
        let result = try await Self.run(arguments)
        expectUserError(result, status: 2, mentioning: message)
    }

    @Test(arguments: [
        (["ls", "--limit", "many"], "the value 'many' is invalid for '--limit <limit>'"),
        (["demo", "--assets", "lots"], "the value 'lots' is invalid for '--assets <assets>'"),
        (["watch", "--interval", "soon"], "the value 'soon' is invalid for '--interval <interval>'"),
        (["rm", "1", "--no-wait=yes"], "'--no-wait' does not take any value"),
        // Refused by the command's own validation, after parsing.
        (["watch", "--interval=-1"], "--interval must be 0 or more seconds"),
        (["watch", "--retry-base", "0"], "--retry-base must be positive"),
        (["serve", "--port", "70000"], "--port must be 0…65535"),
        (["serve", "--pick-callback", "file:///etc/passwd"], "--pick-callback must be an http or https URL"),
    ])
    func aBadValueExitsTwo(arguments: [String], message: String) async throws {
        let result = try await Self.run(arguments)
        expectUserError(result, status: 2, mentioning: message)
        #expect(result.stderr.contains("(see 'cloudassets \(arguments[0]) --help')"), "\(result)")
    }

    @Test(arguments: subcommands)
    func helpExitsZero(subcommand: String) async throws {
        for arguments in [[subcommand, "--help"], [subcommand, "-h"], ["help", subcommand]] {
            let result = try await Self.run(arguments)
            expectSuccess(result)
            #expect(result.stdout.contains("USAGE: cloudassets \(subcommand)"), "\(arguments): \(result)")
            #expect(result.stderr.isEmpty, "\(arguments): \(result)")
        }
    }

    @Test(arguments: [["--help"], ["-h"], ["help"], []])
    func rootHelpExitsZero(arguments: [String]) async throws {
        let result = try await Self.run(arguments)
        expectSuccess(result)
        #expect(result.stdout.contains("USAGE: cloudassets <subcommand>"), "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
    }
}
