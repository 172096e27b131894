import Foundation
import Testing

@testable import CloudAssets

/// A sync's choice between a checkpoint, a full listing and the journal, driven as a value: no bucket, no clock.
@Suite struct SyncRouteTests {
    static let hour: Int64 = 3_600_000

    static func facts(
        _ mode: SyncMode = .automatic, checkpoints: TimeInterval = 3600, fullSyncInterval: TimeInterval = 86_400,
        last: Int64? = nil, cost: Int64? = nil, now: Int64 = 1_000 * hour
    ) -> SyncRoute.Facts {
        SyncRoute.Facts(
            mode: mode, checkpointInterval: checkpoints, fullSyncInterval: fullSyncInterval, lastFullListing: last,
            lastFullListingCost: cost, now: now)
    }

    @Test func anExplicitModeIsObeyed() {
        #expect(SyncRoute.decide(Self.facts(.full, last: 1_000 * Self.hour)) == .fullListing)
        #expect(SyncRoute.decide(Self.facts(.incremental)) == .journal)
        #expect(SyncRoute.decide(Self.facts(.incremental, fullSyncInterval: 0)) == .journal)
    }

    @Test func aNewLibraryStartsFromACheckpointWhenCheckpointsAreOn() {
        #expect(SyncRoute.decide(Self.facts()) == .checkpoint)
        #expect(SyncRoute.decide(Self.facts(checkpoints: 0)) == .fullListing)
        #expect(SyncRoute.decide(Self.facts(fullSyncInterval: 0)) == .fullListing)
    }

    @Test func noFullSyncIntervalListsEveryTime() {
        #expect(SyncRoute.decide(Self.facts(fullSyncInterval: 0, last: 1_000 * Self.hour)) == .fullListing)
    }

    @Test func anUntimedListingWaitsTheWholeInterval() {
        let last = 900 * Self.hour
        #expect(SyncRoute.decide(Self.facts(last: last, now: last + 24 * Self.hour - 1)) == .journal)
        #expect(SyncRoute.decide(Self.facts(last: last, now: last + 24 * Self.hour)) == .fullListing)
    }

    @Test func aTimedListingIsRepeatedAfterAHundredTimesItsCost() {
        let last = 900 * Self.hour
        // 10 s of listing: again after 1,000 s.
        #expect(SyncRoute.fullListingInterval(Self.facts(last: last, cost: 10_000)) == 1_000)
        #expect(SyncRoute.decide(Self.facts(last: last, cost: 10_000, now: last + 999_999)) == .journal)
        #expect(SyncRoute.decide(Self.facts(last: last, cost: 10_000, now: last + 1_000_000)) == .fullListing)
        // A quick listing waits at least a minute; a slow one at most the configured interval.
        #expect(SyncRoute.fullListingInterval(Self.facts(cost: 1)) == 60)
        #expect(SyncRoute.fullListingInterval(Self.facts(cost: 10 * Self.hour)) == 86_400)
    }

    @Test func aClockSetBackKeepsTheJournal() {
        let last = 900 * Self.hour
        #expect(SyncRoute.decide(Self.facts(last: last, cost: 10_000, now: last - Self.hour)) == .journal)
    }
}
