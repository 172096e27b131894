/// Marks a longest strictly increasing subsequence of `values[range]`, ignoring negative entries (absent elements).
///
/// O(m log m) for m present entries, and O(m) with a tight loop when the values are mostly in order (each value is
/// first compared with the current longest tail). Returns, for each position of `range` (offset by
/// `range.lowerBound`), `true` for members of the chosen subsequence and `false` for the rest.
func longestIncreasingSubsequence(_ values: ContiguousArray<Int32>, in range: Range<Int>) -> [Bool] {
    let count = range.count
    var member = [Bool](repeating: false, count: count)
    guard count > 0 else { return member }
    let tailValues = UnsafeMutableBufferPointer<Int32>.allocate(capacity: count)
    let tailPositions = UnsafeMutableBufferPointer<Int32>.allocate(capacity: count)
    let previous = UnsafeMutableBufferPointer<Int32>.allocate(capacity: count)
    defer {
        tailValues.deallocate()
        tailPositions.deallocate()
        previous.deallocate()
    }
    var length = 0
    values.withUnsafeBufferPointer { values in
        let base = range.lowerBound
        for offset in 0..<count {
            let value = values[base + offset]
            if value < 0 { continue }
            if length == 0 || value > tailValues[length - 1] {
                previous[offset] = length > 0 ? tailPositions[length - 1] : -1
                tailValues[length] = value
                tailPositions[length] = Int32(offset)
                length += 1
            } else {
                // First tail >= value.
                var low = 0
                var high = length - 1
                while low < high {
                    let mid = (low + high) / 2
                    if tailValues[mid] < value { low = mid + 1 } else { high = mid }
                }
                previous[offset] = low > 0 ? tailPositions[low - 1] : -1
                tailValues[low] = value
                tailPositions[low] = Int32(offset)
            }
        }
    }
    var cursor = length > 0 ? Int(tailPositions[length - 1]) : -1
    while cursor >= 0 {
        member[cursor] = true
        cursor = Int(previous[cursor])
    }
    return member
}
