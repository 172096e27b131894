import Essentials
public import Foundation

/// When a sync of a library last completed and what it did (``AssetLibrary/lastSync``).
public struct LastSync: Sendable, Hashable, Codable {
    /// When it completed (this computer's clock).
    public let date: Date
    /// What it did. Empty for a sync recorded by an older version, which kept the date only.
    public let summary: SyncSummary
}

extension SyncEngine {
    private var lastSyncURL: URL { configuration.storeURL.appendingPathComponent("last-sync.json") }

    /// ``AssetLibrary/lastSync``.
    var lastSync: LastSync? {
        // try?: no record: nil, as documented
        guard let data = try? LocalFile.read(lastSyncURL) else { return nil }
        // try?: an earlier format: read below
        if let last = try? JSONDecoder().decode(LastSync.self, from: data) { return last }
        // Written by an earlier version: the date alone (seconds since 1970).
        guard let seconds = try? JSONDecoder().decode(Double.self, from: data) else { return nil }
        return LastSync(date: Date(timeIntervalSince1970: seconds), summary: SyncSummary())
    }

    /// Records a completed sync for ``lastSync`` (atomically replaced; a failure to write loses only the record).
    func recordSyncCompleted(_ last: LastSync) {
        // try?: encoding a date and numbers cannot fail
        guard let data = try? JSONEncoder().encode(last) else { return }
        // try?: loses only the record (documented above)
        try? LocalFile.replace(lastSyncURL, with: data)
    }
}
