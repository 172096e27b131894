import Foundation

/// What a `Range` request header asks of a resource of known size (RFC 9110, one range: `bytes=a-b`, `bytes=a-`,
/// `bytes=-n`): what the gallery and the library's playback server answer from.
public enum HTTPByteRange: Equatable, Sendable {
    /// The whole resource: no header, another unit, several ranges, or a header that does not parse (all of which
    /// a server may ignore).
    case whole
    /// These bytes (the end clamped to the size).
    case part(Range<Int64>)
    /// A range that starts at or past the end, or the last 0 bytes.
    case unsatisfiable

    /// The bytes `header` asks of a resource of `size` bytes.
    public init(header: String?, size: Int64) {
        guard let header, header.lowercased().hasPrefix("bytes=") else {
            self = .whole
            return
        }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        func number(_ text: Substring) -> Int64? {
            !text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber } ? Int64(text) : nil
        }
        if first.isEmpty {
            guard let suffix = number(last) else {
                self = .whole
                return
            }
            guard suffix > 0, size > 0 else {
                self = .unsatisfiable
                return
            }
            self = .part(max(0, size - suffix)..<size)
            return
        }
        guard let start = number(first) else {
            self = .whole
            return
        }
        var end = size
        if !last.isEmpty {
            guard let inclusive = number(last), inclusive >= start else {
                self = .whole
                return
            }
            end = inclusive < size - 1 ? inclusive + 1 : size
        }
        self = start < size ? .part(start..<end) : .unsatisfiable
    }

    /// The `Content-Range` of an answer: `bytes a-b/size` for a part, `bytes */size` for an unsatisfiable range.
    public func contentRange(size: Int64) -> String? {
        switch self {
        case .whole: nil
        case .part(let range): "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"
        case .unsatisfiable: "bytes */\(size)"
        }
    }
}
