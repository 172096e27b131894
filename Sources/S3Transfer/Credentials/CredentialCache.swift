package import AWSSigV4
import Essentials
import Foundation

/// The credentials an ``S3Client`` signs with, resolved through a provider (a ``CredentialChain``) on the first
/// request and refreshed ahead of their expiry: once, by one task, whatever the number of requests in flight
/// (single flight), without failing any of them (``CredentialRefreshState`` says when). A refresh asks the provider
/// that answered first (``ProvidedCredentials/refresher``), and the whole chain when it no longer answers.
///
/// Thread-safe: the state is one value behind a lock, the refresh an unstructured task whose end every waiting
/// request awaits. A waiting request is not interrupted by its own cancellation; the providers' timeouts bound
/// the wait. Offline or when nothing is configured, requests fail with the provider's ``CredentialError`` (the
/// next attempt is made after a second, not by every request).
package final class CredentialCache: Sendable {
    private struct Shared {
        var machine: CredentialRefreshState
        var refresh: Task<Void, Never>?
        var refreshes = 0
    }

    /// The provider asked first (and again when the one that answered no longer does).
    package let provider: any CredentialProvider
    /// What the providers read.
    package let context: CredentialContext
    private let shared: LockedBox<Shared>

    /// - Parameters:
    ///   - provider: Where credentials come from (usually ``CredentialChain/standard(for:)``).
    ///   - context: What the providers read.
    ///   - timing: When temporary credentials are refreshed.
    package init(
        provider: any CredentialProvider, context: CredentialContext,
        timing: CredentialRefreshState.Timing = CredentialRefreshState.Timing()
    ) {
        self.provider = provider
        self.context = context
        shared = LockedBox(Shared(machine: CredentialRefreshState(timing: timing)))
    }

    /// The standard chain for `context`.
    package convenience init(context: CredentialContext) {
        self.init(provider: CredentialChain.standard(for: context), context: context)
    }

    /// Where the credentials in use came from (provider, profile, expiry); nil before the first resolution.
    package var origin: CredentialOrigin? { shared.withLock { $0.machine.current?.origin } }

    /// The credentials in use without waiting: nil before the first resolution (or for expired ones).
    package var cachedCredentials: AWSCredentials? {
        let now = context.now()
        return shared.withLock { shared -> AWSCredentials? in
            guard let current = shared.machine.current else { return nil }
            if let expiration = current.expiration, expiration <= now { return nil }
            return current.credentials
        }
    }

    /// How many resolutions and refreshes have been started (the first resolution included).
    package var refreshCount: Int { shared.withLock { $0.refreshes } }

    /// Credentials to sign a request with now: the cached ones, or those of the refresh this call starts or joins.
    /// - Throws: The provider's ``CredentialError`` when there are none to use.
    package func current() async throws(CredentialError) -> AWSCredentials {
        var afterWaiting = false
        while true {
            let now = context.now()
            let (decision, refresh) = shared.withLock {
                shared -> (CredentialRefreshState.Decision, Task<Void, Never>?) in
                let decision = shared.machine.next(now: now, afterWaiting: afterWaiting)
                switch decision {
                case .useAndRefresh, .refreshAndWait: startRefresh(&shared)
                default: break
                }
                return (decision, shared.refresh)
            }
            switch decision {
            case .use(let credentials), .useAndRefresh(let credentials): return credentials
            case .fail(let error): throw error
            case .refreshAndWait, .wait:
                await refresh?.value
                afterWaiting = true
            }
        }
    }

    /// ``current()`` when it would not wait: the credentials to use now (a refresh due in the background is
    /// started), or nil when a resolution or refresh must be awaited first (it is started; the caller then awaits
    /// ``current()``) or there are none.
    package func currentWithoutWaiting() -> AWSCredentials? {
        let now = context.now()
        return shared.withLock { shared -> AWSCredentials? in
            switch shared.machine.next(now: now) {
            case .use(let credentials): return credentials
            case .useAndRefresh(let credentials):
                startRefresh(&shared)
                return credentials
            case .refreshAndWait:
                startRefresh(&shared)
                return nil
            case .wait, .fail: return nil
            }
        }
    }

    /// Resolves now (or uses the cached credentials) and says where they came from.
    package func resolve() async throws(CredentialError) -> CredentialOrigin {
        _ = try await current()
        return origin ?? CredentialOrigin(provider: provider.name)
    }

    /// Starts the refresh the state machine asked for (under the lock).
    private func startRefresh(_ shared: inout Shared) {
        shared.refreshes += 1
        shared.refresh = Task { await self.refresh() }
    }

    /// One refresh: asks the provider that answered last (else the chain) and records the outcome.
    private func refresh() async {
        let refresher = shared.withLock { $0.machine.current?.refresher }
        var outcome: Result<ProvidedCredentials, CredentialError>
        do throws(CredentialError) {
            var found: ProvidedCredentials?
            if let refresher { found = try await refresher.resolve(context) }
            if found == nil { found = try await provider.resolve(context) }
            guard let found else { throw .notFound(profile: context.profile, tried: [provider.searched(context)]) }
            outcome = .success(found)
        } catch {
            outcome = .failure(error)
        }
        let now = context.now()
        if case .success(let found) = outcome, let expiration = found.expiration, expiration <= now {
            outcome = .failure(
                .expired(provider: found.origin.provider, cause: "it handed out credentials that had expired already."))
        }
        shared.withLock { shared in
            switch outcome {
            case .success(let found): shared.machine.refreshSucceeded(found, now: now)
            case .failure(let error): shared.machine.refreshFailed(error, now: now)
            }
            shared.refresh = nil
        }
    }
}

extension CredentialCache: Hashable {
    package static func == (a: CredentialCache, b: CredentialCache) -> Bool { a === b }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
