package import Foundation

/// How often and how patiently to retry: capped exponential backoff with full jitter
/// (a random delay between zero and `min(maxDelay, baseDelay × 2^(attempt-1))`).
///
/// Only failures that another attempt may cure are retried: connection errors, stalls, HTTP 5xx and
/// SlowDown (see ``S3Error/isRetryable``). Each attempt is signed afresh. A download attempt that kept at least
/// ``immediateResumeBytes`` before it was cut off is continued at once, without a backoff: the service was
/// answering, and waiting would only lengthen the download (a failure that brings no bytes backs off as usual,
/// so a service that keeps failing is never hammered). A `Retry-After` the service sends with an error (seconds
/// or an HTTP date) is honoured, up to ``maxDelay``: the wait is the longer of it and the backoff.
package struct RetryPolicy: Sendable, Hashable {
    /// The most attempts in a row that fail (1 means no retry). A download attempt that added bytes before it
    /// failed starts the count again: a body interrupted now and then still completes, while a request that
    /// keeps failing at once stops after this many.
    package var maxAttempts: Int
    /// The backoff cap before the first retry, in seconds.
    package var baseDelay: TimeInterval
    /// The largest backoff cap, in seconds.
    package var maxDelay: TimeInterval

    /// - Parameters:
    ///   - maxAttempts: Attempts in all, at least 1.
    ///   - baseDelay: First backoff cap in seconds.
    ///   - maxDelay: Largest backoff cap in seconds.
    package init(maxAttempts: Int = 5, baseDelay: TimeInterval = 0.2, maxDelay: TimeInterval = 10) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
    }

    /// No retries.
    package static let none = RetryPolicy(maxAttempts: 1)

    /// Whether a request that has failed `failures` times in a row, the last time with `error`, gets another
    /// attempt: only an error another attempt may cure (``S3Error/isRetryable``), within ``maxAttempts``. A
    /// server that accepted the connection but never answered is tried twice at most: each such attempt has
    /// already waited the whole first-answer timeout, and a server in that state seldom recovers in seconds.
    package func allowsAnotherAttempt(after error: S3Error, failures: Int) -> Bool {
        guard error.isRetryable, failures < maxAttempts else { return false }
        if case .transport(HTTPTransportError.noAnswerCode, _) = error { return failures < 2 }
        return true
    }

    /// How many bytes an interrupted download attempt must have kept for the next attempt to start at once.
    package static let immediateResumeBytes: Int64 = 1 << 20

    /// The delay before attempt `attempt + 1`, after `attempt` failures (1-based), with full jitter.
    package func delay(afterAttempt attempt: Int) -> TimeInterval {
        let cap = min(maxDelay, baseDelay * pow(2, Double(max(0, attempt - 1))))
        return cap > 0 ? Double.random(in: 0...cap) : 0
    }

    /// The wait before the next attempt after `attempt` failures in a row: the backoff — none when the failed
    /// attempt kept at least ``immediateResumeBytes`` — but at least what the service asked (`Retry-After`, at
    /// most ``maxDelay``).
    package func wait(afterAttempt attempt: Int, keptBytes: Int64 = 0, serverAsked: TimeInterval? = nil)
        -> TimeInterval
    {
        let minimum = min(maxDelay, max(0, serverAsked ?? 0))
        return keptBytes >= Self.immediateResumeBytes ? minimum : max(minimum, delay(afterAttempt: attempt))
    }

    /// Sleeps `seconds` (returns at once for zero) and throws ``S3Error/cancelled`` if the task is cancelled.
    static func sleep(_ seconds: TimeInterval) async throws(S3Error) {
        if Task.isCancelled { throw .cancelled }
        guard seconds > 0 else { return }
        do {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
        } catch {
            throw .cancelled
        }
    }
}
