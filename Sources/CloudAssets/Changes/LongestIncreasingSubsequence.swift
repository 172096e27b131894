/// Marks a longest strictly increasing subsequence of `values`, ignoring negative entries (absent elements).
///
/// O(m log m) for m present entries, and O(m) when the values are already almost in order (each new value is
/// first compared with the current longest tail). Returns a flag per position: `true` for members of the chosen
/// subsequence, `false` for the rest (including absent entries).
func longestIncreasingSubsequence(_ values: ContiguousArray<Int32>) -> ContiguousArray<Bool> {
    let count = values.count
    var tailValues = ContiguousArray<Int32>()
    var tailPositions = ContiguousArray<Int32>()
    var previous = ContiguousArray<Int32>(repeating: -1, count: count)
    values.withUnsafeBufferPointer { values in
        previous.withUnsafeMutableBufferPointer { previous in
            for position in 0..<count {
                let value = values[position]
                if value < 0 { continue }
                if let last = tailValues.last, value <= last {
                    // Binary search for the first tail >= value.
                    var low = 0
                    var high = tailValues.count - 1
                    while low < high {
                        let mid = (low + high) / 2
                        if tailValues[mid] < value { low = mid + 1 } else { high = mid }
                    }
                    previous[position] = low > 0 ? tailPositions[low - 1] : -1
                    tailValues[low] = value
                    tailPositions[low] = Int32(position)
                } else {
                    previous[position] = tailPositions.last ?? -1
                    tailValues.append(value)
                    tailPositions.append(Int32(position))
                }
            }
        }
    }
    var member = ContiguousArray<Bool>(repeating: false, count: count)
    var cursor = tailPositions.last ?? -1
    while cursor >= 0 {
        member[Int(cursor)] = true
        cursor = previous[Int(cursor)]
    }
    return member
}
