/// A normalised set of half-open byte ranges, used for the verified parts of a partially downloaded original.
///
/// The ranges are kept sorted, non-empty, non-overlapping and non-adjacent: inserting a range merges it with every
/// range it overlaps or touches. Two sets holding the same bytes are therefore always equal.
package struct ByteRangeSet: Sendable, Hashable, Codable {
    /// The normalised ranges, sorted by lower bound.
    package private(set) var ranges: [Range<Int64>]

    /// An empty set.
    package init() { ranges = [] }

    /// A set holding the union of `ranges` (in any order, overlapping or not; empty ranges are ignored).
    package init<S: Sequence>(_ ranges: S) where S.Element == Range<Int64> {
        self.ranges = []
        for range in ranges { insert(range) }
    }

    /// `true` when the set holds no byte.
    package var isEmpty: Bool { ranges.isEmpty }

    /// The number of bytes the set holds.
    package var totalBytes: Int64 { ranges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) } }

    /// Adds `range`, merging it with the ranges it overlaps or touches. An empty range changes nothing.
    package mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        // First range whose upper bound reaches the new range's lower bound (touching counts).
        let first = firstIndex { $0.upperBound >= range.lowerBound }
        var end = first
        var lower = range.lowerBound
        var upper = range.upperBound
        while end < ranges.count, ranges[end].lowerBound <= upper {
            lower = min(lower, ranges[end].lowerBound)
            upper = max(upper, ranges[end].upperBound)
            end += 1
        }
        ranges.replaceSubrange(first..<end, with: [lower..<upper])
    }

    /// `true` when every byte of `range` is in the set (an empty range is always contained).
    package func contains(_ range: Range<Int64>) -> Bool {
        guard !range.isEmpty else { return true }
        let index = firstIndex { $0.upperBound > range.lowerBound }
        guard index < ranges.count else { return false }
        return ranges[index].lowerBound <= range.lowerBound && ranges[index].upperBound >= range.upperBound
    }

    /// The parts of `range` the set does not hold, sorted and normalised.
    package func missing(in range: Range<Int64>) -> [Range<Int64>] {
        guard !range.isEmpty else { return [] }
        var result: [Range<Int64>] = []
        var cursor = range.lowerBound
        var index = firstIndex { $0.upperBound > range.lowerBound }
        while index < ranges.count, ranges[index].lowerBound < range.upperBound {
            let held = ranges[index]
            if held.lowerBound > cursor { result.append(cursor..<held.lowerBound) }
            cursor = max(cursor, held.upperBound)
            index += 1
        }
        if cursor < range.upperBound { result.append(cursor..<range.upperBound) }
        return result
    }

    /// Binary search: the first index whose range satisfies `predicate` (which must be monotonic).
    private func firstIndex(where predicate: (Range<Int64>) -> Bool) -> Int {
        var low = 0
        var high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if predicate(ranges[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

extension ByteRangeSet {
    /// A compact text form, `"0-100,200-300"` (half-open bounds), used to persist the set.
    package var serialized: String {
        ranges.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ",")
    }

    /// Parses the form written by ``serialized``; `nil` when the text is malformed.
    package init?(serialized text: String) {
        self.init()
        guard !text.isEmpty else { return }
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false)
            guard bounds.count == 2, let lower = Int64(bounds[0]), let upper = Int64(bounds[1]), lower >= 0,
                lower < upper
            else { return nil }
            insert(lower..<upper)
        }
    }
}
