import Foundation
import Testing

@testable import S3Transfer

/// The one retry decision, driven through each rule without a server: every loop that sends (requests, ranged
/// reads, whole downloads) asks this value what to do after a failure.
@Suite struct RetryStateTests {
    let reset = S3Error.transport(curlCode: 56, message: "reset")
    let internalError = S3Error.service(code: "InternalError", message: "boom", status: 500, requestID: nil)

    /// A policy whose backoff is long enough to tell "at once" from "after a wait".
    func slowPolicy(_ attempts: Int) -> RetryPolicy { RetryPolicy(maxAttempts: attempts, baseDelay: 60, maxDelay: 60) }

    @Test func aSkewedClockIsRetriedOnceAtOnceOutsideTheBudget() {
        var state = RetryState(policy: slowPolicy(2))
        let decision1 = state.failed(.requestTimeTooSkewed)
        #expect(decision1 == .retry(after: 0))
        #expect(state.failuresInARow == 0)
        // The budget is untouched: two retryable failures still fit.
        guard case .retry = state.failed(reset) else { return #expect(Bool(false)) }
        // A second skew is an ordinary, non-retryable failure.
        let decision2 = state.failed(.requestTimeTooSkewed)
        #expect(decision2 == .fail(.requestTimeTooSkewed))
    }

    @Test func aFailureNoAttemptCanCureEndsAtOnceWithItsOwnError() {
        var state = RetryState(policy: slowPolicy(5))
        let decision3 = state.failed(.accessDenied)
        #expect(decision3 == .fail(.accessDenied))
        let decision4 = state.failed(.noSuchKey)
        #expect(decision4 == .fail(.noSuchKey))
    }

    @Test func retryableFailuresInARowExhaustTheBudgetAndNameTheLastCauseAndTheAttempts() {
        var state = RetryState(policy: RetryPolicy(maxAttempts: 3, baseDelay: 0.5, maxDelay: 4))
        for failures in 1...2 {
            guard case .retry(let wait) = state.failed(internalError) else { return #expect(Bool(false)) }
            // Full jitter under the exponential cap.
            #expect((0...(0.5 * pow(2, Double(failures - 1)))).contains(wait))
        }
        let decision5 = state.failed(internalError)
        #expect(decision5 == .fail(.retriesExhausted(lastError: internalError, attempts: 3)))
    }

    @Test func anAttemptThatKeptBytesStartsTheCountAgainSoAProgressingDownloadNeverGivesUp() {
        var state = RetryState(policy: slowPolicy(3))
        for _ in 0..<20 {
            guard case .retry = state.failed(reset, keptBytes: 10) else { return #expect(Bool(false)) }
            #expect(state.failuresInARow == 1)
        }
        // Counted from one again: a second failure in a row fits the budget of three, a third does not.
        guard case .retry = state.failed(reset) else { return #expect(Bool(false)) }
        let decision6 = state.failed(reset)
        #expect(decision6 == .fail(.retriesExhausted(lastError: reset, attempts: 22)))
    }

    @Test func anAttemptThatKeptAMegabyteIsRetriedAtOnceAndOneThatKeptLessWaits() {
        var state = RetryState(policy: RetryPolicy(maxAttempts: 50, baseDelay: 60, maxDelay: 60))
        let decision7 = state.failed(reset, keptBytes: RetryPolicy.immediateResumeBytes)
        #expect(decision7 == .retry(after: 0))
        // Jitter may pick any wait up to the cap; over a few tries a wait under a megabyte is not always zero.
        var waits: [TimeInterval] = []
        for _ in 0..<10 {
            guard case .retry(let wait) = state.failed(reset, keptBytes: RetryPolicy.immediateResumeBytes - 1) else {
                return #expect(Bool(false))
            }
            waits.append(wait)
        }
        #expect(waits.contains { $0 > 0 })
    }

    @Test func aRetryAfterIsHonouredUpToTheLargestDelay() {
        var state = RetryState(policy: RetryPolicy(maxAttempts: 5, baseDelay: 0, maxDelay: 10))
        let decision8 = state.failed(.slowDown, serverAsked: 3)
        #expect(decision8 == .retry(after: 3))
        let decision9 = state.failed(.slowDown, serverAsked: 3600)
        #expect(decision9 == .retry(after: 10))
        // Even after an attempt that kept bytes, what the service asked for is waited.
        let decision10 = state.failed(reset, keptBytes: RetryPolicy.immediateResumeBytes, serverAsked: 2)
        #expect(decision10 == .retry(after: 2))
    }

    @Test func aSilentServerGetsTwoAttemptsAtMost() {
        var state = RetryState(policy: slowPolicy(5))
        let silent = S3Error.transport(curlCode: HTTPTransportError.noAnswerCode, message: "no answer")
        guard case .retry = state.failed(silent) else { return #expect(Bool(false)) }
        let decision11 = state.failed(silent)
        #expect(decision11 == .fail(.retriesExhausted(lastError: silent, attempts: 2)))
    }

    @Test func aPolicyOfOneAttemptReportsTheBareCause() {
        var state = RetryState(policy: .none)
        let decision12 = state.failed(reset)
        #expect(decision12 == .fail(reset))
    }

    @Test func failuresTheCallerAsksToRetryCountAgainstTheBudget() {
        var state = RetryState(policy: slowPolicy(2))
        let conflict = S3Error.service(code: "ConditionalRequestConflict", message: "", status: 409, requestID: nil)
        let decision13 = state.failed(conflict)
        #expect(decision13 == .fail(conflict))
        var retrying = RetryState(policy: slowPolicy(2))
        guard case .retry = retrying.failed(conflict, retryingAlso: true) else { return #expect(Bool(false)) }
        let exhausted = retrying.failed(conflict, retryingAlso: true)
        #expect(exhausted == .fail(.retriesExhausted(lastError: conflict, attempts: 2)))
    }

    @Test func eachFreeRetryIsTakenOnceAndCountsAsAnAttemptButNotAgainstTheBudget() {
        var state = RetryState(policy: slowPolicy(1))
        let decision14 = state.takeFreeRetry(.objectChanged)
        #expect(decision14)
        let decision15 = state.takeFreeRetry(.objectChanged)
        #expect(!decision15)
        let decision16 = state.takeFreeRetry(.checksumMismatch)
        #expect(decision16)
        let decision17 = state.takeFreeRetry(.checksumMismatch)
        #expect(!decision17)
        #expect(state.failedAttempts == 2)
        #expect(state.failuresInARow == 0)
    }

    @Test func backOffOrThrowThrowsTheFinalErrorAndCancelledWhenTheTaskIsCancelled() async {
        var state = RetryState(policy: .none)
        await #expect(throws: S3Error.accessDenied) { try await state.backOffOrThrow(.accessDenied) }
        let waiting = Task {
            var state = RetryState(policy: RetryPolicy(maxAttempts: 5, baseDelay: 3600, maxDelay: 3600))
            try await state.backOffOrThrow(.slowDown, serverAsked: 3600)
        }
        waiting.cancel()
        await #expect(throws: S3Error.cancelled) { try await waiting.value }
    }
}
