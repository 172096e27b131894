import Essentials
import S3Transfer

/// The library-wide network policy (``AssetLibrary/networkPolicy``) as the engines that reach the bucket see it:
/// read before each request, changed by the app at any time. Thread-safe.
final class NetworkPermission: Sendable {
    private let current: LockedBox<NetworkPolicy>

    init(_ policy: NetworkPolicy) { current = LockedBox(policy) }

    /// The policy now.
    var policy: NetworkPolicy {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Whether the policy lets a request of this kind reach the network: a user's request, or work the library
    /// starts itself (prefetch, pinning downloads, caching, background uploads).
    func allows(userRequest: Bool) -> Bool {
        switch policy {
        case .offline: return false
        case .allowed: return true
        case .userRequestsOnly: return userRequest
        }
    }
}
