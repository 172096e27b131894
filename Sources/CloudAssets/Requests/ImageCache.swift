import Essentials
import Foundation

/// Decoded images kept in memory for ``AssetLibrary/startCachingImages(for:targetSize:contentMode:options:)``:
/// least recently used out first, never more than the budget's bytes of pixels in all.
final class ImageCache: Sendable {
    /// One prepared image: which asset version, at which size and fit.
    struct Key: Hashable, Sendable {
        var assetID: Int64
        var etag: String
        var width: Int
        var height: Int
        var contentMode: ImageContentMode
        var resizeMode: ImageResizeMode
        var allowsUpscaling = true
    }

    private struct State {
        var images: [Key: (image: AssetImage, used: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
        /// Preparations under way, by key.
        var preparing: [Key: Task<Void, Never>] = [:]
    }

    private let state = LockedBox(State())

    /// The cached image for `key`, marked as just used.
    func image(for key: Key) -> AssetImage? {
        state.withLock { s in
            guard let entry = s.images[key] else { return nil }
            s.clock += 1
            s.images[key] = (entry.image, s.clock)
            return entry.image
        }
    }

    /// Keeps `image` unless it alone exceeds `budget`; evicts the least recently used until the rest fits.
    func insert(_ image: AssetImage, for key: Key, budget: Int) {
        guard image.byteCount <= budget else { return }
        state.withLock { s in
            if let old = s.images.removeValue(forKey: key) { s.bytes -= old.image.byteCount }
            while s.bytes + image.byteCount > budget, let oldest = s.images.min(by: { $0.value.used < $1.value.used }) {
                s.images[oldest.key] = nil
                s.bytes -= oldest.value.image.byteCount
            }
            s.clock += 1
            s.images[key] = (image, s.clock)
            s.bytes += image.byteCount
        }
    }

    /// Starts `work` for `key` unless it is cached or being prepared.
    func prepare(_ key: Key, _ work: @escaping @Sendable () async -> Void) {
        state.withLock { s in
            guard s.images[key] == nil, s.preparing[key] == nil else { return }
            s.preparing[key] = Task {
                await work()
                self.state.withLock { _ = $0.preparing.removeValue(forKey: key) }
            }
        }
    }

    /// Forgets the images (and stops the preparations) whose key `matches`.
    func remove(where matches: (Key) -> Bool) {
        let stopped = state.withLock { s -> [Task<Void, Never>] in
            for key in s.images.keys where matches(key) {
                s.bytes -= s.images.removeValue(forKey: key)!.image.byteCount
            }
            let keys = s.preparing.keys.filter(matches)
            return keys.compactMap { s.preparing.removeValue(forKey: $0) }
        }
        for task in stopped { task.cancel() }
    }

    /// Bytes of pixels held.
    var byteCount: Int { state.withLock { $0.bytes } }

    /// Preparations under way.
    var preparingCount: Int { state.withLock { $0.preparing.count } }
}
