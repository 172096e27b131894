import Foundation
import Testing

/// Checks that a run failed the way a user-facing error must: the given exit status, exactly one line on
/// standard error starting with `error:` and mentioning `fragment`, nothing on standard output, and no crash
/// or stack trace.
func expectUserError(
    _ result: CLIResult, status: Int32, mentioning fragment: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(!result.killedBySignal && !result.timedOut, "\(result)", sourceLocation: sourceLocation)
    #expect(result.status == status, "\(result)", sourceLocation: sourceLocation)
    let lines = result.stderrLines
    #expect(lines.count == 1, "expected one line on stderr: \(result)", sourceLocation: sourceLocation)
    let line = lines.first ?? ""
    #expect(line.hasPrefix("error: "), "\(result)", sourceLocation: sourceLocation)
    #expect(line.localizedCaseInsensitiveContains(fragment), "\(result)", sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
    for crash in ["Fatal error", "stack trace", "Stack dump", "Swift runtime failure"] {
        #expect(!result.stderr.contains(crash), "\(result)", sourceLocation: sourceLocation)
    }
}

/// Checks that a run succeeded.
func expectSuccess(_ result: CLIResult, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(
        result.status == 0 && !result.killedBySignal && !result.timedOut, "\(result)", sourceLocation: sourceLocation)
}

/// Polls a real condition (a file growing, a log entry appearing) until it holds or `deadline` passes.
/// Returns whether it held. The short pause between checks only paces the polling; the outcome never
/// depends on it.
func poll(deadline: Duration = .seconds(15), _ condition: () throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let end = clock.now + deadline
    while clock.now < end {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try condition()
}

/// Checks two byte buffers are equal. On a mismatch it reports the sizes and the first differing offset,
/// never the bytes themselves (a diff of megabytes would take the test runner minutes to compute).
func expectSameBytes(
    _ actual: Data, _ expected: Data, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    let same = actual == expected
    var detail = ""
    if !same {
        let firstDifference = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        detail =
            "\(what): \(actual.count) bytes, expected \(expected.count); first difference at "
            + (firstDifference.map(String.init) ?? "the end of the shorter one")
    }
    #expect(same, "\(detail)", sourceLocation: sourceLocation)
}
