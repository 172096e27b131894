import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets watch`: prints every change to the library as a JSON line, syncing every `--interval` seconds.
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print change notifications as JSON lines until interrupted (syncs every --interval seconds).",
        discussion: """
            A sync that fails is reported as one line on stderr and retried after 1 s, 2 s, 4 s … (at most \
            5 minutes); when a sync succeeds again, "sync recovered after N failure(s)" is printed on stderr.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "Seconds between syncs (0: never sync, only watch).") var interval: Double = 30
    /// The first retry delay after a failed sync; for tests, so that retries come fast.
    @Option(name: .customLong("retry-base"), help: .hidden) var retryBase: Double = 1

    func validate() throws {
        guard interval >= 0, interval.isFinite else { throw ValidationError("--interval must be 0 or more seconds") }
        guard retryBase > 0, retryBase.isFinite else { throw ValidationError("--retry-base must be positive") }
    }

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(requireRemote: interval > 0)
            defer { library.close() }
            let stream = library.changes
            if !global.quiet {
                // From here on every commit — this process's or another's — is printed.
                Terminal.shared.err("watching \(library.configuration.storeURL.path): one JSON line per change")
            }
            let backoff = SyncBackoff(base: retryBase)
            try await withInterrupt {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await change in stream {
                            Terminal.shared.out(ChangeJSON.line(for: change))
                        }
                    }
                    if interval > 0 {
                        group.addTask {
                            var failures = 0
                            while !Task.isCancelled {
                                let delay: Double
                                do {
                                    try await library.sync()
                                    if failures > 0 {
                                        Terminal.shared.err(
                                            "sync recovered after \(failures) failure\(failures == 1 ? "" : "s")")
                                    }
                                    failures = 0
                                    delay = interval
                                } catch {
                                    if Task.isCancelled { throw CancellationError() }
                                    failures += 1
                                    delay = backoff.delay(afterFailures: failures)
                                    Terminal.shared.err(
                                        "error: sync failed (failure \(failures)): \(UserMessage.describe(error)); "
                                            + "retrying in \(SyncBackoff.format(delay))")
                                }
                                try await Task.sleep(for: .seconds(delay))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }
}
