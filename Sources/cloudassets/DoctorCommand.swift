import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets doctor`: one line each for the credentials, endpoint and addressing, TLS, the bucket, the
/// library's binding and the clock; exits with the status of the first problem (0 when there is none).
struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the credentials, endpoint, TLS, bucket, binding and clock, one line each.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let report: ConnectionReport
        do {
            let library = try await global.openLibrary(runsDownloads: false)
            defer { library.close() }
            report = await library.checkConnection()
        } catch {
            // The library could not open (credentials missing, a configuration refused, a busy folder): that is
            // the one line there is to say.
            let aspect = ExitStatus.of(error) == .credentials ? "credentials" : "library"
            line(ok: false, aspect: aspect, UserMessage.describe(error))
            throw ExitStatus.of(error).exitCode
        }
        print(report)
        if let first = report.problems.first { throw ExitStatus.of(first).exitCode }
    }

    private func line(ok: Bool, aspect: String, _ summary: String) {
        if json {
            let fields = ["aspect": aspect, "summary": summary, "ok": ok ? "true" : "false"]
            let data = (try? JSONSerialization.data(withJSONObject: [fields], options: [.sortedKeys])) ?? Data()
            Terminal.shared.out(String(decoding: data, as: UTF8.self))
            return
        }
        let name = (aspect + ":").padding(toLength: 13, withPad: " ", startingAt: 0)
        Terminal.shared.out("\(ok ? "ok  " : "FAIL") \(name)\(TextEscape.cStyle(summary))")
    }

    private func print(_ report: ConnectionReport) {
        if json {
            struct Line: Encodable {
                var aspect: String
                var summary: String
                var ok: Bool
                var code: String?
            }
            let lines = report.checks.map {
                Line(
                    aspect: $0.aspect.rawValue, summary: $0.summary, ok: $0.problem == nil,
                    code: $0.problem?.code.description)
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            Terminal.shared.out(String(decoding: (try? encoder.encode(lines)) ?? Data(), as: UTF8.self))
            return
        }
        for check in report.checks { line(ok: check.problem == nil, aspect: check.aspect.rawValue, check.summary) }
    }
}
