/// A `Range: bytes=…` header, interpreted the way S3 does.
package enum ByteRangeRequest: Equatable {
    /// `bytes=a-b` or `bytes=a-` (`last` nil).
    case from(first: Int64, last: Int64?)
    /// `bytes=-n`: the last n bytes.
    case suffix(length: Int64)

    /// The outcome of applying a range to an object of a given size.
    package enum Resolution: Equatable {
        /// Serve the whole object with 200 (no range, or one S3 ignores).
        case full
        /// Serve these bytes with 206.
        case partial(Range<Int64>)
        /// Answer 416 `InvalidRange`.
        case unsatisfiable
    }

    /// Parses a single `bytes=` range. Returns nil for a header S3 ignores (malformed, another unit,
    /// several ranges), which means the whole object is served with 200.
    package init?(header: String) {
        let value = header.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes=") else { return nil }
        let spec = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let a = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let b = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        func number(_ s: String) -> Int64? {
            guard !s.isEmpty, s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            return Int64(s)
        }
        if a.isEmpty {
            guard let n = number(b) else { return nil }
            self = .suffix(length: n)
        } else {
            guard let first = number(a) else { return nil }
            if b.isEmpty {
                self = .from(first: first, last: nil)
            } else {
                guard let last = number(b), last >= first else { return nil }
                self = .from(first: first, last: last)
            }
        }
    }

    /// The `Content-Range` value of a 206 answer: `bytes FIRST-LAST/SIZE` (`range` non-empty, within `size`).
    package static func contentRange(_ range: Range<Int64>, size: Int64) -> String {
        "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"
    }

    /// Applies the range to an object of `size` bytes: the end is clamped to the object; a start at
    /// or past the end, an empty suffix, or any range on an empty object is unsatisfiable.
    package func resolve(size: Int64) -> Resolution {
        if size == 0 { return .unsatisfiable }
        switch self {
        case .from(let first, let last):
            guard first < size else { return .unsatisfiable }
            let end = min(last ?? (size - 1), size - 1)
            return .partial(first..<(end + 1))
        case .suffix(let length):
            guard length > 0 else { return .unsatisfiable }
            return .partial(max(0, size - length)..<size)
        }
    }
}
