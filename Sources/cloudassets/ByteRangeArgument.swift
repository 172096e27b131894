import Foundation

/// The `--range a-b` value of `get`.
enum ByteRangeArgument {
    /// `a-b` (inclusive, as in HTTP) → `a..<b+1`.
    static func parse(_ text: String) throws -> Range<Int64> {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let a = Int64(parts[0]), let b = Int64(parts[1]), a >= 0, b >= a else {
            throw CLIError("range must be a-b with 0 <= a <= b, not \(text)")
        }
        return a..<(b + 1)
    }
}
