import Foundation

/// How a sync brings the catalog up to date, decided before it reaches the bucket from the mode asked for, the
/// settings, what the catalog remembers of earlier listings and the time: a value, so that a test drives every
/// case without a bucket or a clock.
enum SyncRoute: Sendable, Hashable {
    /// A new library: start from the bucket's newest checkpoint, then read the journal after it (a full listing
    /// when the bucket has no checkpoint).
    case checkpoint
    /// List the whole bucket.
    case fullListing
    /// Read the journal's tail (a full listing instead when the journal no longer reaches back to this library's
    /// position — only the bucket can say).
    case journal

    /// What the decision reads.
    struct Facts: Sendable, Hashable {
        var mode: SyncMode
        /// ``AssetLibrary/Configuration/checkpointInterval``: 0 when checkpoints are off.
        var checkpointInterval: TimeInterval
        /// ``AssetLibrary/Configuration/fullSyncInterval``: 0 lists the whole bucket on every automatic sync.
        var fullSyncInterval: TimeInterval
        /// When this library (or the checkpoint it started from) last reflected a full listing, milliseconds since
        /// 1970; nil before any.
        var lastFullListing: Int64?
        /// How long this library's last full listing took, milliseconds; nil before it timed one.
        var lastFullListingCost: Int64?
        /// Now, milliseconds since 1970 (the local clock, as ``lastFullListing``).
        var now: Int64
    }

    /// The least time between two full listings of an automatic sync, whatever they cost.
    static let minimumFullListingInterval: TimeInterval = 60
    /// How many times its own duration an automatic sync waits between full listings: at most ~1 % of the time
    /// goes to listing.
    static let fullListingCostFactor: Double = 100

    /// The route for `facts`: `.full` and `.incremental` are obeyed; `.automatic` starts a new library from a
    /// checkpoint (when checkpoints and full listings are on), lists the whole bucket when it never did or its
    /// last listing is older than ``fullListingInterval(_:)``, and reads the journal otherwise.
    static func decide(_ facts: Facts) -> SyncRoute {
        switch facts.mode {
        case .full: return .fullListing
        case .incremental: return .journal
        case .automatic:
            guard facts.fullSyncInterval > 0, let last = facts.lastFullListing else {
                return facts.checkpointInterval > 0 && facts.fullSyncInterval > 0 ? .checkpoint : .fullListing
            }
            return Double(facts.now - last) >= fullListingInterval(facts) * 1000 ? .fullListing : .journal
        }
    }

    /// How long after a full listing an automatic sync lists the whole bucket again (to find what other tools
    /// wrote): ``fullListingCostFactor`` times what the last one of this library took, at least
    /// ``minimumFullListingInterval``, at most ``AssetLibrary/Configuration/fullSyncInterval`` — which it is when
    /// the library has not timed a listing yet (a bootstrap from a checkpoint).
    static func fullListingInterval(_ facts: Facts) -> TimeInterval {
        guard let cost = facts.lastFullListingCost else { return facts.fullSyncInterval }
        let scaled = max(Double(cost) * fullListingCostFactor / 1000, minimumFullListingInterval)
        return min(scaled, facts.fullSyncInterval)
    }
}
