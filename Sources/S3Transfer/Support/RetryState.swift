package import Foundation

/// The retry decision of one request or one download, as a value: the loop that sends tells it how each attempt
/// failed, and it answers what to do next. The one place that decides about clock skew, failures in a row, the
/// budget and its exhaustion — S3Client's requests, ranged reads and whole-object downloads all ask it.
///
/// The rules, in order:
/// 1. A `RequestTimeTooSkewed` is retried once at once: the client has measured the offset from the response,
///    and the next attempt is signed with the corrected clock. It is not counted against the budget.
/// 2. A failure another attempt cannot cure (``S3Error/isRetryable`` false, and the caller does not ask to retry
///    it) ends the request with that error.
/// 3. Failures count *in a row*: an attempt that kept bytes (a body cut off mid-way, resumed from where it
///    stopped) starts the count again at one, so a download that keeps progressing is never given up on, while
///    one that keeps failing at once stops after ``RetryPolicy/maxAttempts``.
/// 4. Within the budget (``RetryPolicy/allowsAnotherAttempt(after:failures:)``: a silent server gets two attempts
///    at most) the next attempt comes after the backoff — none when the failed attempt kept at least
///    ``RetryPolicy/immediateResumeBytes``, never less than what a `Retry-After` asked. Past it, the request ends
///    with ``S3Error/retriesExhausted(lastError:attempts:)`` naming the last cause (or the bare cause when the
///    policy allows one attempt only).
///
/// Some failures earn one free retry of their own (``FreeRetry``): a download restarts once from zero when the
/// object changed under it, and downloads a corrupt body once more before giving up. ``takeFreeRetry(_:)`` says
/// whether that retry is still available.
///
/// A value type with no clock and no I/O: the tests drive it through every rule without a server
/// (`RetryStateTests`). Not thread-safe by itself; each loop owns its own.
package struct RetryState: Sendable {
    /// What to do after a failed attempt.
    package enum Decision: Sendable, Equatable {
        /// Make another attempt after waiting this many seconds (zero: at once).
        case retry(after: TimeInterval)
        /// Stop: the request fails with this error.
        case fail(S3Error)
    }

    /// Retries a loop may take once each, outside the budget.
    package enum FreeRetry: Sendable, Hashable {
        /// The clock was skewed; the next attempt is re-signed (taken by ``failed(_:keptBytes:serverAsked:retryingAlso:)``).
        case clockSkew
        /// The object changed since the bytes on disk were fetched; the download starts over from zero.
        case objectChanged
        /// The body did not match its checksum; it is downloaded once more.
        case checksumMismatch
    }

    /// Attempts and backoff.
    package let policy: RetryPolicy
    /// Failed attempts since the last one that kept bytes (the count the budget and the backoff use).
    package private(set) var failuresInARow = 0
    /// Every failed attempt so far, free retries included (the count a `retriesExhausted` error reports).
    package private(set) var failedAttempts = 0
    private var freeRetriesTaken: Set<FreeRetry> = []

    /// - Parameter policy: The budget and the backoff.
    /// Told of every retry (``TransferObserver``), with `request` naming what is retried.
    private let observer: TransferObserver?
    /// What is retried, as the observer is told it.
    package var request: String

    package init(policy: RetryPolicy, observer: TransferObserver? = nil, request: String = "") {
        self.policy = policy
        self.observer = observer
        self.request = request
    }

    /// Records a failed attempt and decides what comes next.
    /// - Parameters:
    ///   - error: Why the attempt failed.
    ///   - keptBytes: Bytes the attempt added to what the next attempt resumes from (0 for a request that
    ///     keeps nothing).
    ///   - serverAsked: The wait a `Retry-After` asked for, in seconds.
    ///   - retryingAlso: Retry this failure although ``S3Error/isRetryable`` says no (a conditional write's
    ///     `409 ConditionalRequestConflict`, a body that arrived short or corrupt); counted against the budget.
    package mutating func failed(
        _ error: S3Error, keptBytes: Int64 = 0, serverAsked: TimeInterval? = nil, retryingAlso: Bool = false
    ) -> Decision {
        failedAttempts += 1
        if error == .requestTimeTooSkewed, takeFreeRetry(.clockSkew) { return .retry(after: 0) }
        guard error.isRetryable || retryingAlso else { return .fail(error) }
        failuresInARow = keptBytes > 0 ? 1 : failuresInARow + 1
        let another =
            error.isRetryable
            ? policy.allowsAnotherAttempt(after: error, failures: failuresInARow)
            : failuresInARow < policy.maxAttempts
        guard another else {
            return .fail(policy.maxAttempts > 1 ? .retriesExhausted(lastError: error, attempts: failedAttempts) : error)
        }
        return .retry(after: policy.wait(afterAttempt: failuresInARow, keptBytes: keptBytes, serverAsked: serverAsked))
    }

    /// Takes the free retry of `kind` if this loop has not taken it yet: true the first time, false after.
    /// A free retry counts as a failed attempt but not against the budget.
    package mutating func takeFreeRetry(_ kind: FreeRetry) -> Bool {
        guard freeRetriesTaken.insert(kind).inserted else { return false }
        if kind != .clockSkew { failedAttempts += 1 }
        return true
    }

    /// Records a failed attempt, then waits before the next one or throws the error that ends the loop.
    /// Throws ``S3Error/cancelled`` if the task is cancelled while waiting.
    package mutating func backOffOrThrow(
        _ error: S3Error, keptBytes: Int64 = 0, serverAsked: TimeInterval? = nil, retryingAlso: Bool = false
    ) async throws(S3Error) {
        switch failed(error, keptBytes: keptBytes, serverAsked: serverAsked, retryingAlso: retryingAlso) {
        case .fail(let final): throw final
        case .retry(let seconds):
            observer?.onRetry(
                TransferObserver.Retry(request: request, attempt: failedAttempts, cause: error, wait: seconds))
            try await RetryPolicy.sleep(seconds)
        }
    }
}
