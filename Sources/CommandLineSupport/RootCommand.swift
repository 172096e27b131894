import ArgumentParser
import Foundation

extension AsyncParsableCommand {
    /// Parses `arguments` as this root command's line, runs the command it names and ends the process — what
    /// `cloudassets` and `fake-s3` share, so that both speak to a user the same way:
    ///
    /// - help and `--version` print and exit 0 (also help asked for by running a command group);
    /// - a line that does not parse or validate prints one `error:` line (ArgumentParser's message folded onto
    ///   one line, passed through `usageLine`) and exits with `usageStatus` (2), not ArgumentParser's 64;
    /// - an `ExitCode` thrown by the command ends with that code;
    /// - any other failure prints `error: ` and the first value of `failure` on one line, and exits with the
    ///   second.
    /// - Parameters:
    ///   - arguments: The command line without the program name.
    ///   - usageLine: Turns the folded parse message into the line printed after `error: `.
    ///   - usageStatus: The exit status of a line that does not parse or validate.
    ///   - failure: The message and exit status for an error the command threw.
    public static func runReportingOneLine(
        arguments: [String], usageLine: @Sendable (String) -> String = { $0 }, usageStatus: Int32 = 2,
        failure: @Sendable (any Error) -> (message: String, status: Int32)
    ) async -> Never {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            printHelpAndExitIfAsked(error)
            let folded = message(for: error).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "; ")
            FileHandle.standardError.write(Data("error: \(usageLine(folded))\n".utf8))
            Foundation.exit(usageStatus)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            printHelpAndExitIfAsked(error)
            let (message, status) = failure(error)
            FileHandle.standardError.write(Data("error: \(message)\n".utf8))
            Foundation.exit(status)
        }
        Foundation.exit(0)
    }

    private static func printHelpAndExitIfAsked(_ error: any Error) {
        guard exitCode(for: error) == .success else { return }
        print(fullMessage(for: error))
        Foundation.exit(0)
    }
}
