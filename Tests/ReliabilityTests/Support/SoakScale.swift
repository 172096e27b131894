import Essentials
import Foundation

/// How big a reliability run is: the short form runs in `make test` (seconds); the full form runs with
/// `CLOUDASSETS_SOAK=full` (`make soak`), bounded by ``timeBudget``.
struct SoakScale: Sendable {
    /// True when `CLOUDASSETS_SOAK=full`.
    let isFull: Bool
    /// The RNG seed: `CLOUDASSETS_SOAK_SEED` when set (to replay a run), otherwise drawn at random.
    let seed: UInt64

    static let current = SoakScale()

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        isFull = environment["CLOUDASSETS_SOAK"] == "full"
        seed = environment["CLOUDASSETS_SOAK_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max >> 1)
    }

    /// Picks the short or the full figure.
    func pick<T>(short: T, full: T) -> T { isFull ? full : short }

    /// Wall-clock budget of one full suite; it stops by itself when the budget is spent.
    var timeBudget: TimeInterval { isFull ? 180 : 60 }
}

/// The package's SplitMix64 with the soak's helpers, so that a failing run can be replayed from its printed seed.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { generator.next() }

    /// `count` pseudo-random bytes.
    mutating func bytes(_ count: Int) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            var i = 0
            while i < raw.count {
                var word = next()
                for _ in 0..<8 where i < raw.count {
                    raw[i] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    i += 1
                }
            }
        }
        return data
    }
}
