import AssetStore
import Essentials
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
final class RecordingObserver: LibraryChangeObserver, Sendable {
    private let state = LockedBox<(received: [LibraryChange], waiters: [(Int, CheckedContinuation<Void, Never>)])>(
        ([], []))

    func libraryDidChange(_ change: LibraryChange) {
        let ready = state.withLock { state in
            state.received.append(change)
            let count = state.received.count
            defer { state.waiters.removeAll { $0.0 <= count } }
            return state.waiters.filter { $0.0 <= count }
        }
        for (_, continuation) in ready { continuation.resume() }
    }

    var changes: [LibraryChange] { state.withLock { $0.received } }

    /// Returns once at least `count` changes arrived.
    func waitFor(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let arrived = state.withLock { state in
                if state.received.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if arrived { continuation.resume() }
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
