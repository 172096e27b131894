/// Why an image could not be read, decoded, encoded or rewritten. Every failure of this module is one of these;
/// no input makes it trap.
package enum ImageError: Error, Sendable, Hashable {
    /// The bytes are not JPEG, PNG or HEIF (or a variant this build cannot decode).
    case unsupportedFormat
    /// The file ends before its headers or its image data do.
    case truncated
    /// The file is malformed; the text says where (for logs, not for users).
    case corrupt(String)
    /// The declared size is above the caller's pixel limit; refused before any pixel was allocated.
    case tooLarge(width: Int, height: Int, limit: Int)
    /// The caller's cancellation check returned true.
    case cancelled
    /// The codec library failed for a reason other than the data (out of memory, no encoder).
    case codec(String)
    /// Adjustment data in a format or format version this build does not understand: refused, never guessed.
    case unsupportedAdjustments(formatIdentifier: String, formatVersion: String)
    /// Adjustment data of a known format that cannot be applied: malformed, unknown fields, values out of range,
    /// a crop outside the image. The text says which (for logs and for users).
    case invalidAdjustments(String)
    /// The rendered file could not be written (the text names the path and the errno).
    case output(String)
}

/// The text in a NUL-terminated C buffer.
func cText(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
