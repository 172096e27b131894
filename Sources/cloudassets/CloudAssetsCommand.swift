import ArgumentParser
import CommandLineSupport
import Foundation

/// `cloudassets`: the root command, which only names the subcommands (one file each, `<Name>Command.swift`).
@main
struct CloudAssetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloudassets",
        abstract: "Work with a photo library whose originals live in an S3 bucket.",
        discussion: "'cloudassets --version' prints the package version.",
        subcommands: [
            Demo.self, Sync.self, List.self, Get.self, Add.self, Remove.self, Restore.self, EmptyTrash.self,
            Favorite.self, Unfavorite.self, Hide.self, Unhide.self, ContentEdit.self, Revert.self, Pin.self, Unpin.self,
            Evict.self, Watch.self, Album.self,
            Image.self, Thumbnail.self, Play.self, Serve.self, Status.self, Doctor.self, ExitCodes.self,
        ])

    /// Parses and runs the command, ending with a status of ``ExitStatus``: help exits 0; a command line that does
    /// not parse or validate (an unknown flag or subcommand, a missing argument or value, a bad value) exits
    /// ``ExitStatus/usage`` (2) with one `error:` line, not ArgumentParser's own 64 (EX_USAGE); an error a command
    /// throws exits ``ExitStatus/of(_:)``.
    static func main() async {
        await main(arguments: Array(CommandLine.arguments.dropFirst()))
    }

    static func main(arguments: [String]) async {
        // `--version` alone prints the package version. Not an ArgumentParser flag: a root flag is also taken after
        // a subcommand, where `get --version original` is `get`'s own option, and `CommandConfiguration(version:)`
        // would list a second `--version` in every subcommand's help.
        if arguments == ["--version"] {
            print(PackageVersion.current)
            Foundation.exit(0)
        }
        await runReportingOneLine(
            arguments: arguments,
            usageLine: { message in
                let lowered = message.prefix(1).lowercased() + message.dropFirst()
                let subcommand = configuration.subcommands.map { $0._commandName }.first { arguments.first == $0 }
                return "\(lowered) (see 'cloudassets \(subcommand.map { $0 + " " } ?? "")--help')"
            },
            usageStatus: ExitStatus.usage.rawValue,
            failure: { error in
                Terminal.shared.endLive()
                return (UserMessage.describe(error), ExitStatus.of(error).rawValue)
            })
    }
}
