import ArgumentParser
import CFileIO
import CommandLineSupport
import Foundation

/// `cloudassets`: the root command, which only names the subcommands (one file each, `<Name>Command.swift`).
@main
struct CloudAssetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloudassets",
        abstract: "Work with a photo library whose originals live in an S3 bucket.",
        subcommands: [
            Demo.self, Sync.self, List.self, Get.self, Add.self, Remove.self, Restore.self, EmptyTrash.self,
            Favorite.self, Unfavorite.self, Hide.self, Unhide.self, ContentEdit.self, Revert.self, Pin.self, Unpin.self,
            Evict.self, Watch.self,
            Image.self, Thumbnail.self, Serve.self, Status.self, ExitCodes.self,
        ])

    /// Parses and runs the command, ending with a status of ``ExitStatus``: help exits 0; a command line that does
    /// not parse or validate (an unknown flag or subcommand, a missing argument or value, a bad value) exits
    /// ``ExitStatus/usage`` (2) with one `error:` line, not ArgumentParser's own 64 (EX_USAGE); an error a command
    /// throws exits ``ExitStatus/of(_:)``.
    static func main() async {
        keepFreedMemoryForReuse()
        await main(arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// glibc gives the top of a thread's heap back to the kernel as soon as 128 KiB of it is free, and takes it
    /// back (`mprotect`, then a page fault per page) at the next allocation: a `get` of 2,000 small originals did
    /// that 4,600 times (2.3 per object). Keeping up to 64 MiB free at the top, and growing by 16 MiB at a time,
    /// cut it to ~340 and the command's wall time by about a tenth; peak memory is unchanged (what is kept is what
    /// was in use before). Setting these fixes glibc's threshold for serving an allocation with its own mapping,
    /// which it would otherwise raise as large blocks are freed: it is set to where glibc's own adjustment ends
    /// (32 MiB; the 64 MiB kept is its matching trim threshold). The process's own setting, made before any
    /// thread starts; the library sets nothing.
    private static func keepFreedMemoryForReuse() {
        cfileio_keep_freed_memory(64 << 20, 16 << 20, 32 << 20)
    }

    static func main(arguments: [String]) async {
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
