import Essentials
import Foundation
import S3Transfer

/// The journal's retention. The library that writes a checkpoint prunes what the checkpoint covers and is older
/// than the retention: first it raises the bucket's *horizon* (`<checkpoints>/horizon.json`: entries older than
/// it may be gone), then it deletes the journal entries and the earlier checkpoints below it. A library whose
/// position is below the horizon cannot trust the journal to hold everything it has not read: it lists the whole
/// bucket instead (``SyncSummary/historyExpired``).
///
/// Nothing younger than ``SyncEngine/minimumJournalRetention`` is ever pruned, so a library that synced within
/// that time reads the journal without asking for the horizon: an idle sync stays one request.
extension SyncEngine {
    /// The least retention, whatever ``AssetLibrary/Configuration/journalRetention`` says: 1 day.
    static let minimumJournalRetention: TimeInterval = 24 * 3600

    /// The horizon object's bytes: `{"format":1,"time":<milliseconds>}`.
    struct JournalHorizon: Codable {
        var format = 1
        var time: Int64
    }

    static func horizonKey(_ layout: BucketLayout) -> String { layout.checkpointPrefix + "horizon.json" }

    /// The bucket's horizon (milliseconds; 0 when there is none, or none that can be read) and its ETag. Read only
    /// up to ``BucketInput/maxDocumentBytes``, and never later than the service's clock (``BucketInput``).
    func journalHorizon(remote: LibraryRemote) async throws -> (time: Int64, etag: String?) {
        let bucket = configuration.bucket
        let key = Self.horizonKey(configuration.layout)
        do {
            guard
                let (data, head) = try await remote.client.getObject(
                    bucket: bucket, key: key, maxBytes: BucketInput.maxDocumentBytes)
            else { return (0, try await remote.client.headObject(bucket: bucket, key: key).etag) }
            return (BucketInput.horizon(data, now: remote.client.correctedNow), head.etag)
        } catch {
            if error == .noSuchKey { return (0, nil) }
            throw error
        }
    }

    /// Whether entries this library has not read may have been pruned: only asked (one GET) when its position is
    /// older than the minimum retention.
    func journalHistoryExpired(remote: LibraryRemote) async throws -> Bool {
        guard let cursor = Int64(try catalog.store.setting(JournalSetting.cursor) ?? "") else { return false }
        let now = Int64(remote.client.correctedNow.timeIntervalSince1970 * 1000)
        let lookBack = Int64(configuration.journalLookBack * 1000)
        guard now - (cursor - lookBack) > Int64(Self.minimumJournalRetention * 1000) else { return false }
        return try await journalHorizon(remote: remote).time > cursor - lookBack
    }

    /// After this library wrote the checkpoint of journal position `covered`: raises the horizon to the older of
    /// that position and now less the retention, then deletes the journal entries and the checkpoints (but the
    /// newest) below it. Returns how many objects it deleted.
    func pruneJournal(remote: LibraryRemote, covered: Int64) async throws -> Int {
        let retention = max(configuration.journalRetention, Self.minimumJournalRetention)
        let now = Int64(remote.client.correctedNow.timeIntervalSince1970 * 1000)
        let horizon = min(covered, now - Int64(retention * 1000))
        guard horizon > 0 else { return 0 }
        let bucket = configuration.bucket
        let layout = configuration.layout
        // Raise the horizon first (never lower it: another library may have raised it further), so that no reader
        // relies on an entry after it is deleted.
        var raised = false
        for _ in 0..<5 where !raised {
            let current = try await journalHorizon(remote: remote)
            if current.time >= horizon { break }
            let body = try JSONEncoder().encode(JournalHorizon(time: horizon))
            do {
                _ = try await remote.client.putObject(
                    bucket: bucket, key: Self.horizonKey(layout), body: body, contentType: "application/json",
                    condition: current.etag.map { .etagMatches($0) } ?? .keyAbsent)
                raised = true
            } catch {
                guard error == .preconditionFailed else { throw error }  // another writer first: read again
            }
        }
        // What lies below the horizon: journal entries by their time, checkpoint slots by theirs (the newest
        // slot stays, whatever its age: it is what new libraries start from).
        var doomed: [String] = []
        var continuation: String?
        repeat {
            let page = try await remote.client.listObjectsV2(
                bucket: bucket, prefix: layout.journalPrefix, continuationToken: continuation)
            var past = false
            for object in page.objects {
                guard let time = JournalKey.time(of: object.key, prefix: layout.journalPrefix) else { continue }
                if time >= horizon {
                    past = true
                    break
                }
                doomed.append(object.key)
            }
            continuation = !past && page.isTruncated ? page.nextContinuationToken : nil
        } while continuation != nil
        let slots = try await checkpointSlots(remote: remote)
        for slot in slots.dropLast() {
            guard let time = JournalKey.time(of: slot, prefix: layout.checkpointPrefix), time < horizon else {
                continue
            }
            var token: String?
            repeat {
                let page = try await remote.client.listObjectsV2(bucket: bucket, prefix: slot, continuationToken: token)
                doomed += page.objects.map(\.key)
                token = page.isTruncated ? page.nextContinuationToken : nil
            } while token != nil
        }
        let client = remote.client
        let width = max(1, configuration.maxConnections)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<width {
                let keys = stride(from: lane, to: doomed.count, by: width).map { doomed[$0] }
                guard !keys.isEmpty else { continue }
                group.addTask {
                    for key in keys { try await client.deleteObject(bucket: bucket, key: key) }
                }
            }
            try await group.waitForAll()
        }
        return doomed.count
    }

    /// The checkpoint slot folders (`<checkpoints>/<time>/`), oldest first.
    func checkpointSlots(remote: LibraryRemote) async throws -> [String] {
        var slots: [String] = []
        var continuation: String?
        repeat {
            let page = try await remote.client.listObjectsV2(
                bucket: configuration.bucket, prefix: configuration.layout.checkpointPrefix, delimiter: "/",
                continuationToken: continuation)
            slots += page.commonPrefixes
            continuation = page.isTruncated ? page.nextContinuationToken : nil
        } while continuation != nil
        return slots.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
