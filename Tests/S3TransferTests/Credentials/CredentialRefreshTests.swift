import AWSSigV4
import Essentials
import Foundation
import Testing

@testable import S3Transfer

@Suite("Credentials: when temporary credentials are refreshed (the state machine alone)")
struct CredentialRefreshStateTests {
    let t0 = Date(timeIntervalSince1970: 1_000_000)

    func issued(_ key: String, lifetime: TimeInterval?, from start: Date) -> ProvidedCredentials {
        ProvidedCredentials(
            credentials: AWSCredentials(accessKeyID: key, secretAccessKey: "s"),
            origin: CredentialOrigin(provider: "test", expiration: lifetime.map { start + $0 }))
    }

    func key(_ decision: CredentialRefreshState.Decision) -> String {
        switch decision {
        case .use(let c): "use \(c.accessKeyID)"
        case .useAndRefresh(let c): "use \(c.accessKeyID) + refresh"
        case .refreshAndWait: "refresh and wait"
        case .wait: "wait"
        case .fail(let error): "fail \(error)"
        }
    }

    @Test func oneHourCredentialsAreRefreshedFiveMinutesAheadAndAwaitedInTheLastMinute() {
        var state = CredentialRefreshState()
        #expect(key(state.next(now: t0)) == "refresh and wait")
        #expect(key(state.next(now: t0)) == "wait", "a second request joins the refresh under way")
        state.refreshSucceeded(issued("A", lifetime: 3600, from: t0), now: t0)
        #expect(key(state.next(now: t0 + 3294, afterWaiting: true)) == "use A")
        #expect(key(state.next(now: t0 + 3299)) == "use A")
        #expect(key(state.next(now: t0 + 3301)) == "use A + refresh", "advisory: 5 minutes ahead")
        #expect(key(state.next(now: t0 + 3302)) == "use A", "one refresh: the others go on with A")
        #expect(key(state.next(now: t0 + 3541)) == "wait", "mandatory: the last minute waits for the refresh")
        state.refreshSucceeded(issued("B", lifetime: 3600, from: t0 + 3541), now: t0 + 3541)
        #expect(key(state.next(now: t0 + 3541, afterWaiting: true)) == "use B")
        #expect(key(state.next(now: t0 + 3600)) == "use B")
    }

    @Test func shortLivedCredentialsUseFractionsOfTheirLifetime() {
        var state = CredentialRefreshState()
        _ = state.next(now: t0)
        state.refreshSucceeded(issued("A", lifetime: 4, from: t0), now: t0)
        #expect(key(state.next(now: t0 + 2.9)) == "use A")
        #expect(key(state.next(now: t0 + 3.1)) == "use A + refresh", "advisory: the last quarter")
        #expect(key(state.next(now: t0 + 3.65)) == "wait", "mandatory: the last tenth")
    }

    @Test func aFailedRefreshKeepsValidCredentialsAndBacksOff() {
        var state = CredentialRefreshState()
        _ = state.next(now: t0)
        state.refreshSucceeded(issued("A", lifetime: 3600, from: t0), now: t0)
        #expect(key(state.next(now: t0 + 3400)) == "use A + refresh")
        let outage = CredentialError.unreachable(provider: "STS AssumeRole", endpoint: "https://sts", reason: "down")
        state.refreshFailed(outage, now: t0 + 3401)
        #expect(key(state.next(now: t0 + 3402)) == "use A", "backing off: no new attempt yet")
        #expect(key(state.next(now: t0 + 3432)) == "use A + refresh", "after 30 s, another attempt")
        // That one takes long and fails at 3535: the next waits a quarter of the 65 s left.
        state.refreshFailed(outage, now: t0 + 3535)
        #expect(key(state.next(now: t0 + 3545)) == "use A", "mandatory window, backing off, still valid: used")
        #expect(key(state.next(now: t0 + 3552)) == "refresh and wait")
        state.refreshFailed(outage, now: t0 + 3553)
        #expect(key(state.next(now: t0 + 3553, afterWaiting: true)) == "use A", "the waiter takes A, still valid")
        #expect(key(state.next(now: t0 + 3560)) == "use A")
        #expect(key(state.next(now: t0 + 3600)) == "refresh and wait", "expired: every request waits for a refresh")
        state.refreshFailed(outage, now: t0 + 3600.5)
        #expect(
            key(state.next(now: t0 + 3600.5, afterWaiting: true)).hasPrefix("fail The credentials from test expired"))
        #expect(key(state.next(now: t0 + 3601)).hasPrefix("fail The credentials from test expired"))
        state.refreshSucceeded(issued("B", lifetime: 3600, from: t0 + 3610), now: t0 + 3610)
        #expect(key(state.next(now: t0 + 3611)) == "use B")
    }

    @Test func aFailedFirstResolutionFailsEveryRequestUntilTheNextAttempt() {
        var state = CredentialRefreshState()
        #expect(key(state.next(now: t0)) == "refresh and wait")
        #expect(key(state.next(now: t0)) == "wait")
        let none = CredentialError.notFound(profile: "default", tried: ["x"])
        state.refreshFailed(none, now: t0 + 0.1)
        #expect(key(state.next(now: t0 + 0.1, afterWaiting: true)) == "fail \(none)")
        #expect(key(state.next(now: t0 + 0.5)) == "fail \(none)", "within a second: the same answer, no new attempt")
        #expect(key(state.next(now: t0 + 1.2)) == "refresh and wait")
    }

    @Test func longTermCredentialsAreNeverRefreshed() {
        var state = CredentialRefreshState()
        _ = state.next(now: t0)
        state.refreshSucceeded(issued("A", lifetime: nil, from: t0), now: t0)
        #expect(key(state.next(now: t0 + 1e9)) == "use A")
    }

    @Test func aWaiterScheduledTooLateForItsFreshCredentialsRefreshesAgain() {
        var state = CredentialRefreshState()
        #expect(key(state.next(now: t0)) == "refresh and wait")
        state.refreshSucceeded(issued("A", lifetime: 3, from: t0), now: t0)
        #expect(key(state.next(now: t0 + 4, afterWaiting: true)) == "refresh and wait")
        state.refreshFailed(.notFound(profile: "p", tried: []), now: t0 + 4)
        #expect(key(state.next(now: t0 + 4, afterWaiting: true)).hasPrefix("fail The credentials from test expired"))
    }

    @Test func aWaiterNeverWaitsTwiceForCredentialsStillValid() {
        var state = CredentialRefreshState()
        _ = state.next(now: t0)
        // A provider that hands out credentials already inside their mandatory window.
        state.refreshSucceeded(issued("A", lifetime: 1, from: t0 - 0.95), now: t0)
        #expect(key(state.next(now: t0 + 0.045, afterWaiting: true)) == "use A")
    }
}

