import AWSSigV4
import Essentials
import Foundation

/// Key pairs with a session token that the server accepts until they expire, as STS's temporary credentials:
/// added while the server runs (``FakeS3Server/acceptTemporaryCredentials(_:until:)``). A request signed with
/// one after its expiry fails with 400 `ExpiredToken`; one without its token, or with another, with 403
/// `InvalidToken`. Thread-safe.
final class TemporaryCredentials: Sendable {
    private struct Entry {
        var credentials: AWSCredentials
        var expiration: Date
        var clock: @Sendable () -> Date
    }
    private let entries = LockedBox<[String: Entry]>([:])

    /// Whether any was ever added (a server configured without key pairs then requires signatures).
    var isUsed: Bool { entries.withLock { !$0.isEmpty } }

    func add(_ credentials: AWSCredentials, until expiration: Date, clock: @escaping @Sendable () -> Date) {
        entries.withLock {
            $0[credentials.accessKeyID] = Entry(credentials: credentials, expiration: expiration, clock: clock)
        }
    }

    /// The key pair of `accessKeyID`, nil when it is not a temporary one.
    /// - Throws: `ExpiredToken` once it has expired (by the clock it was added with).
    func lookup(_ accessKeyID: String) throws(S3Error) -> AWSCredentials? {
        guard let entry = entries.withLock({ $0[accessKeyID] }) else { return nil }
        guard entry.clock() < entry.expiration else {
            throw S3Error(
                status: 400, code: "ExpiredToken", message: "The provided token has expired.",
                details: ["Token-0": accessKeyID])
        }
        return entry.credentials
    }

    /// Refuses a request whose session token is not the one issued with its key (`x-amz-security-token`, or
    /// `X-Amz-Security-Token` in a presigned URL).
    static func checkToken(_ credentials: AWSCredentials, _ request: S3Request) throws(S3Error) {
        guard let token = credentials.sessionToken else { return }
        let sent = request.header("x-amz-security-token") ?? request.queryValue("X-Amz-Security-Token")
        guard sent == token else {
            throw S3Error(
                status: 403, code: "InvalidToken", message: "The provided token is malformed or otherwise invalid.")
        }
    }
}

extension FakeS3Server {
    /// Accepts requests signed with `credentials` (its session token included) until `expiration`, as S3 accepts
    /// temporary credentials from STS; later ones fail with `ExpiredToken`.
    /// - Parameter clock: The clock `expiration` is compared with (a test's own, to make expiry independent of
    ///   how fast a loaded machine runs); the real one by default.
    public func acceptTemporaryCredentials(
        _ credentials: AWSCredentials, until expiration: Date, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        core.authenticator.temporary.add(credentials, until: expiration, clock: clock)
    }
}
