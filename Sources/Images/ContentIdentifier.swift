/// The identifier that pairs a Live Photo's halves, as a reader accepts it from a stranger's file.
package enum ContentIdentifier {
    /// The longest identifier accepted (Apple's are 36-character UUIDs).
    package static let maxLength = 64

    /// `text` when it is 1 to ``maxLength`` letters, digits and hyphens (trailing NULs and spaces dropped); nil
    /// otherwise — an identifier of any other form is treated as absent, never matched.
    package static func validated(_ text: String) -> String? {
        var value = Substring(text)
        while let last = value.last, last == "\0" || last == " " { value.removeLast() }
        guard !value.isEmpty, value.utf8.count <= maxLength,
            value.utf8.allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D
            })
        else { return nil }
        return value.uppercased()
    }
}
