import Foundation
import Testing

@testable import S3Transfer

/// The backoff rules on their own: full jitter under the cap, and no wait after an attempt that kept bytes.
@Suite struct RetryPolicyTests {
    @Test func delaysStayUnderTheirExponentialCap() {
        let policy = RetryPolicy(maxAttempts: 5, baseDelay: 0.5, maxDelay: 3)
        for attempt in 1...6 {
            let cap = min(3, 0.5 * pow(2, Double(attempt - 1)))
            for _ in 0..<50 { #expect((0...cap).contains(policy.delay(afterAttempt: attempt))) }
        }
        #expect(RetryPolicy(maxAttempts: 3, baseDelay: 0).delay(afterAttempt: 2) == 0)
    }

    /// With an hour-long backoff, only the immediate-resume rule lets the first sleep return (a watchdog cancels
    /// it, which then throws, if the rule were broken, so the test fails instead of hanging); one that kept less
    /// than a megabyte is given a backoff of its own. (Sleeping through that backoff and cancelling it raced the
    /// random delay, which is anywhere from 0 to an hour, against how long a loaded test process took to run the
    /// first task: it failed now and then.)
    @Test func anAttemptThatKeptAMegabyteIsContinuedWithoutBackoffAndOneThatKeptLessWaits() async throws {
        let policy = RetryPolicy(maxAttempts: 5, baseDelay: 3600, maxDelay: 3600)
        let resumed = Task {
            try await RetryPolicy.sleep(policy.wait(afterAttempt: 1, keptBytes: RetryPolicy.immediateResumeBytes))
        }
        let watchdog = Task {
            try? await Task.sleep(nanoseconds: 60_000_000_000)
            resumed.cancel()
        }
        let immediate = await resumed.result
        watchdog.cancel()
        #expect(throws: Never.self) { try immediate.get() }
        #expect(policy.wait(afterAttempt: 1, keptBytes: RetryPolicy.immediateResumeBytes) == 0)
        for _ in 0..<100 {
            let wait = policy.wait(afterAttempt: 1, keptBytes: RetryPolicy.immediateResumeBytes - 1)
            #expect(wait > 0 && wait <= 3600)
        }
        // A service's Retry-After holds even after a megabyte.
        #expect(policy.wait(afterAttempt: 1, keptBytes: RetryPolicy.immediateResumeBytes, serverAsked: 5) == 5)
    }
}

@Suite struct RetryDecisionTests {
    @Test func retryableErrorsGetAttemptsUpToTheBudgetAndASilentServerTwoAtMost() {
        let policy = RetryPolicy(maxAttempts: 5)
        let reset = S3Error.transport(curlCode: 56, message: "reset")
        #expect((1..<5).allSatisfy { policy.allowsAnotherAttempt(after: reset, failures: $0) })
        #expect(!policy.allowsAnotherAttempt(after: reset, failures: 5))
        let silent = S3Error.transport(curlCode: HTTPTransportError.noAnswerCode, message: "no answer")
        #expect(policy.allowsAnotherAttempt(after: silent, failures: 1))
        #expect(!policy.allowsAnotherAttempt(after: silent, failures: 2))
        #expect(!policy.allowsAnotherAttempt(after: .accessDenied, failures: 1))
        #expect(!RetryPolicy.none.allowsAnotherAttempt(after: reset, failures: 1))
    }
}
