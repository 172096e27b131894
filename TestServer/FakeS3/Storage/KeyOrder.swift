/// S3 orders keys by their UTF-8 bytes, and two keys are the same only when their bytes are;
/// Swift's `String` comparison uses canonical equivalence instead, so storage keys objects by bytes.
struct KeyBytes: Hashable, Comparable, Sendable {
    let bytes: [UInt8]

    init(_ key: String) { bytes = Array(key.utf8) }
    init(bytes: [UInt8]) { self.bytes = bytes }

    static func < (lhs: KeyBytes, rhs: KeyBytes) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    func hasPrefix(_ prefix: [UInt8]) -> Bool {
        bytes.count >= prefix.count && bytes[0..<prefix.count].elementsEqual(prefix)
    }
}
