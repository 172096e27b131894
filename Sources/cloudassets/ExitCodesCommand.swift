import ArgumentParser

/// `cloudassets exit-codes`: prints ``ExitStatus/markdownTable``, the README's table of exit codes.
struct ExitCodes: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exit-codes", abstract: "Print the table of exit codes (as in the README).")

    func run() throws { print(ExitStatus.markdownTable) }
}
