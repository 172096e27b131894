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
        var report: ConnectionReport
        do {
            let library = try await global.openLibrary(runsDownloads: false)
            defer { library.close() }
            report = await library.checkConnection()
            let refused = report.problems.first
            report.checks = report.checks.map { told(library, $0, refused: refused) }
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

    /// A check in this tool's terms: where fixed keys really came from (the environment, the config file), what to
    /// check for refused keys (the variable, the config file's field, or the profile and its file), and the clock
    /// measured from the service's error answer when no listing answered (failed, with the refusal's error, past
    /// the 15 minutes S3 accepts).
    private func told(_ library: AssetLibrary, _ check: ConnectionReport.Check, refused: CloudAssetsError?)
        -> ConnectionReport.Check
    {
        var check = check
        let fixed = global.fixedCredentialSource()
        if check.aspect == .credentials, let fixed, check.summary.hasPrefix(Self.givenInConfiguration) {
            check.summary = fixed.source + check.summary.dropFirst(Self.givenInConfiguration.count)
        }
        if check.problem?.code == .accessDenied {
            let hint: (secret: String, key: String)?
            if let fixed {
                hint = (fixed.secret, fixed.key)
            } else if let source = library.credentialSource, source.provider != "env" {
                let profile = source.profile.map { "of profile \($0) " } ?? ""
                let file = source.detail.map { "in \($0)" } ?? "(\(source.description))"
                hint =
                    source.provider == "shared-credentials-file" || source.provider == "config-file"
                    ? ("aws_secret_access_key \(profile)\(file)", "aws_access_key_id \(profile)\(file)")
                    : ("the credentials of \(source.description)", "the credentials of \(source.description)")
            } else {
                hint = nil
            }
            if let hint {
                check.summary = check.summary
                    .replacingOccurrences(of: "(check AWS_SECRET_ACCESS_KEY)", with: "(check \(hint.secret))")
                    .replacingOccurrences(of: "(check AWS_ACCESS_KEY_ID)", with: "(check \(hint.key))")
            }
        }
        if check.aspect == .clock, check.summary.hasPrefix("not measured"),
            let skew = library.clockSkewOfLastErrorAnswer
        {
            // No listing answered, but the service's refusal carried its Date: the clocks are measured from it.
            check.summary =
                (abs(skew) < 2
                    ? "agrees with this computer's (to the second a Date header shows)"
                    : String(format: "the service's clock is %+.0f s from this computer's", skew))
                + " (measured from the service's error answer)"
                + (abs(skew) > 15 * 60 ? ": more than the 15 minutes S3 accepts" : "")
            if abs(skew) > 15 * 60 { check.problem = refused }
        }
        return check
    }

    /// What the library says of keys given in its configuration, which this tool rewords with their real source.
    static let givenInConfiguration = "given in the configuration"

    private func line(ok: Bool, aspect: String, _ summary: String) {
        if json {
            let fields = ["aspect": aspect, "summary": summary, "ok": ok ? "true" : "false"]
            // try?: encoding a dictionary of strings cannot fail
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
            // try?: encoding these string-only values cannot fail
            Terminal.shared.out(String(decoding: (try? encoder.encode(lines)) ?? Data(), as: UTF8.self))
            return
        }
        for check in report.checks { line(ok: check.problem == nil, aspect: check.aspect.rawValue, check.summary) }
    }
}
