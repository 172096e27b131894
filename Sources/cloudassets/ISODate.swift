import Foundation

/// Dates as ISO 8601 in UTC to the second (`2024-05-01T12:00:00Z`, as `ISO8601DateFormatter` writes them),
/// without a formatter object.
enum ISODate {
    static func string(_ date: Date) -> String {
        var seconds = time_t(floor(date.timeIntervalSince1970))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}
