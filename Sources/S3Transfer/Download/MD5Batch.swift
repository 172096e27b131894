import CDigest

/// The MD5s of whole small bodies that finished in the same pass of the engine, computed together sixteen at a
/// time (one message per lane of an AVX-512 register: ~3 µs per 16 KiB body instead of ~27 µs one by one).
///
/// Bodies are added by handlers (``HTTPBatchedCompletion``) on the engine thread just before they are told of
/// their end; ``run()`` hashes them and hands each hasher its digest. A body whose batch does not run (fewer
/// than ``minimumCount`` finished together, or a CPU without AVX-512) is hashed the ordinary way when it is
/// verified. Engine thread only.
final class MD5Batch {
    /// Whether this CPU runs the sixteen-lane MD5.
    static let isAvailable = cdigest_md5_x16_available() == 1
    /// Below this many bodies one lane-parallel pass costs more than hashing them one by one: a pass over
    /// 16 KiB bodies takes ~40 µs however many lanes are used, one body alone ~27 µs (C micro-benchmark).
    static let minimumCount = 2

    private var hashers: [IntegrityHasher] = []

    /// Adds a hasher whose ``IntegrityHasher/bodyForBatchedMD5`` is complete.
    func add(_ hasher: IntegrityHasher) { hashers.append(hasher) }

    /// Hashes what was added (when enough was) and empties the batch.
    func run() {
        defer { hashers.removeAll(keepingCapacity: true) }
        guard hashers.count >= Self.minimumCount else { return }
        // Lanes run in lock step for as many blocks as the longest body: group bodies of similar length.
        let bodies = hashers.compactMap { hasher in hasher.bodyForBatchedMD5.map { (hasher, $0) } }
            .sorted { $0.1.count < $1.1.count }
        var start = 0
        var pointers = [UnsafePointer<UInt8>?](repeating: nil, count: 16)
        var lengths = [Int](repeating: 0, count: 16)
        var digests = [UInt8](repeating: 0, count: 16 * 16)
        while start < bodies.count {
            let group = bodies[start..<min(start + 16, bodies.count)]
            for (lane, entry) in group.enumerated() {
                pointers[lane] = entry.1.baseAddress?.assumingMemoryBound(to: UInt8.self)
                lengths[lane] = entry.1.count
            }
            cdigest_md5_x16(pointers, lengths, group.count, &digests)
            for (lane, entry) in group.enumerated() {
                entry.0.setBatchedMD5(Array(digests[lane * 16..<(lane + 1) * 16]))
            }
            start += group.count
        }
    }
}

/// A response handler with work for the engine's per-pass ``MD5Batch`` (called on the engine thread for a
/// transfer that completed successfully, before its ``HTTPResponseHandler/didComplete(_:)``).
protocol HTTPBatchedCompletion: AnyObject {
    func addBatchedWork(to batch: MD5Batch)
}
