import AssetStore
import Foundation

@testable import CloudAssets

/// A fresh library folder under the temporary directory.
struct LibraryFolder {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("CloudAssetsTests-\(UUID().uuidString)")

    func configuration(historyLimit: Int = 10_000, maxIncrementalChangeCount: Int = 50_000)
        -> AssetLibrary.Configuration
    {
        var configuration = AssetLibrary.Configuration(storeURL: url)
        configuration.bucket = "test"
        configuration.credentials = .anonymous
        configuration.networkPolicy = .offline
        configuration.historyLimit = historyLimit
        configuration.maxIncrementalChangeCount = maxIncrementalChangeCount
        return configuration
    }

    func cleanup() { try? FileManager.default.removeItem(at: url) }
}

/// A listing-style record; `day` sets the creation date.
func testRecord(
    _ name: String, day: Int = 0, favorite: Bool = false, hidden: Bool = false, mediaType: MediaType = .image,
    size: Int64 = 100
) -> AssetRecord {
    AssetRecord(
        key: "originals/\(name)", size: size, etag: "e-\(name)", lastModified: Date(timeIntervalSinceReferenceDate: 0),
        creationDate: Date(timeIntervalSinceReferenceDate: Double(day) * 86_400), mediaType: mediaType,
        pixelWidth: 10, pixelHeight: 10, isFavorite: favorite, isHidden: hidden)
}

/// Collects the changes delivered to it and lets a test wait for a number of them without sleeping.
final class RecordingObserver: LibraryChangeObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var received: [LibraryChange] = []
    private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []

    func libraryDidChange(_ change: LibraryChange) {
        lock.lock()
        received.append(change)
        let count = received.count
        let ready = waiters.filter { $0.0 <= count }
        waiters.removeAll { $0.0 <= count }
        lock.unlock()
        for (_, continuation) in ready { continuation.resume() }
    }

    var changes: [LibraryChange] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// Returns once at least `count` changes arrived.
    func waitFor(_ count: Int) async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if received.count >= count {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append((count, continuation))
                lock.unlock()
            }
        }
    }
}

extension AssetLibrary {
    /// Waits until every change queued so far went through the delivery queue.
    func drainDeliveries() async {
        await withCheckedContinuation { continuation in
            catalog.observers.afterPendingDeliveries { continuation.resume() }
        }
    }
}
