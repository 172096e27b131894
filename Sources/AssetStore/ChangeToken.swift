/// A position in the store's change sequence. Each committed non-empty transaction advances it by one; it is
/// persisted, so it keeps growing across restarts. Token 0 is an empty library before any change.
public struct ChangeToken: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The sequence number of the last transaction included.
    public let rawValue: Int64

    /// The token of the transaction with this sequence number.
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// Earlier changes have smaller tokens.
    public static func < (lhs: ChangeToken, rhs: ChangeToken) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `ChangeToken(N)`.
    public var description: String { "ChangeToken(\(rawValue))" }
}
