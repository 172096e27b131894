package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Formats and parses the date forms S3 uses, without locale-dependent formatters: RFC 1123 in headers, ISO 8601
/// in XML. Shared by the client and the fake server.
package enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func components(_ date: Date) -> tm {
        var time = time_t(Int64(date.timeIntervalSince1970.rounded(.down)))
        var value = tm()
        gmtime_r(&time, &value)
        return value
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    package static func rfc1123(_ date: Date) -> String {
        let t = components(date)
        var out = [UInt8]()
        out.reserveCapacity(29)
        out += days[Int(t.tm_wday)].utf8
        out += ", ".utf8
        ASCII.appendDecimal(Int(t.tm_mday), digits: 2, to: &out)
        out.append(UInt8(ascii: " "))
        out += months[Int(t.tm_mon)].utf8
        out.append(UInt8(ascii: " "))
        ASCII.appendDecimal(Int(t.tm_year) + 1900, digits: 4, to: &out)
        out.append(UInt8(ascii: " "))
        ASCII.appendDecimal(Int(t.tm_hour), digits: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        ASCII.appendDecimal(Int(t.tm_min), digits: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        ASCII.appendDecimal(Int(t.tm_sec), digits: 2, to: &out)
        out += " GMT".utf8
        return String(decoding: out, as: UTF8.self)
    }

    private static let cachedNow = LockedBox<(second: Int64, text: String)>((-1, ""))

    /// The current time in RFC 1123 form, formatted at most once per second (the `Date` header).
    package static func now() -> String {
        let second = Int64(Date().timeIntervalSince1970)
        if let hit = cachedNow.withLock({ $0.second == second ? $0.text : nil }) { return hit }
        let text = rfc1123(Date(timeIntervalSince1970: TimeInterval(second)))
        cachedNow.withLock { $0 = (second, text) }
        return text
    }

    /// `2024-05-01T12:00:00.000Z`: the date's nearest millisecond (a date made of whole milliseconds, as stores
    /// keep them, comes back as those; subtracting whole seconds in binary floating point dropped one at times).
    package static func iso8601(_ date: Date) -> String {
        let total = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var (seconds, millis) = (total / 1000, Int(total % 1000))
        if millis < 0 { (seconds, millis) = (seconds - 1, millis + 1000) }
        let t = components(Date(timeIntervalSince1970: TimeInterval(seconds)))
        var out = [UInt8]()
        out.reserveCapacity(24)
        ASCII.appendDecimal(Int(t.tm_year) + 1900, digits: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        ASCII.appendDecimal(Int(t.tm_mon) + 1, digits: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        ASCII.appendDecimal(Int(t.tm_mday), digits: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        ASCII.appendDecimal(Int(t.tm_hour), digits: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        ASCII.appendDecimal(Int(t.tm_min), digits: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        ASCII.appendDecimal(Int(t.tm_sec), digits: 2, to: &out)
        out.append(UInt8(ascii: "."))
        ASCII.appendDecimal(min(999, max(0, millis)), digits: 3, to: &out)
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses RFC 1123 (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`)
    /// and asctime (`Sun Nov  6 08:49:37 1994`) dates; nil when malformed.
    package static func parse(_ string: String) -> Date? {
        if let date = parseFixdate(string) { return date }
        return parseTokens(string)
    }

    /// The form every server sends, `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate with two-digit fields), read from
    /// its bytes; nil for anything else, which ``parseTokens(_:)`` then reads (this runs for every response head). A
    /// date it gives is the one `parseTokens` gives.
    package static func parseFixdate(_ string: String) -> Date? {
        var text = string
        return text.withUTF8 { b -> Date? in
            guard b.count == 29, b[3] == UInt8(ascii: ","), b[4] == 0x20, b[7] == 0x20, b[11] == 0x20, b[16] == 0x20,
                b[19] == UInt8(ascii: ":"), b[22] == UInt8(ascii: ":"), b[25] == 0x20, b[26] == UInt8(ascii: "G"),
                b[27] == UInt8(ascii: "M"), b[28] == UInt8(ascii: "T"),
                b[0..<3].allSatisfy({ $0 != 0x20 && $0 != UInt8(ascii: ",") })
            else { return nil }
            func number(_ range: Range<Int>) -> Int? {
                var value = 0
                for i in range {
                    guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                    value = value * 10 + Int(b[i] - 0x30)
                }
                return value
            }
            guard let day = number(5..<7), let year = number(12..<16), let hour = number(17..<19),
                let minute = number(20..<22), let second = number(23..<25),
                let month = monthBytes.firstIndex(where: { $0[0] == b[8] && $0[1] == b[9] && $0[2] == b[10] }),
                (1...31).contains(day), (1...9999).contains(year), hour < 24, minute < 60, second < 61
            else { return nil }
            var value = tm()
            value.tm_year = Int32(year - 1900)
            value.tm_mon = Int32(month)
            value.tm_mday = Int32(day)
            value.tm_hour = Int32(hour)
            value.tm_min = Int32(minute)
            value.tm_sec = Int32(second)
            return Date(timeIntervalSince1970: TimeInterval(timegm(&value)))
        }
    }

    private static let monthBytes = months.map { Array($0.utf8) }

    /// Every form ``parse(_:)`` accepts, read token by token.
    package static func parseTokens(_ string: String) -> Date? {
        let tokens = string.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        var day: Int?
        var month: Int?
        var year: Int?
        var time: (Int, Int, Int)?
        switch tokens.count {
        case 6 where tokens[5] == "GMT":  // IMF-fixdate
            (day, month, year) = (Int(tokens[1]), months.firstIndex(of: tokens[2]), Int(tokens[3]))
            time = clock(tokens[4])
        case 4 where tokens[3] == "GMT":  // RFC 850
            let parts = tokens[1].split(separator: "-").map(String.init)
            guard parts.count == 3, parts[2].utf8.count == 2, let yy = Int(parts[2]), yy >= 0 else { return nil }
            (day, month, year) = (Int(parts[0]), months.firstIndex(of: parts[1]), yy < 70 ? 2000 + yy : 1900 + yy)
            time = clock(tokens[2])
        case 5:  // asctime
            (day, month, year) = (Int(tokens[2]), months.firstIndex(of: tokens[1]), Int(tokens[4]))
            time = clock(tokens[3])
        default:
            return nil
        }
        // A year of four digits at most: the forms hold no other, and a longer one would overflow `tm`'s field.
        guard let day, let month, let year, let time, (1...31).contains(day), (1...9999).contains(year) else {
            return nil
        }
        var value = tm()
        value.tm_year = Int32(year - 1900)
        value.tm_mon = Int32(month)
        value.tm_mday = Int32(day)
        value.tm_hour = Int32(time.0)
        value.tm_min = Int32(time.1)
        value.tm_sec = Int32(time.2)
        return Date(timeIntervalSince1970: TimeInterval(timegm(&value)))
    }

    /// `HH:MM:SS`: three fields of one or two ASCII digits each, in range. (Fields that were not numbers were
    /// dropped and a negative one let through: `8:-4444…:6` trapped converting to `tm` — Fuzz/regressions/http-date.)
    private static func clock(_ text: String) -> (Int, Int, Int)? {
        let fields = text.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard fields.count == 3,
            fields.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy { $0 >= 48 && $0 <= 57 } })
        else { return nil }
        let p = fields.map { $0.reduce(0) { $0 * 10 + Int($1 - 48) } }
        guard p[0] < 24, p[1] < 60, p[2] < 61 else { return nil }
        return (p[0], p[1], p[2])
    }

    /// ISO 8601 in UTC as in listings: `2009-10-12T17:50:30.000Z` (an internet date-time ending in `Z`).
    package static func parseISO8601(_ string: String) -> Date? {
        string.utf8.last == UInt8(ascii: "Z") ? parseInternetDateTime(string) : nil
    }

    /// An internet date-time (RFC 3339, ISO 8601's profile): `YYYY-MM-DDTHH:MM:SS`, an optional fraction of a
    /// second (any number of digits; the first nine count), then `Z` or an offset `±HH:MM` (or `±HHMM`); nil for
    /// anything else. Parsed by hand: Foundation's `ISO8601DateFormatter` hands the text to ICU, which crashed
    /// the process (SIGFPE) on a fraction of a hundred digits with an offset — text any object's metadata or a
    /// credential source can carry (Fuzz/regressions/credentials).
    package static func parseInternetDateTime(_ string: String) -> Date? {
        let b = Array(string.utf8)
        guard b.count >= 20, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54 || b[10] == 0x74, b[13] == 0x3A,
            b[16] == 0x3A
        else { return nil }
        guard let y = digits(b, 0..<4), let mo = digits(b, 5..<7), let d = digits(b, 8..<10),
            let h = digits(b, 11..<13), let mi = digits(b, 14..<16), let s = digits(b, 17..<19)
        else { return nil }
        var index = 19
        var fraction = 0.0
        if b[index] == 0x2E {
            let start = index + 1
            var end = start
            while end < b.count, b[end] >= 48, b[end] <= 57 { end += 1 }
            guard end > start, let f = digits(b, start..<min(end, start + 9)) else { return nil }
            fraction = Double(f) / pow(10, Double(min(end, start + 9) - start))
            index = end
        }
        guard index < b.count else { return nil }
        var offset = 0
        switch b[index] {
        case 0x5A, 0x7A:
            guard index == b.count - 1 else { return nil }
        case 0x2B, 0x2D:
            let zone = b[(index + 1)...]
            let colon = zone.count == 5 && zone[zone.startIndex + 2] == 0x3A
            guard zone.count == 4 || colon, let zh = digits(b, (index + 1)..<(index + 3)),
                let zm = digits(b, (index + (colon ? 4 : 3))..<b.count), zh < 24, zm < 60
            else { return nil }
            offset = (zh * 60 + zm) * 60 * (b[index] == 0x2D ? -1 : 1)
        default:
            return nil
        }
        return make(year: y, month: mo, day: d, hour: h, minute: mi, second: s, fraction: fraction)
            .map { $0.addingTimeInterval(TimeInterval(-offset)) }
    }

    /// SigV4's `x-amz-date`: `yyyyMMdd'T'HHmmss'Z'`; nil when malformed.
    package static func parseAmzDate(_ string: String) -> Date? {
        let b = Array(string.utf8)
        guard b.count == 16, b[8] == UInt8(ascii: "T"), b[15] == UInt8(ascii: "Z"), let y = digits(b, 0..<4),
            let mo = digits(b, 4..<6), let d = digits(b, 6..<8), let h = digits(b, 9..<11),
            let mi = digits(b, 11..<13), let s = digits(b, 13..<15)
        else { return nil }
        return make(year: y, month: mo, day: d, hour: h, minute: mi, second: s, fraction: 0)
    }

    /// The decimal number the ASCII digits `bytes[range]` spell; nil when one is not a digit or the number does not
    /// fit an `Int`.
    private static func digits(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        var value = 0
        for i in range {
            guard bytes[i] >= 48, bytes[i] <= 57 else { return nil }
            let (times, overflowed) = value.multipliedReportingOverflow(by: 10)
            guard !overflowed else { return nil }
            value = times + Int(bytes[i] - 48)
        }
        return value
    }

    private static func make(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, fraction: Double)
        -> Date?
    {
        guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        var t = tm()
        t.tm_year = Int32(year - 1900)
        t.tm_mon = Int32(month - 1)
        t.tm_mday = Int32(day)
        t.tm_hour = Int32(hour)
        t.tm_min = Int32(minute)
        t.tm_sec = Int32(second)
        return Date(timeIntervalSince1970: TimeInterval(timegm(&t)) + fraction)
    }
}
