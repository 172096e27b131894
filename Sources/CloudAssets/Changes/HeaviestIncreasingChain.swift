import Foundation

/// Marks a heaviest strictly increasing subsequence of `ranks` (distinct values in `0..<ranks.count`), element
/// `i` weighing `weight(i)` (> 0): `true` for its members. O(m log m) with a Fenwick tree of prefix maxima.
func heaviestIncreasingChain(_ ranks: [Int32], weight: (Int) -> Int) -> [Bool] {
    let count = ranks.count
    var member = [Bool](repeating: false, count: count)
    guard count > 0 else { return member }
    // Node i (1-based) covers ranks (i - lowbit(i), i]: the heaviest chain ending at one of them, and its end.
    var nodeWeight = [Int](repeating: 0, count: count + 1)
    var nodeEnd = [Int32](repeating: -1, count: count + 1)
    var previous = [Int32](repeating: -1, count: count)
    var top = (weight: 0, element: Int32(-1))
    nodeWeight.withUnsafeMutableBufferPointer { nodeWeight in
        nodeEnd.withUnsafeMutableBufferPointer { nodeEnd in
            for element in 0..<count {
                // The heaviest chain over ranks below this one.
                var node = Int(ranks[element])
                var best = 0
                var end: Int32 = -1
                while node > 0 {
                    if nodeWeight[node] > best {
                        best = nodeWeight[node]
                        end = nodeEnd[node]
                    }
                    node &= node - 1
                }
                previous[element] = end
                best += weight(element)
                if best > top.weight { top = (best, Int32(element)) }
                node = Int(ranks[element]) + 1
                while node <= count {
                    if best > nodeWeight[node] {
                        nodeWeight[node] = best
                        nodeEnd[node] = Int32(element)
                    }
                    node += node & -node
                }
            }
        }
    }
    var cursor = top.element
    while cursor >= 0 {
        member[Int(cursor)] = true
        cursor = previous[Int(cursor)]
    }
    return member
}
