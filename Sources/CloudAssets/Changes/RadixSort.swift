/// Sorts `elements` by an unsigned 128-bit image of each, (`high`, `low`) compared in that order: stably, with a
/// least-significant-digit radix sort of 11-bit digits over a permutation, then one gather.
///
/// For the large changes of ``ChangeDetailsEngine``: 100,000 (date, identifier) pairs sort about three times
/// faster than with comparisons. One read of the images counts every digit at once; a digit every element shares
/// (the top bits of identifiers, of dates within a few years) costs no pass.
/// - Parameter image: Must be monotone: `a` before `b` in the intended order exactly when `image(a) < image(b)`
///   compared as (`high`, `low`).
func radixSort<Element>(_ elements: inout [Element], by image: (Element) -> (high: UInt64, low: UInt64)) {
    let count = elements.count
    guard count > 1 else { return }
    precondition(count <= Int(Int32.max), "too many elements to sort by permutation")
    let digitBits = 11
    let buckets = 1 << digitBits
    let digitsPerWord = (64 + digitBits - 1) / digitBits
    let digits = 2 * digitsPerWord
    var high = [UInt64](repeating: 0, count: count)
    var low = [UInt64](repeating: 0, count: count)
    var histograms = [Int](repeating: 0, count: digits * buckets)
    histograms.withUnsafeMutableBufferPointer { histograms in
        for index in 0..<count {
            let (h, l) = image(elements[index])
            high[index] = h
            low[index] = l
            for digit in 0..<digitsPerWord {
                let shift = UInt64(digit * digitBits)
                histograms[digit * buckets + Int((l >> shift) & UInt64(buckets - 1))] += 1
                histograms[(digitsPerWord + digit) * buckets + Int((h >> shift) & UInt64(buckets - 1))] += 1
            }
        }
    }
    var order = [Int32](unsafeUninitializedCapacity: count) { buffer, initialized in
        for index in 0..<count { buffer[index] = Int32(index) }
        initialized = count
    }
    var scratch = [Int32](repeating: 0, count: count)
    var offsets = [Int](repeating: 0, count: buckets)
    for digit in 0..<digits {
        let base = digit * buckets
        // A digit that every element shares leaves the order as it is.
        var shared = false
        var running = 0
        for bucket in 0..<buckets {
            let inBucket = histograms[base + bucket]
            if inBucket == count { shared = true }
            offsets[bucket] = running
            running += inBucket
        }
        if shared { continue }
        let shift = UInt64((digit % digitsPerWord) * digitBits)
        let words = digit < digitsPerWord ? low : high
        words.withUnsafeBufferPointer { words in
            order.withUnsafeBufferPointer { from in
                scratch.withUnsafeMutableBufferPointer { to in
                    offsets.withUnsafeMutableBufferPointer { offsets in
                        for position in 0..<count {
                            let element = from[position]
                            let bucket = Int((words[Int(element)] >> shift) & UInt64(buckets - 1))
                            to[offsets[bucket]] = element
                            offsets[bucket] += 1
                        }
                    }
                }
            }
        }
        swap(&order, &scratch)
    }
    let unsorted = elements
    for position in 0..<count { elements[position] = unsorted[Int(order[position])] }
}

/// `value` as an unsigned integer in the same order, equal values giving equal bits (-0 is 0). NaN has no place
/// in an order and is not expected.
func orderedBits(_ value: Double) -> UInt64 {
    // A negative value's bits all flip (larger magnitudes come first), a positive one's sign bit is set.
    let bits = (value == 0 ? 0 : value).bitPattern
    return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
}

/// `value` as an unsigned integer in the same order.
func orderedBits(_ value: Int64) -> UInt64 { UInt64(bitPattern: value) ^ (1 << 63) }
