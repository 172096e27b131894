import ArgumentParser

/// `cloudassets exit-codes`: prints ``ExitStatus/markdownTable``, the table of exit codes in docs/cli.md.
struct ExitCodes: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exit-codes", abstract: "Print the table of exit codes (as in docs/cli.md).")

    func run() throws { print(ExitStatus.markdownTable) }
}
