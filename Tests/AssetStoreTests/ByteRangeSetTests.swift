import AssetStore
import Essentials
import PropertyBased
import TestSupport
import Testing

@Suite(.heavy) struct ByteRangeSetTests {
    @Test func insertMergesOverlappingAndTouchingRanges() {
        var set = ByteRangeSet()
        set.insert(10..<20)
        set.insert(30..<40)
        set.insert(20..<25)
        #expect(set.ranges == [10..<25, 30..<40])
        set.insert(5..<35)
        #expect(set.ranges == [5..<40])
        #expect(set.totalBytes == 35)
    }

    @Test func missingReturnsTheUncoveredParts() {
        let set = ByteRangeSet([0..<10, 20..<30])
        #expect(set.missing(in: 5..<25) == [10..<20])
        #expect(set.missing(in: 0..<10).isEmpty)
        #expect(set.missing(in: 30..<35) == [30..<35])
        #expect(set.contains(21..<29))
        #expect(!set.contains(9..<11))
    }

    @Test func serializedFormRoundTripsAndRejectsGarbage() {
        let set = ByteRangeSet([0..<10, 20..<30])
        #expect(ByteRangeSet(serialized: set.serialized) == set)
        #expect(ByteRangeSet(serialized: "5-2") == nil)
        #expect(ByteRangeSet(serialized: "a-b") == nil)
    }

    /// The set behaves like the plain set of the bytes it covers.
    @Test func matchesABruteForceModelOfBytes() async {
        let rangeGen = zip(Gen.int(in: 0...60), Gen.int(in: 0...12)).map { Int64($0)..<Int64($0 + $1) }
        await propertyCheck(input: rangeGen.array(of: 0...8), rangeGen) { ranges, probe in
            let set = ByteRangeSet(ranges)
            var bytes = Set<Int64>()
            for range in ranges { bytes.formUnion(range) }
            #expect(set.totalBytes == Int64(bytes.count))
            #expect(set.contains(probe) == Set(probe).isSubset(of: bytes))
            let missing = set.missing(in: probe).reduce(into: Set<Int64>()) { $0.formUnion($1) }
            #expect(missing == Set(probe).subtracting(bytes))
            // Normalised: sorted, non-empty, separated by at least one byte.
            for (a, b) in zip(set.ranges, set.ranges.dropFirst()) { #expect(a.upperBound < b.lowerBound) }
            #expect(set.ranges.allSatisfy { !$0.isEmpty })
        }
    }
}
