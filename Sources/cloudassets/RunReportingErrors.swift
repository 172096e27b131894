import ArgumentParser

/// Runs a command body, turning any error into one line on stderr and a non-zero exit.
func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let exit as ExitCode {
        throw exit
    } catch is CancellationError {
        Terminal.shared.err("error: cancelled")
        throw ExitStatus.interrupted.exitCode
    } catch {
        Terminal.shared.endLive()
        Terminal.shared.err("error: \(UserMessage.describe(error))")
        throw ExitStatus.of(error).exitCode
    }
}
