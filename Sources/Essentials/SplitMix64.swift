/// A small, fast, seedable generator (SplitMix64): the same seed gives the same numbers on every run and machine,
/// so sample libraries, benchmark workloads and randomised tests can be replayed from a printed seed.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose stream is determined by `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Skips `count` numbers at once: the generator is then where `count` calls of ``next()`` would have left it.
    package mutating func skip(_ count: Int) {
        state &+= 0x9E37_79B9_7F4A_7C15 &* UInt64(max(0, count))
    }

    /// A number in `0..<bound` (`bound` > 0), by modulo: fast, and uniform enough for workloads and tests.
    package mutating func next(below bound: UInt64) -> UInt64 { next() % bound }

    /// Shuffles `array` in place (Fisher–Yates), deterministically for a given seed.
    package mutating func shuffle<T>(_ array: inout [T]) {
        guard array.count > 1 else { return }
        for index in stride(from: array.count - 1, to: 0, by: -1) {
            array.swapAt(index, Int(next(below: UInt64(index + 1))))
        }
    }
}