/// A provider that hands out numbered credentials valid for `lifetime`, counting its calls; it can be told to fail,
/// or held until released.
final class IssuingProvider: CredentialProvider, Sendable {
    private struct State {
        var issued = 0
        var failing = false
        var held: [CheckedContinuation<Void, Never>] = []
        var holding = false
    }
    private let state = LockedBox(State())
    let lifetime: TimeInterval?

    init(lifetime: TimeInterval?) { self.lifetime = lifetime }

    var name: String { "issuer" }
    var issued: Int { state.withLock { $0.issued } }
    func fail(_ failing: Bool) { state.withLock { $0.failing = failing } }
    func hold() { state.withLock { $0.holding = true } }
    func release() {
        let held = state.withLock { state in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }
    var waiting: Int { state.withLock { $0.held.count } }

    func resolve(_ context: CredentialContext) async throws(CredentialError) -> ProvidedCredentials? {
        await withCheckedContinuation { continuation in
            let hold = state.withLock { state -> Bool in
                if state.holding { state.held.append(continuation) }
                return state.holding
            }
            if !hold { continuation.resume() }
        }
        let (number, failing) = state.withLock { state in
            state.issued += 1
            return (state.issued, state.failing)
        }
        if failing { throw .unreachable(provider: "issuer", endpoint: "nowhere", reason: "down") }
        return ProvidedCredentials(
            credentials: AWSCredentials(accessKeyID: "KEY\(number)", secretAccessKey: "s"),
            origin: CredentialOrigin(provider: name, expiration: lifetime.map { context.now() + $0 }), refresher: self)
    }

    func searched(_ context: CredentialContext) -> String { "the issuer" }
}

/// A clock a test moves by hand.
final class TestClock: Sendable {
    private let time = LockedBox(Date(timeIntervalSince1970: 2_000_000))
    var now: Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
}

@Suite("Credentials: the refreshing cache (single flight, no request failed)")
struct CredentialCacheTests {
    @Test func concurrentFirstRequestsShareOneResolution() async throws {
        let issuer = IssuingProvider(lifetime: nil)
        issuer.hold()
        let cache = CredentialCache(provider: issuer, context: CredentialContext(environment: [:]))
        let keys = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await cache.current().accessKeyID } }
            // Every request is waiting once the one resolution is held in the provider.
            while issuer.waiting == 0 { await Task.yield() }
            issuer.release()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(keys) == ["KEY1"] && keys.count == 50)
        #expect(issuer.issued == 1 && cache.refreshCount == 1)
        #expect(cache.origin?.provider == "issuer")
    }

    @Test func aRefreshDueIsStartedOnceWhileRequestsGoOn() async throws {
        let clock = TestClock()
        let issuer = IssuingProvider(lifetime: 3600)
        let cache = CredentialCache(
            provider: issuer, context: CredentialContext(environment: [:], now: { clock.now }))
        #expect(try await cache.current().accessKeyID == "KEY1")
        clock.advance(3400)  // advisory window
        issuer.hold()
        for _ in 0..<20 { #expect(try await cache.current().accessKeyID == "KEY1", "requests go on with KEY1") }
        while issuer.waiting == 0 { await Task.yield() }
        clock.advance(150)  // mandatory window: requests now wait for the one refresh
        let waiting = Task { try await cache.current().accessKeyID }
        issuer.release()
        #expect(try await waiting.value == "KEY2")
        #expect(issuer.issued == 2 && cache.refreshCount == 2)
    }

    @Test func aFailedRefreshKeepsTheCredentialsWhileTheyAreValid() async throws {
        let clock = TestClock()
        let issuer = IssuingProvider(lifetime: 3600)
        let cache = CredentialCache(
            provider: issuer, context: CredentialContext(environment: [:], now: { clock.now }))
        _ = try await cache.current()
        issuer.fail(true)
        clock.advance(3580)  // mandatory: the request waits for the refresh, which fails
        #expect(try await cache.current().accessKeyID == "KEY1")
        clock.advance(30)
        let expired = await credentialError { _ = try await cache.current() }
        guard case .expired(let provider, let cause) = expired else {
            Issue.record("expected expired, got \(String(describing: expired))")
            return
        }
        #expect(provider == "issuer" && cause.contains("down"))
        issuer.fail(false)
        clock.advance(60)
        #expect(try await cache.current().accessKeyID.hasPrefix("KEY"))
    }

    @Test func credentialsThatExpireAlreadyAreRefused() async throws {
        let issuer = IssuingProvider(lifetime: -5)
        let cache = CredentialCache(provider: issuer, context: CredentialContext(environment: [:]))
        let error = await credentialError { _ = try await cache.current() }
        #expect(error?.description.contains("handed out credentials that had expired already") == true)
    }
}
