public import Foundation

extension AssetLibrary {
    private var lastSyncURL: URL { configuration.storeURL.appendingPathComponent("last-sync.json") }

    /// When a sync of this library last completed, in any process (kept in `<store>/last-sync.json`).
    public var persistedLastSync: Date? {
        guard let data = try? Data(contentsOf: lastSyncURL),
            let seconds = try? JSONDecoder().decode(Double.self, from: data)
        else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    func recordSyncCompleted(at date: Date) {
        guard let data = try? JSONEncoder().encode(date.timeIntervalSince1970) else { return }
        try? data.write(to: lastSyncURL, options: .atomic)
    }
}
