package import AWSSigV4
package import Foundation

/// When temporary credentials are refreshed, as a value: each request asks ``next(now:afterWaiting:)`` what to do,
/// each refresh reports its end; the caller (``CredentialCache``) does the I/O. Tested without I/O.
///
/// For credentials of lifetime L (from when they were obtained to their expiry E):
/// - before `E − min(refreshLead, L × refreshFraction)` they are used as they are;
/// - from then (the advisory window) one refresh starts in the background and requests go on signing with the
///   current credentials, which are still good;
/// - from `E − min(mandatoryLead, L × mandatoryFraction)` (the mandatory window) requests wait for the refresh —
///   one refresh, shared by every request in flight;
/// - a refresh that fails while the credentials are still valid keeps them: requests use them, and the next
///   attempt waits a while (a quarter of the time left, between ``Timing/minimumRetryDelay`` and
///   ``Timing/retryDelay``); once they have expired, requests fail with ``CredentialError/expired(provider:cause:)``
///   until a refresh succeeds. The first resolution failing is retried after ``Timing/minimumRetryDelay``;
/// - a request that waited for a refresh takes what it brought without waiting again, unless those expired
///   already (the request was not scheduled for longer than their lifetime): then it refreshes again.
///
/// Long-term credentials (no expiry) are never refreshed.
package struct CredentialRefreshState: Sendable {
    /// The windows' sizes.
    package struct Timing: Sendable, Hashable {
        /// The advisory window is at most this long (5 minutes).
        package var refreshLead: TimeInterval = 300
        /// …and at most this fraction of the credentials' lifetime (short-lived credentials).
        package var refreshFraction = 0.25
        /// The mandatory window is at most this long (1 minute).
        package var mandatoryLead: TimeInterval = 60
        /// …and at most this fraction of the lifetime.
        package var mandatoryFraction = 0.1
        /// The longest wait before another attempt after a failed refresh.
        package var retryDelay: TimeInterval = 30
        /// The shortest wait before another attempt after a failure.
        package var minimumRetryDelay: TimeInterval = 1

        /// The defaults above.
        package init() {}
    }

    /// What a request does next.
    package enum Decision: Sendable {
        /// Sign with these credentials.
        case use(AWSCredentials)
        /// Sign with these credentials, and start the refresh in the background (this request is the one that
        /// starts it; no other will until it ends).
        case useAndRefresh(AWSCredentials)
        /// Start the refresh and wait for it (then ask again, with `afterWaiting`).
        case refreshAndWait
        /// A refresh is under way: wait for it (then ask again, with `afterWaiting`).
        case wait
        /// Fail the request.
        case fail(CredentialError)
    }

    /// The windows' sizes.
    package var timing: Timing
    /// The credentials in use, nil before the first resolution succeeded.
    package private(set) var current: ProvidedCredentials?
    /// Whether a refresh is under way.
    package private(set) var isRefreshing = false
    private var obtained = Date.distantPast
    private var lastFailure: CredentialError?
    private var retryAt: Date?

    /// - Parameter timing: The windows' sizes.
    package init(timing: Timing = Timing()) { self.timing = timing }

    /// What a request does now.
    /// - Parameters:
    ///   - now: The current time.
    ///   - afterWaiting: The request has waited for a refresh already: it takes any credentials not expired rather
    ///     than wait again.
    package mutating func next(now: Date, afterWaiting: Bool = false) -> Decision {
        let backingOff = retryAt.map { now < $0 } ?? false
        guard let current else {
            if afterWaiting, let lastFailure, !isRefreshing { return .fail(lastFailure) }
            if isRefreshing { return .wait }
            if backingOff, let lastFailure { return .fail(lastFailure) }
            isRefreshing = true
            return .refreshAndWait
        }
        guard let expiration = current.expiration else { return .use(current.credentials) }
        let lifetime = max(0, expiration.timeIntervalSince(obtained))
        let refreshAt = expiration - min(timing.refreshLead, lifetime * timing.refreshFraction)
        let mandatoryAt = expiration - min(timing.mandatoryLead, lifetime * timing.mandatoryFraction)
        if now < refreshAt { return .use(current.credentials) }
        // A refresh never starts while backing off, so `backingOff` implies no refresh is under way.
        if afterWaiting || backingOff {
            if now < expiration { return .use(current.credentials) }
            // Expired although the last refresh succeeded: this request ran too late to use them (a starved
            // machine); it refreshes again below rather than fail.
            if backingOff || lastFailure != nil { return .fail(expired(current)) }
        }
        if now < mandatoryAt {
            if isRefreshing { return .use(current.credentials) }
            isRefreshing = true
            return .useAndRefresh(current.credentials)
        }
        if isRefreshing { return .wait }
        isRefreshing = true
        return .refreshAndWait
    }

    /// A refresh brought new credentials.
    /// - Parameters:
    ///   - credentials: What the provider answered.
    ///   - now: When it answered (the start of their lifetime).
    package mutating func refreshSucceeded(_ credentials: ProvidedCredentials, now: Date) {
        current = credentials
        obtained = now
        isRefreshing = false
        lastFailure = nil
        retryAt = nil
    }

    /// A refresh failed.
    /// - Parameters:
    ///   - error: Why.
    ///   - now: When.
    package mutating func refreshFailed(_ error: CredentialError, now: Date) {
        isRefreshing = false
        lastFailure = error
        var delay = timing.minimumRetryDelay
        if let expiration = current?.expiration {
            delay = min(timing.retryDelay, max(timing.minimumRetryDelay, expiration.timeIntervalSince(now) / 4))
        }
        retryAt = now + delay
    }

    private func expired(_ current: ProvidedCredentials) -> CredentialError {
        .expired(
            provider: current.origin.provider,
            cause: lastFailure?.description ?? "the refresh did not finish before they expired.")
    }
}
